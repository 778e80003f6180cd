// The quota and call gate contracts against the embedded implementations: the daemon's own quota
// count (NamespaceQuota) and the gate of one daemon (LOCAL_GATE, whose pools hold the limit). The
// Redis ones run them in test/cluster/redis-contracts.test.ts.

import { LOCAL_GATE } from '../../src/executor/call-gate.js';
import { LOCAL_QUOTAS } from '../../src/workspace/quota.js';
import { describeCallGateContract } from './call-gate-contract.js';
import { describeQuotaContract } from './quota-contract.js';

describeQuotaContract('this daemon', { counter: async (ns, root, limits) => LOCAL_QUOTAS(ns, async () => root, limits) });

describeCallGateContract('one daemon', { gate: async () => LOCAL_GATE, holdsLimit: false });
