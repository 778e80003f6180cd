// Detectors for addresses: email, IPv4 and IPv6. IPv6 candidates are confirmed by node's own
// parser so compressed and IPv4-mapped forms are judged exactly as the platform judges them.

import { isIPv6 } from 'node:net';
import { PRIORITY, scan } from './candidate.js';
import type { Candidate } from './candidate.js';

/** The domain after '@': labels, then a letters-only TLD, not running on into a longer word. */
const DOMAIN_RE = /(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,63}(?![A-Za-z0-9-])/y;
/** Retina asset names (logo@2x.png) have an email's shape. */
const ASSET_DOMAIN_RE = /^\d+(?:\.\d+)?x\.(?:png|jpe?g|gif|webp|svg|avif|ico)$/i;
const MAX_LOCAL_CHARS = 64;

/** Characters of an unquoted local part: letters, digits and . _ % + - ' (O'Brien) */
function isLocalChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45 || c === 39;
}

/**
 * Anchored on '@' (rare in text, found by indexOf) rather than on every word start: the local
 * part is walked back from it, the domain matched forward with a sticky regex.
 */
export function detectEmails(text: string, out: Candidate[]): void {
  let floor = 0;
  let at = text.indexOf('@');
  while (at >= 0) {
    const end = emailAt(text, at, floor, out);
    if (end > at) floor = end;
    at = text.indexOf('@', end > at ? end : at + 1);
  }
}

/** Whether the '@' belongs to the userinfo of a URL (https://user:pass@host), not an email. */
function inUrlUserinfo(text: string, start: number): boolean {
  const before = text.charCodeAt(start - 1);
  if (before !== 47 /* / */ && before !== 58 /* : */) return false;
  // Searched in the 300 characters before only: lastIndexOf from `start` walks back to the text's
  // start when there is no scheme, which made a text of many '@' quadratic (64 KiB took 1.4 s).
  const from = Math.max(0, start - 300);
  const window = text.slice(from, start);
  const scheme = window.lastIndexOf('://');
  return scheme >= 0 && !/\s/.test(window.slice(scheme));
}

function emailAt(text: string, at: number, floor: number, out: Candidate[]): number {
  let start = at;
  while (start > floor && at - start < MAX_LOCAL_CHARS && isLocalChar(text.charCodeAt(start - 1))) start--;
  // A local part longer than any valid one is a run of something else.
  if (start > floor && isLocalChar(text.charCodeAt(start - 1))) return -1;
  if (inUrlUserinfo(text, start)) return -1;
  // Leading dots and quotes are punctuation: "...alice@x.io", 'alice@x.io'.
  while (start < at && (text.charCodeAt(start) === 46 || text.charCodeAt(start) === 39)) start++;
  if (start === at || text.charCodeAt(at - 1) === 46 || text.charCodeAt(at - 1) === 39) return -1;
  DOMAIN_RE.lastIndex = at + 1;
  const domain = DOMAIN_RE.exec(text);
  if (domain === null) return -1;
  const local = text.slice(start, at);
  if (local.includes('..')) return -1;
  const labels = domain[0].split('.');
  if (labels.some((label) => label.startsWith('-') || label.endsWith('-'))) return -1;
  if (ASSET_DOMAIN_RE.test(domain[0])) return -1;
  const end = at + 1 + domain[0].length;
  out.push({ type: 'EMAIL', start, end, value: text.slice(start, end), priority: PRIORITY.EMAIL });
  return end;
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** Four in-range octets without leading zeros, not part of a longer dotted run. */
const IPV4_RE = new RegExp(`(?<![\\w.])(?:${OCTET}\\.){3}${OCTET}(?!\\w|\\.\\d)`, 'g');
/**
 * A dotted quad right after a version word, or after a product token ("Chrome/120.0.0.0"), is a
 * version or section number, not an address.
 */
const VERSION_BEFORE_RE = /(?:\b(?:v|ver|version|release|rel|build|firmware|fw|rev|revision|section|sec|chapter|ch|§)\.?\s{0,2}[:=#]?\s{0,2}|[A-Za-z]\/|§\s?)$/i;

export function detectIpv4(text: string, out: Candidate[]): void {
  scan(IPV4_RE, text, (m) => {
    if (VERSION_BEFORE_RE.test(text.slice(Math.max(0, m.index - 24), m.index))) return -1;
    const end = m.index + m[0].length;
    out.push({ type: 'IP_ADDRESS', start: m.index, end, value: m[0], priority: PRIORITY.IP_ADDRESS });
    return end;
  });
}

const IPV6_RE = /(?:[0-9A-Fa-f]{1,4}:|::)[0-9A-Fa-f:.]{1,44}/y;
const HEX_DIGIT_RE = /[0-9A-Fa-f]/;

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** Word characters, ':' and '.': what may not touch an address on either side. */
function joinsAddress(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 58 || c === 46;
}

/**
 * Every IPv6 address has two colons at most four hex digits apart, so candidates are found from
 * the colons (indexOf, cheap) and read from the start of their first group.
 */
export function detectIpv6(text: string, out: Candidate[]): void {
  let floor = 0;
  let colon = text.indexOf(':');
  while (colon >= 0) {
    let next = colon + 1;
    while (next < text.length && next - colon <= 5 && isHex(text.charCodeAt(next))) next++;
    let end = -1;
    if (text.charCodeAt(next) === 58 /* : */) {
      let start = colon;
      while (start > floor && colon - start < 4 && isHex(text.charCodeAt(start - 1))) start--;
      if (start === 0 || !joinsAddress(text.charCodeAt(start - 1))) end = ipv6At(text, start, out);
    }
    if (end > colon) floor = end;
    colon = text.indexOf(':', end > colon ? end : colon + 1);
  }
}

function ipv6At(text: string, start: number, out: Candidate[]): number {
  IPV6_RE.lastIndex = start;
  const m = IPV6_RE.exec(text);
  if (m === null) return -1;
  let raw = m[0];
  const after = text.charCodeAt(start + raw.length);
  if (!Number.isNaN(after) && joinsAddress(after)) return -1;
  // Sentence punctuation after an address: "reach 2001:db8::1." or "at fe80::1: down".
  while (raw.endsWith('.')) raw = raw.slice(0, -1);
  if (raw.endsWith(':') && !raw.endsWith('::')) raw = raw.slice(0, -1);
  if (!HEX_DIGIT_RE.test(raw) || !isIPv6(raw)) return -1;
  const end = start + raw.length;
  out.push({ type: 'IP_ADDRESS', start, end, value: raw, priority: PRIORITY.IP_ADDRESS });
  return end;
}
