// Detectors for addresses: email, IPv4 and IPv6. IPv6 candidates are confirmed by node's own
// parser so compressed and IPv4-mapped forms are judged exactly as the platform judges them.

import { isIPv6 } from 'node:net';
import { PRIORITY, scan } from './candidate.js';
import type { Candidate } from './candidate.js';

/**
 * local@label.label.tld. The lookbehind starts the local part only at the start of its run,
 * which keeps the scan linear on long runs of local-part characters.
 */
const EMAIL_RE = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,63}(?![A-Za-z0-9-])/g;
/** Retina asset names (logo@2x.png) have an email's shape. */
const ASSET_DOMAIN_RE = /^\d+(?:\.\d+)?x\.(?:png|jpe?g|gif|webp|svg|avif|ico)$/i;

export function detectEmails(text: string, out: Candidate[]): void {
  if (!text.includes('@')) return;
  scan(EMAIL_RE, text, (m) => {
    const raw = m[0];
    const at = raw.indexOf('@');
    // A run like "...see:alice@x.io" may carry leading dots that are punctuation.
    let skip = 0;
    while (raw[skip] === '.') skip++;
    const local = raw.slice(skip, at);
    const domain = raw.slice(at + 1);
    if (local.length === 0 || local.endsWith('.') || local.includes('..')) return -1;
    if (domain.split('.').some((label) => label.startsWith('-') || label.endsWith('-'))) return -1;
    if (ASSET_DOMAIN_RE.test(domain)) return -1;
    const start = m.index + skip;
    const end = m.index + raw.length;
    out.push({ type: 'EMAIL', start, end, value: raw.slice(skip), priority: PRIORITY.EMAIL });
    return end;
  });
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

/** Starts like a group and a colon (or "::"), then hex, colons and dots (IPv4-mapped tails). */
const IPV6_RE = /(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:|::)[0-9A-Fa-f:.]{1,44}/g;
const WORD_CHAR_RE = /\w/;

export function detectIpv6(text: string, out: Candidate[]): void {
  if (!text.includes(':')) return;
  scan(IPV6_RE, text, (m) => {
    let raw = m[0];
    const after = text[m.index + raw.length];
    if (after !== undefined && (WORD_CHAR_RE.test(after) || after === ':' || after === '.')) return -1;
    // Sentence punctuation after an address: "reach 2001:db8::1." or "at fe80::1: down".
    while (raw.endsWith('.')) raw = raw.slice(0, -1);
    if (raw.endsWith(':') && !raw.endsWith('::')) raw = raw.slice(0, -1);
    if (!/[0-9A-Fa-f]/.test(raw) || !isIPv6(raw)) return -1;
    const end = m.index + raw.length;
    out.push({ type: 'IP_ADDRESS', start: m.index, end, value: raw, priority: PRIORITY.IP_ADDRESS });
    return end;
  });
}
