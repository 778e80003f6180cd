// Public surface of the access check (below every domain: it imports only configuration types).
export { ACCESS_RANK, Grant, PermissionDenied, allows, authorize, decide, requireGrant } from './access.js';
export type { AccessKind, AccessResource, AccessSubject } from './access.js';
export { hostAllowed, toolAllowed, toolPatternMatches } from './patterns.js';
