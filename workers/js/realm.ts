// The worker's realm, set up once before any guest code: SES lockdown() with the options the
// sandbox needs, then the endowments every call shares, hardened. The sandbox worker and the
// reachability audit (test/fixtures/audit) both start from here, so the audit sees what guests see.

import 'ses';
import { sharedEndowments } from './globals.js';

export const LOCKDOWN_OPTIONS = {
  // Guests see no stacks (no host paths); the host reads them with getStackString.
  errorTaming: 'safe',
  stackFiltering: 'verbose',
  // The defaults exit the process on an uncaught error; a worker must survive its guests.
  errorTrapping: 'none',
  unhandledRejectionTrapping: 'none',
  consoleTaming: 'unsafe',
  overrideTaming: 'moderate',
  domainTaming: 'safe',
} as const;

/** Locks the realm down and hardens what calls share. Call once, after every import. */
export function lockdownRealm(): void {
  lockdown(LOCKDOWN_OPTIONS);
  sharedEndowments();
}
