// The event store contract (event-store-contract.ts) against the in-memory stores. The Redis
// stores run it in test/cluster/redis-contracts.test.ts.

import { DEFAULT_EVENT_LIMITS, EventBudget, SessionEventStores } from '../../src/mcp/http/event-store.js';
import { describeEventStoreContract } from './event-store-contract.js';

describeEventStoreContract('memory', {
  factory: async ({ maxEventsPerStream }) => new SessionEventStores(new EventBudget(64 * 1024 * 1024), { ...DEFAULT_EVENT_LIMITS, maxEventsPerStream }),
});
