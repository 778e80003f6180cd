// Whether an agent's call may wait for a sandbox: within its own share, and within the pool's
// bound only while it holds less than an equal share of it. A refusal names the agent, the limit
// and when to retry, and tells the agent others are not affected. An agent's shares come from its
// config here too.

import type { Config } from '../config/config-types.js';
import type { AgentLimits } from './pool-types.js';

export interface QueueState {
  agent: string;
  limits: AgentLimits;
  /** The agent's calls already waiting (not counting the one being admitted). */
  waiting: number;
  running: number;
  /** Calls waiting in the pool, and how many agents they belong to (the newcomer included). */
  totalWaiting: number;
  agentsWaiting: number;
  /** limits.maxQueuedCalls. */
  maxQueued: number;
  /** The runtime's language, as the message names it ('javascript'). */
  language: string;
  /** Recent average call duration, ms: the retry hint. */
  avgCallMs: number;
}

/** The OverloadedError message for a call that may not wait, or undefined when it may. */
export function refusal(s: QueueState): string | undefined {
  const retrySeconds = Math.max(1, Math.ceil(((s.waiting + s.running) * s.avgCallMs) / Math.max(1, s.limits.maxInFlight) / 1000));
  const retry = `retry in about ${retrySeconds} s, or send fewer calls at once`;
  if (s.waiting >= s.limits.maxQueued) {
    return `agent "${s.agent}" already has ${s.waiting} calls waiting for a ${s.language} sandbox and ${s.running} running (limits.maxQueuedPerAgent is ${s.limits.maxQueued}); other agents are not affected: ${retry}`;
  }
  if (s.totalWaiting >= s.maxQueued && s.waiting >= Math.floor(s.maxQueued / Math.max(1, s.agentsWaiting))) {
    return `the daemon is overloaded: ${s.totalWaiting} calls wait for a ${s.language} sandbox (limits.maxQueuedCalls is ${s.maxQueued}) and agent "${s.agent}" holds ${s.waiting} of them, at least an equal share: ${retry}`;
  }
  return undefined;
}

/**
 * An agent's share of a pool of `slots`: its own override, else the configured default, where
 * maxCallsInFlightPerAgent 0 means all slots but one (at least 1) when agents are configured, so
 * one agent's busy loops never hold every slot; with no agents there is one agent (every caller is
 * the local one), which gets every slot.
 */
export function agentLimits(config: Config, agent: string, slots: number): AgentLimits {
  const own = config.agents.find((a) => a.name === agent)?.limits;
  const auto = config.agents.length === 0 ? slots : Math.max(1, slots - 1);
  const inFlight = own?.maxCallsInFlight ?? (config.limits.maxCallsInFlightPerAgent || auto);
  return { maxInFlight: inFlight, maxQueued: own?.maxQueued ?? config.limits.maxQueuedPerAgent ?? 100 };
}

/**
 * The limit of an agent's calls in flight that holds across the daemons of a cluster: only an
 * explicit one (its own maxCallsInFlight, else a non-zero limits.maxCallsInFlightPerAgent). The
 * automatic share is a fraction of one daemon's slots, so it stays per daemon.
 */
export function clusterLimit(config: Config, agent: string): number | undefined {
  const own = config.agents.find((a) => a.name === agent)?.limits?.maxCallsInFlight;
  return own ?? (config.limits.maxCallsInFlightPerAgent || undefined);
}
