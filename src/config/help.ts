// The options part of `--help`, generated from the option table so it cannot drift from parsing.

import { FILE_ONLY_OPTIONS, OPTIONS } from './options.js';
import type { CommandName } from './options.js';

export function optionsHelp(command: CommandName): string {
  const rows = OPTIONS.filter((o) => !o.commands || o.commands.includes(command)).map((o) => {
    const flag = o.kind === 'bool' ? `--${o.flag} / --no-${o.flag}` : `--${o.flag} ${o.arg}`;
    return { flag, text: `${o.doc}. Default ${o.defaultText}.`, where: `env ${o.env}, file "${o.key}"` };
  });
  const width = Math.max(...rows.map((r) => r.flag.length)) + 2;
  const lines = rows.map((r) => `  ${r.flag.padEnd(width)}${r.text}\n  ${' '.repeat(width)}(${r.where})`);
  const fileOnly = FILE_ONLY_OPTIONS.map((o) => `  ${o.key.padEnd(width)}${o.doc}`);
  return [
    'Configuration (highest wins: flags, then CODE_EXEC_* environment, then the JSON file,',
    'then defaults). The file is --config FILE, else CODE_EXEC_CONFIG, else ./code-execution-mcp.json',
    'when present. Relative folders in the file are relative to the file.',
    '  --config FILE'.padEnd(width + 2) + 'JSON configuration file.',
    ...lines,
    '',
    'File-only options:',
    ...fileOnly,
  ].join('\n');
}
