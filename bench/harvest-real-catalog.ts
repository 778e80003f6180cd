// Harvests the tool lists of public MCP server packages into test/fixtures/real-catalog/tools.json,
// the real catalog the search evaluation and the token benchmark run on. A manual step, not run
// in CI (it needs the packages and the registry):
//
//   mkdir /tmp/harvest && cd /tmp/harvest && npm init -y && npm install --ignore-scripts PACKAGE...
//   npm run build && node dist/bench/harvest-real-catalog.js /tmp/harvest
//
// Each server is started over stdio with dummy credentials (no network call is needed to list
// tools) and asked for tools/list through the real MCP SDK client; versions are recorded.

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** Package, the server name it gets in the catalog, extra arguments, dummy environment. */
const SERVERS: [string, string, string[], Record<string, string>][] = [
  ['@modelcontextprotocol/server-github', 'github', [], { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_dummy' }],
  ['@modelcontextprotocol/server-gitlab', 'gitlab', [], { GITLAB_PERSONAL_ACCESS_TOKEN: 'dummy', GITLAB_API_URL: 'https://gitlab.example.com/api/v4' }],
  ['@modelcontextprotocol/server-slack', 'slack', [], { SLACK_BOT_TOKEN: 'xoxb-dummy', SLACK_TEAM_ID: 'T0000' }],
  ['@modelcontextprotocol/server-postgres', 'postgres', ['postgresql://dummy@127.0.0.1:1/dummy'], {}],
  ['@modelcontextprotocol/server-brave-search', 'brave-search', [], { BRAVE_API_KEY: 'dummy' }],
  ['@modelcontextprotocol/server-google-maps', 'google-maps', [], { GOOGLE_MAPS_API_KEY: 'dummy' }],
  ['@modelcontextprotocol/server-sequential-thinking', 'sequential-thinking', [], {}],
  ['@modelcontextprotocol/server-redis', 'redis', ['redis://127.0.0.1:1'], {}],
  ['@modelcontextprotocol/server-aws-kb-retrieval', 'aws-kb-retrieval', [], { AWS_ACCESS_KEY_ID: 'dummy', AWS_SECRET_ACCESS_KEY: 'dummy', AWS_REGION: 'us-east-1' }],
  ['@modelcontextprotocol/server-everart', 'everart', [], { EVERART_API_KEY: 'dummy' }],
  ['@modelcontextprotocol/server-filesystem', 'filesystem', ['/tmp'], {}],
  ['@modelcontextprotocol/server-memory', 'memory', [], {}],
  ['@modelcontextprotocol/server-everything', 'everything', [], {}],
  ['@notionhq/notion-mcp-server', 'notion', [], { NOTION_TOKEN: 'ntn_dummy' }],
  ['@upstash/context7-mcp', 'context7', [], {}],
  ['firecrawl-mcp', 'firecrawl', [], { FIRECRAWL_API_KEY: 'fc-dummy' }],
  ['tavily-mcp', 'tavily', [], { TAVILY_API_KEY: 'tvly-dummy' }],
  ['@stripe/mcp', 'stripe', ['--tools=all', '--api-key=sk_test_dummy'], {}],
  ['mcp-server-kubernetes', 'kubernetes', [], {}],
  ['exa-mcp-server', 'exa', [], { EXA_API_KEY: 'dummy' }],
  ['@supabase/mcp-server-supabase', 'supabase', ['--access-token=sbp_dummy'], {}],
  ['@heroku/mcp-server', 'heroku', [], { HEROKU_API_KEY: 'dummy' }],
  ['mongodb-mcp-server', 'mongodb', [], { MDB_MCP_CONNECTION_STRING: 'mongodb://127.0.0.1:1/dummy', MDB_MCP_TELEMETRY: 'disabled' }],
  ['@neondatabase/mcp-server-neon', 'neon', ['start', 'napi_dummy'], {}],
  ['@upstash/mcp-server', 'upstash', ['run', 'dummy@example.com', 'dummy'], {}],
  ['@wonderwhy-er/desktop-commander', 'desktop-commander', [], {}],
  ['@playwright/mcp', 'playwright', [], {}],
  ['@modelcontextprotocol/server-puppeteer', 'puppeteer', [], {}],
  ['@launchdarkly/mcp-server', 'launchdarkly', ['start', '--api-key', 'api-dummy'], {}],
  ['@circleci/mcp-server-circleci', 'circleci', [], { CIRCLECI_TOKEN: 'dummy' }],
  ['@elastic/mcp-server-elasticsearch', 'elasticsearch', [], { ES_URL: 'http://127.0.0.1:1', ES_API_KEY: 'dummy' }],
  ['@hubspot/mcp-server', 'hubspot', [], { PRIVATE_APP_ACCESS_TOKEN: 'dummy' }],
];

interface HarvestedTool {
  name: string;
  description: string;
  inputSchema: unknown;
}

function binOf(root: string, pkg: string): { script: string; version: string } {
  const dir = path.join(root, 'node_modules', pkg);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string; bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (!bin) throw new Error(`${pkg} has no bin`);
  return { script: path.join(dir, bin), version: manifest.version };
}

async function harvest(root: string, pkg: string, args: string[], env: Record<string, string>): Promise<{ version: string; tools: HarvestedTool[] }> {
  const { script, version } = binOf(root, pkg);
  const transport = new StdioClientTransport({ command: process.execPath, args: [script, ...args], env: { PATH: process.env['PATH'] ?? '', HOME: root, ...env }, stderr: 'ignore' });
  const client = new Client({ name: 'harvest', version: '1.0.0' });
  const timer = setTimeout(() => void transport.close(), 30_000);
  try {
    await client.connect(transport);
    const tools: HarvestedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      for (const t of page.tools) tools.push({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema });
      cursor = page.nextCursor;
    } while (cursor);
    return { version, tools };
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const root = path.resolve(process.argv[2] ?? '/tmp/harvest');
  const servers: { package: string; server: string; version: string; tools: HarvestedTool[] }[] = [];
  for (const [pkg, server, args, env] of SERVERS) {
    try {
      const { version, tools } = await harvest(root, pkg, args, env);
      servers.push({ package: pkg, server, version, tools });
      process.stderr.write(`${pkg}@${version}: ${tools.length} tools\n`);
    } catch (err) {
      process.stderr.write(`${pkg}: skipped (${(err as Error).message})\n`);
    }
  }
  const here = path.dirname(fileURLToPath(import.meta.url));
  const out = path.resolve(here, '..', '..', 'test', 'fixtures', 'real-catalog', 'tools.json');
  const total = servers.reduce((n, s) => n + s.tools.length, 0);
  writeFileSync(out, `${JSON.stringify({ harvested_at: new Date().toISOString().slice(0, 10), servers }, null, 1)}\n`);
  process.stderr.write(`${servers.length} servers, ${total} tools -> ${out}\n`);
}

await main();
