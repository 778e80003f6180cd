// detectPii: runs every detector over a text and resolves overlaps so each character belongs to
// at most one match. The longest match wins; on equal length the more specific format wins
// (a checksummed card beats a phone shape, an email beats a key=value guess).

import type { Candidate } from './candidate.js';
import { detectKeyValueSecrets } from './detect-key-value.js';
import { detectEmails, detectIpv4, detectIpv6 } from './detect-network.js';
import { detectCards, detectIbans, detectPhones, detectSsns } from './detect-numbers.js';
import { detectJwts, detectPemKeys, detectProviderKeys } from './detect-secrets.js';
import type { PiiMatch, PiiType } from './pii-types.js';

type Detector = (text: string, out: Candidate[]) => void;

/** Detectors that need a digit somewhere in the text. */
const DIGIT_DETECTORS: readonly Detector[] = [detectCards, detectSsns, detectPhones, detectIbans, detectIpv4];
/** Detectors that can match without digits. */
const OTHER_DETECTORS: readonly Detector[] = [detectEmails, detectIpv6, detectProviderKeys, detectJwts, detectPemKeys, detectKeyValueSecrets];

const DIGIT_RE = /\d/;

function better(a: Candidate, b: Candidate): boolean {
  const la = a.end - a.start;
  const lb = b.end - b.start;
  return la !== lb ? la > lb : a.priority > b.priority;
}

/** Keeps one match per overlapping cluster, sweeping left to right. */
function resolveOverlaps(candidates: Candidate[]): Candidate[] {
  candidates.sort((a, b) => a.start - b.start || b.end - a.end || b.priority - a.priority);
  const kept: Candidate[] = [];
  for (const c of candidates) {
    const last = kept[kept.length - 1];
    if (last === undefined || c.start >= last.end) kept.push(c);
    else if (better(c, last)) kept[kept.length - 1] = c;
  }
  return kept;
}

/** Every PII value in text: non-overlapping, sorted by start. */
export function detectPii(text: string): PiiMatch[] {
  const candidates: Candidate[] = [];
  if (DIGIT_RE.test(text)) for (const detect of DIGIT_DETECTORS) detect(text, candidates);
  for (const detect of OTHER_DETECTORS) detect(text, candidates);
  if (candidates.length === 0) return [];
  return resolveOverlaps(candidates).map(({ type, start, end, value }) => ({ type, start, end, value }));
}

/** The distinct types present in text, in PII_TYPES order. */
export function piiTypesIn(text: string): PiiType[] {
  return sortTypes(new Set(detectPii(text).map((m) => m.type)));
}

const TYPE_ORDER: Readonly<Record<PiiType, number>> = {
  EMAIL: 0, PHONE: 1, SSN: 2, CREDIT_CARD: 3, IP_ADDRESS: 4, IBAN: 5, API_KEY: 6,
};

/** A set of types as an array in PII_TYPES order. */
export function sortTypes(types: Iterable<PiiType>): PiiType[] {
  return [...types].sort((a, b) => TYPE_ORDER[a] - TYPE_ORDER[b]);
}
