// --help texts. The configuration part is generated from the option table (src/config/options.ts).

import { optionsHelp } from '../config/help.js';
import type { CommandName } from '../config/options.js';

export const BIN = 'code-execution-mcp';

export function mainHelp(version: string): string {
  return `${BIN} ${version}: a local MCP daemon that lets AI agents run sandboxed code instead of calling tools one by one.

Usage:
  ${BIN} serve [--host 127.0.0.1] [--port 7337] [--config FILE]   the daemon: MCP Streamable HTTP at /mcp
  ${BIN} stdio [--connect URL] [--config FILE]                      MCP over stdio (embedded, or bridged to a daemon)
  ${BIN} exec [FILE|-] [--language js|ts|python] [--timeout S] [--memory MB] [--progress] [--count-tokens]   run code once, print the result JSON
  ${BIN} import-catalog FILE [--catalog-dir DIR]                    import the seed's full_catalog.json as catalog files
  ${BIN} status [--url URL] [--token TOKEN] [--json]                a running daemon's health, pools, memory, agents and upstreams
  ${BIN} --help | --version

Run "${BIN} COMMAND --help" for the options of a command.
`;
}

const COMMAND_HELP: Record<CommandName, string> = {
  serve: `Usage: ${BIN} serve [options]

The daemon: MCP Streamable HTTP at http://HOST:PORT/mcp (one MCP session per agent connection),
GET /healthz (JSON) and GET /metrics (Prometheus text). Loopback by default; binding any other
address needs a bearer token (--token, CODE_EXEC_TOKEN, or "agents" in the config file).
Logs are JSON lines on stderr; the "listening" line carries the URL and port.
SIGINT/SIGTERM stop accepting, let calls in flight finish (server.drainSeconds), then exit 0.

Command options:
  --port-file FILE   write the bound port to FILE once listening (useful with --port 0)
  -h, --help         this help
`,
  stdio: `Usage: ${BIN} stdio [--connect URL [--token TOKEN]] [options]

MCP over stdin/stdout; nothing but the protocol is written to stdout, logs go to stderr.
Alone, it embeds its own coordinator (sandbox pool, catalog, skills, workspace).
With --connect it bridges to a running daemon (e.g. --connect http://127.0.0.1:7337/mcp), so
agents started by stdio-only clients share one pool; --token / CODE_EXEC_TOKEN is sent as the
bearer token.

Command options:
  --connect URL      bridge to the daemon's Streamable HTTP endpoint instead of embedding one
  -h, --help         this help
`,
  exec: `Usage: ${BIN} exec [FILE|-] [--language js|ts|python] [--timeout S] [--memory MB] [--progress] [--count-tokens] [options]

Runs code once in the sandbox and prints the execute_code result JSON on stdout.
The code is read from FILE, or from stdin when FILE is "-" or absent. The language defaults from
the file extension (.js → javascript, .ts → typescript, .py → python), else it is detected from
the code as execute_code does (falling back to limits.defaultLanguage).
Exit status: 0 when the code succeeded, 1 when it failed, 2 on bad usage or configuration.

Command options:
  -l, --language L   javascript (js), typescript (ts) or python (py)
  -t, --timeout S    wall-clock limit, seconds (default limits.defaultTimeoutSeconds, at most limits.maxTimeoutSeconds)
  -m, --memory MB    memory limit, MiB (default limits.defaultMemoryMb, at most limits.maxMemoryMb)
  -p, --progress     write each output line to stderr as the code prints it (the JSON still comes at the end)
  --count-tokens     count context_savings with the tokenizer (loading it takes about 0.5 s); else estimated (characters / 4)
  -h, --help         this help
`,
  'import-catalog': `Usage: ${BIN} import-catalog FILE [--catalog-dir DIR] [options]

Imports a catalog in the seed server's format (full_catalog.json: categories -> tools with
description, mcp_server, functions, use_cases) into DIR/CATEGORY/TOOL.json files plus
DIR/CATEGORY/_category.json, each written atomically; a running daemon picks them up live.
Tools without input_schema become description-only entries. Existing files of the same names
are replaced. Prints a JSON summary (categories, tools, description_only, skipped).

Command options:
  -h, --help         this help
`,
};

export function commandHelp(command: CommandName): string {
  return `${COMMAND_HELP[command]}\n${optionsHelp(command)}\n`;
}
