// `status`: a running daemon as its operator sees it, from GET /healthz and GET /metrics: health
// and problems, pools per language, memory, agents and upstream servers; readable, or --json.
// Exit 0 when the daemon is ok, 1 when it is degraded, draining or unreachable, 2 on bad usage.

import { parseArgs } from 'node:util';
import type { HealthReport, PublicHealth } from '../mcp/http/health.js';
import { UsageError } from './args.js';
import type { CliIo } from './cli-io.js';
import { EXIT_FAILED, EXIT_OK, write } from './cli-io.js';
import { BIN } from './help.js';
import { parsePrometheus } from './prometheus-text.js';
import { formatStatus, isFullReport, statusSummary } from './status-format.js';

/** Longest wait for each of /healthz and /metrics, ms. */
export const STATUS_TIMEOUT_MS = 5_000;
const DEFAULT_PORT = 7337;

export const STATUS_HELP = `Usage: ${BIN} status [--url URL] [--token TOKEN] [--json]

Asks a running daemon how it is: health and problems, whether Python is ready, sandbox pools per
language, memory, agents and upstream servers (from GET /healthz and GET /metrics). On a daemon
with tokens the figures need the operator's token (the daemon's --token, or an agent with
"permissions": {"operator": true}); without it only the status is shown.
Exit status: 0 when the daemon is ok, 1 when it is degraded, draining or cannot be reached.

Options:
  --url URL       the daemon: http://HOST:PORT, or its MCP URL (default http://127.0.0.1:$CODE_EXEC_PORT, else port ${DEFAULT_PORT})
  --token TOKEN   bearer token sent to the daemon (default $CODE_EXEC_TOKEN)
  --json          print one JSON object instead of text
  -h, --help      this help
`;

interface StatusArgs {
  base: string;
  token: string | undefined;
  json: boolean;
}

function parseStatusArgs(argv: readonly string[], env: NodeJS.ProcessEnv): StatusArgs | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { url: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false });
  } catch (error) {
    throw new UsageError((error instanceof Error ? error.message : String(error)).replace(/\. To specify a positional argument.*$/s, ''));
  }
  if (parsed.values.help === true) return 'help';
  const port = env['CODE_EXEC_PORT'] ?? String(DEFAULT_PORT);
  const raw = parsed.values.url ?? `http://127.0.0.1:${port}`;
  let url: URL;
  try {
    url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new UsageError(`--url must be the daemon's address, e.g. http://127.0.0.1:7337 (its /mcp URL works too); got "${raw}"`);
  }
  const base = `${url.origin}${url.pathname.replace(/\/(mcp|healthz|metrics)\/?$/, '').replace(/\/$/, '')}`;
  const token = parsed.values.token ?? env['CODE_EXEC_TOKEN'];
  return { base, token: token === '' ? undefined : token, json: parsed.values.json === true };
}

async function get(url: string, token: string | undefined): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(STATUS_TIMEOUT_MS) });
  return { status: res.status, text: await res.text() };
}

function unreachable(base: string, error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error instanceof Error ? error.name : String(error));
  const why = cause === 'TimeoutError' ? `no answer within ${STATUS_TIMEOUT_MS / 1000} s` : cause;
  return `cannot reach a daemon at ${base} (${why}): is it running? Start one with "${BIN} serve", or point --url at it`;
}

export async function statusCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseStatusArgs(argv, io.env);
  if (args === 'help') {
    await write(io.stdout, STATUS_HELP);
    return EXIT_OK;
  }
  let health: PublicHealth | HealthReport;
  try {
    const answer = await get(`${args.base}/healthz`, args.token);
    health = JSON.parse(answer.text) as PublicHealth | HealthReport;
    if (typeof health !== 'object' || health === null || typeof health.status !== 'string') throw new Error(`GET /healthz answered ${answer.status} without a health report`);
  } catch (error) {
    const message = error instanceof SyntaxError ? `${args.base}/healthz did not answer JSON: is this a ${BIN} daemon?` : error instanceof Error && error.message.startsWith('GET /healthz') ? error.message : unreachable(args.base, error);
    await write(io.stderr, `${BIN} status: ${message}\n`);
    return EXIT_FAILED;
  }
  let metricsNote: string | undefined;
  let metrics: ReturnType<typeof parsePrometheus> | undefined;
  // Without the operator's figures from /healthz, /metrics refuses too.
  if (isFullReport(health)) try {
    const answer = await get(`${args.base}/metrics`, args.token);
    if (answer.status === 200) metrics = parsePrometheus(answer.text);
    else if (answer.status === 401 || answer.status === 403) {
      metricsNote = `agents, languages, memory and upstream calls come from /metrics, which needs the operator's token (${answer.status}): pass --token or set CODE_EXEC_TOKEN`;
    } else metricsNote = `GET /metrics answered ${answer.status}`;
  } catch (error) {
    metricsNote = `GET /metrics failed: ${error instanceof Error ? error.message : String(error)}`;
  }
  const summary = statusSummary(args.base, health, metrics, metricsNote);
  await write(io.stdout, args.json ? `${JSON.stringify(summary, null, 2)}\n` : formatStatus(summary));
  return health.status === 'ok' ? EXIT_OK : EXIT_FAILED;
}
