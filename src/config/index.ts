// Public surface of the configuration subsystem.
export type * from './config-types.js';
export { loadConfig, ConfigError, DEFAULT_CONFIG_FILE } from './load-config.js';
export type { LoadConfigOptions, LoadedConfig } from './load-config.js';
export { defaultConfig, packageRoot, packageVersion, serverSettings, DEFAULT_PERMISSIONS, DEFAULT_SERVER } from './defaults.js';
export { OPTIONS, FILE_ONLY_OPTIONS, LOG_LEVELS } from './options.js';
export type { OptionSpec, CommandName } from './options.js';
export { isSafeNamespace, MIN_TOKEN_CHARS } from './structured.js';
export { optionsHelp } from './help.js';
export { LOCAL_AGENT_NAME, DEFAULT_AGENT_NAME, DAEMON_AGENT_NAME, INTERNAL_IDENTITIES, internalIdentityProblem } from './identities.js';
