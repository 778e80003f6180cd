// Each agent's share of the daemon's shared budgets (connections, sessions, SSE events held for
// resumption), as get_execution_stats shows it: an agent sees its own, the operator every agent's.

import type { Config } from '../../config/config-types.js';
import { serverSettings } from '../../config/defaults.js';
import type { ConnectionLimiter } from './connection-limiter.js';
import type { SessionManager } from './session-manager.js';

/** `(agent)` gives one agent's usage and limits; `()` gives the daemon's totals and every agent's. */
export function agentUsage(config: Readonly<Config>, connections: ConnectionLimiter, sessions: SessionManager): (agent?: string) => Record<string, unknown> {
  const settings = serverSettings(config);
  const perAgent = config.agents.length > 0;
  const one = (agent: string): Record<string, unknown> => ({
    connections: connections.countFor(agent),
    ...(perAgent ? { max_connections: settings.maxConnectionsPerAgent } : {}),
    sessions: sessions.countFor(agent),
    ...(perAgent ? { max_sessions: settings.maxSessionsPerAgent } : {}),
    ...sessions.eventUsage(agent),
  });
  return (agent) => {
    if (agent !== undefined) return one(agent);
    const names = new Set([...connections.countsByAgent().keys(), ...sessions.countsByAgent().keys()]);
    return {
      connections: connections.open,
      connections_evicted: connections.evictedTotal,
      by_agent: Object.fromEntries([...names].sort().map((name) => [name, one(name)])),
    };
  };
}
