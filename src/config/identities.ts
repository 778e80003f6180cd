// The identities the daemon uses for itself. They are not names in the agent namespace: an agent
// configured under one of them would act with that identity's powers (the `authToken` operator's
// skills and daemon-wide figures, the single user's workspace root) or share what the daemon keeps
// for it (the Python interpreter that parses every agent's code). The config refuses such names,
// compared without letter case (skill authors, log lines and folders are read by people).

/** The agent of stdio, exec, and HTTP without tokens (one user). */
export const LOCAL_AGENT_NAME = 'local';
/** The agent identified by `authToken` (the operator). */
export const DEFAULT_AGENT_NAME = 'default';
/** The daemon's own calls: Python syntax checks of skills and execute_code language detection. */
export const DAEMON_AGENT_NAME = 'daemon';

/** Every name the daemon acts under itself, with what it is (for the config's refusal). */
export const INTERNAL_IDENTITIES: Readonly<Record<string, string>> = Object.freeze({
  [LOCAL_AGENT_NAME]: 'the single local user (stdio, exec, HTTP without tokens)',
  [DEFAULT_AGENT_NAME]: 'the operator identified by authToken',
  [DAEMON_AGENT_NAME]: "the daemon's own checks (it parses every agent's Python code)",
});

/** Why `name` cannot be an agent's name, or null when it can. */
export function internalIdentityProblem(name: string): string | null {
  const taken = Object.keys(INTERNAL_IDENTITIES).find((internal) => internal.toLowerCase() === name.toLowerCase());
  if (taken === undefined) return null;
  return `"${name}" is the name of ${INTERNAL_IDENTITIES[taken]}, which the daemon uses for itself (reserved: ${Object.keys(INTERNAL_IDENTITIES).join(', ')}, in any letter case); give the agent another name`;
}
