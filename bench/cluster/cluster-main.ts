// `npm run cluster -- --daemons 3 [--config FILE]`: a cluster on loopback (Redis, N daemons, nginx)
// until SIGINT/SIGTERM. Prints one "cluster ready: URL" line once every part answers, then the pids.

import { startLocalCluster } from './local-cluster.js';

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: npm run cluster -- [--daemons N (1-32, default 3)] [--config FILE]\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let daemons = 3;
  let configFile: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = args[i + 1];
    if (arg === '--daemons') {
      daemons = Number(value);
      if (!Number.isInteger(daemons) || daemons < 1 || daemons > 32) usage(`--daemons must be an integer between 1 and 32, got ${value ?? 'nothing'}`);
      i++;
    } else if (arg === '--config') {
      if (!value) usage('--config needs a file');
      configFile = value;
      i++;
    } else if (arg === '--help' || arg === '-h') usage('starts Redis, N daemons and nginx on loopback');
    else usage(`unknown argument ${arg}`);
  }
  const cluster = await startLocalCluster({ daemons, ...(configFile ? { configFile } : {}) });
  const out = process.stdout;
  out.write(`cluster ready: ${cluster.url}\n`);
  for (const d of cluster.daemons) out.write(`daemon ${d.index + 1}: pid ${d.pid} http://${d.address}/mcp\n`);
  out.write(`nginx: pid ${cluster.nginx.pid ?? '?'} port ${cluster.nginxPort}\n`);
  out.write(`redis: pid ${cluster.redis().pid ?? '?'} ${cluster.redisUrl}\n`);
  out.write(`data: ${cluster.dir} (skills/, workspace/, logs/); stop with Ctrl-C\n`);
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    out.write(`${signal}: stopping the cluster\n`);
    cluster.stop().then(
      () => {
        out.write(`stopped; data kept in ${cluster.dir}\n`);
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`stop failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A daemon that dies on its own is reported (kill -9 in a failover trial), the cluster stays up.
  for (const d of cluster.daemons) void d.exited.then(() => !stopping && out.write(`daemon ${d.index + 1} (pid ${d.pid}) exited\n`));
}

main().catch((error: unknown) => {
  process.stderr.write(`cluster failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
