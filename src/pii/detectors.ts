// detectPii: runs every detector over a text and resolves overlaps so each character belongs to
// at most one match. The longest match wins; on equal length the more specific format wins
// (a checksummed card beats a phone shape, an email beats a key=value guess).

import type { Candidate } from './candidate.js';
import { detectKeyValueSecrets } from './detect-key-value.js';
import { detectEmails, detectIpv4, detectIpv6 } from './detect-network.js';
import { detectCards, detectIbans, detectPhones, detectSsns } from './detect-numbers.js';
import { detectJwts, detectPemKeys, detectProviderKeys, detectUrlPasswords } from './detect-secrets.js';
import type { PiiMatch, PiiType } from './pii-types.js';

type Detector = (text: string, out: Candidate[]) => void;

/** Every detector, for texts too long for a pre-scan to pay off (each has its own cheap gate). */
const ALL_DETECTORS: readonly Detector[] = [
  detectCards, detectSsns, detectPhones, detectIbans, detectIpv4,
  detectEmails, detectIpv6, detectProviderKeys, detectJwts, detectPemKeys, detectKeyValueSecrets, detectUrlPasswords,
];
/** Up to this many characters, one pass of character counts picks the detectors worth running. */
const PRESCAN_MAX_CHARS = 4096;
/** The shortest provider key body is an AWS key id: 20 characters without a break. */
const MIN_PROVIDER_RUN = 20;

interface Features {
  /** Most digits in one numeric cluster: digits joined by spaces, tabs and . - ( ) + / */
  clusterDigits: number;
  digits: number;
  uppers: number;
  dots: number;
  colons: number;
  separators: number;
  at: boolean;
  dashes: number;
  /** Longest run of letters, digits, '_' and '-'. */
  longestRun: number;
}

// Character classes for the pre-scan, as bit flags in a table indexed by ASCII code.
const DIGIT = 1;
const UPPER = 2;
const RUN = 4; // continues a run of letters, digits, '_' and '-'
const JOINS_DIGITS = 8; // may sit between the digits of a card, phone, SSN or address
const DOT = 16;
const COLON = 32;
const EQUALS = 64;
const AT = 128;
const DASH = 256;
const CLASSES = new Uint16Array(128);
for (let c = 48; c <= 57; c++) CLASSES[c] = DIGIT | RUN;
for (let c = 65; c <= 90; c++) CLASSES[c] = UPPER | RUN;
for (let c = 97; c <= 122; c++) CLASSES[c] = RUN;
CLASSES[95] = RUN; // _
CLASSES[45] = RUN | DASH | JOINS_DIGITS; // -
for (const c of [32, 9, 40, 41, 43, 47]) CLASSES[c] = JOINS_DIGITS; // space tab ( ) + /
CLASSES[46] = DOT | JOINS_DIGITS;
CLASSES[58] = COLON;
CLASSES[61] = EQUALS;
CLASSES[64] = AT;

function prescan(text: string): Features {
  let clusterDigits = 0;
  let digits = 0;
  let uppers = 0;
  let dots = 0;
  let colons = 0;
  let equals = 0;
  let ats = 0;
  let dashes = 0;
  let longestRun = 0;
  let run = 0;
  let cluster = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const k = c < 128 ? (CLASSES[c] ?? 0) : 0;
    if ((k & DIGIT) !== 0) {
      digits++;
      cluster++;
      run++;
      continue;
    }
    if ((k & JOINS_DIGITS) === 0) {
      if (cluster > clusterDigits) clusterDigits = cluster;
      cluster = 0;
    }
    if ((k & RUN) !== 0) {
      run++;
      if ((k & UPPER) !== 0) uppers++;
      else if ((k & DASH) !== 0) dashes++;
      continue;
    }
    if (run > longestRun) longestRun = run;
    run = 0;
    if ((k & DOT) !== 0) dots++;
    else if ((k & COLON) !== 0) colons++;
    else if ((k & EQUALS) !== 0) equals++;
    else if ((k & AT) !== 0) ats++;
  }
  return {
    clusterDigits: Math.max(clusterDigits, cluster),
    digits,
    uppers,
    dots,
    colons,
    separators: colons + equals,
    at: ats > 0,
    dashes,
    longestRun: Math.max(longestRun, run),
  };
}

/** Runs the detectors that can possibly match, from necessary conditions on character counts. */
function runPossibleDetectors(text: string, out: Candidate[]): void {
  const f = prescan(text);
  if (f.clusterDigits >= 13) detectCards(text, out);
  if (f.clusterDigits >= 9) detectSsns(text, out);
  if (f.clusterDigits >= 8) detectPhones(text, out);
  if (f.uppers >= 2 && f.digits >= 2) detectIbans(text, out);
  if (f.clusterDigits >= 4 && f.dots >= 3) detectIpv4(text, out);
  if (f.at) detectEmails(text, out);
  if (f.colons >= 2) detectIpv6(text, out);
  if (f.longestRun >= MIN_PROVIDER_RUN) detectProviderKeys(text, out);
  if (f.dots >= 2 && f.longestRun >= 7) detectJwts(text, out);
  if (f.dashes >= 10) detectPemKeys(text, out);
  if (f.separators > 0) detectKeyValueSecrets(text, out);
  if (f.at && f.colons > 0) detectUrlPasswords(text, out);
}

function better(a: Candidate, b: Candidate): boolean {
  const la = a.end - a.start;
  const lb = b.end - b.start;
  return la !== lb ? la > lb : a.priority > b.priority;
}

/** Keeps one match per overlapping cluster, sweeping left to right. */
function resolveOverlaps(candidates: Candidate[]): Candidate[] {
  if (candidates.length === 1) return candidates;
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
  return findPii(text).map(({ type, start, end, value }) => ({ type, start, end, value }));
}

/** detectPii without the copy that hides the internal priority field, for the vault's hot path. */
export function findPii(text: string): readonly PiiMatch[] {
  const candidates: Candidate[] = [];
  if (text.length <= PRESCAN_MAX_CHARS) runPossibleDetectors(text, candidates);
  else for (const detect of ALL_DETECTORS) detect(text, candidates);
  return candidates.length === 0 ? candidates : resolveOverlaps(candidates);
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
