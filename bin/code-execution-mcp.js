#!/usr/bin/env node
// The code-execution-mcp command: a shim over the build output (npm run build → dist/).
let cli;
try {
  cli = await import('../dist/src/cli/main.js');
} catch (error) {
  if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/src/cli/main.js')) {
    console.error('code-execution-mcp: the build output is missing; run "npm run build" first (npm start builds it when it is missing)');
    process.exit(2);
  }
  throw error;
}
await cli.run();
