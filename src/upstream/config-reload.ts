// Live upstream configuration: when the configuration file changes, its `mcpServers` are applied
// to the running daemon (servers added, changed or removed) without a restart, so sessions, PII
// vaults and unchanged servers carry on. Other options in the file need a restart; a change to
// them is logged once per reload so nobody wonders why it did not take.

import { watchConfigFile } from '../config/load-config.js';
import type { ConfigWatch, LoadConfigOptions } from '../config/load-config.js';
import type { Config } from '../config/config-types.js';
import type { Logger } from '../util/logger.js';
import type { UpstreamManager } from './manager.js';

/** Watches the configuration file and reconfigures `upstream` with each valid version's mcpServers. */
export function watchUpstreamConfig(
  options: LoadConfigOptions,
  current: Readonly<Config>,
  upstream: Pick<UpstreamManager, 'reconfigure'>,
  logger: Logger,
): Promise<ConfigWatch> {
  const log = logger.child({ subsystem: 'upstream' });
  let applied = current;
  return watchConfigFile(
    options,
    async ({ config, file }) => {
      const { added, changed, removed } = await upstream.reconfigure(config.mcpServers);
      const others = restartOnlyChanges(applied, config);
      applied = config;
      if (others.length > 0) log.warn({ code: 'CONFIG_NEEDS_RESTART', file, options: others }, `${others.join(', ')} changed in the configuration file; only mcpServers is applied live, restart the daemon for the rest`);
      else if (added.length + changed.length + removed.length === 0) log.debug({ file }, 'configuration file changed; mcpServers unchanged');
    },
    (message) => log.warn({ code: 'CONFIG_RELOAD_FAILED' }, message),
  );
}

/** Top-level options other than mcpServers whose value differs. */
function restartOnlyChanges(before: Readonly<Config>, after: Readonly<Config>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  keys.delete('mcpServers');
  const a = before as unknown as Record<string, unknown>;
  const b = after as unknown as Record<string, unknown>;
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}
