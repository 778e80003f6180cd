// Detectors for credentials: provider key formats (prefixes make them near-certain), JWTs,
// PEM private key blocks, and passwords in URLs. `key=value` pairs are in detect-key-value.ts.

import { PRIORITY, scan } from './candidate.js';
import type { Candidate } from './candidate.js';
import { jwtHeaderValid } from './validators.js';

/**
 * Provider formats: AWS access key ids, GitHub, Slack, Stripe secret and restricted keys,
 * Anthropic, OpenAI, Google API keys, GitLab, npm, SendGrid. One regex per family, each opening
 * with a literal: the regex engine skips through text to a literal far faster than it tries an
 * alternation of eleven patterns at every character, and faster than a separate includes() gate.
 */
const PROVIDER_FAMILIES: readonly RegExp[] = [
  /A[KS]IA[A-Z0-9]{16}/g,
  /gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,244}/g,
  /xox[abprs]-[A-Za-z0-9-]{10,250}/g,
  /[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}/g,
  /sk-(?:(?:ant|proj|svcacct|admin)-[A-Za-z0-9_-]{20,250}|[A-Za-z0-9]{32,250})/g,
  /AIza[A-Za-z0-9_-]{35}/g,
  /glpat-[A-Za-z0-9_-]{20,250}/g,
  /npm_[A-Za-z0-9]{36}/g,
  /SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}/g,
];

/** Letters, digits, '_' and '-': a key may not be glued to them on either side. */
function joinsKey(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
}

export function detectProviderKeys(text: string, out: Candidate[]): void {
  for (const family of PROVIDER_FAMILIES) {
    scan(family, text, (m) => {
      const end = m.index + m[0].length;
      if ((m.index > 0 && joinsKey(text.charCodeAt(m.index - 1))) || joinsKey(text.charCodeAt(end))) return -1;
      out.push({ type: 'API_KEY', start: m.index, end, value: m[0], priority: PRIORITY.PROVIDER_KEY });
      return end;
    });
  }
}

/**
 * header.payload.signature in base64url; the header must decode to JSON with an `alg`. The
 * literal eyJ ('{"' encoded) opens the pattern and the boundary is checked behind it, so the
 * engine skips to each eyJ instead of testing a lookbehind at every character.
 */
const JWT_RE = /eyJ(?<![\w-]eyJ)([\w-]{4,2048})\.[\w-]{2,16384}\.[\w-]{0,2048}(?![\w-])/g;

export function detectJwts(text: string, out: Candidate[]): void {
  scan(JWT_RE, text, (m) => {
    if (m[1] === undefined || !jwtHeaderValid(`eyJ${m[1]}`)) return -1;
    const end = m.index + m[0].length;
    out.push({ type: 'API_KEY', start: m.index, end, value: m[0], priority: PRIORITY.JWT });
    return end;
  });
}

const PEM_BEGIN = '-----BEGIN ';
const PEM_HEADER_RE = /-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY( BLOCK)?-----/y;
/** Base64 body lines, for a block whose END line is missing (a truncated paste). */
const PEM_BODY_RE = /(?:\r?\n[A-Za-z0-9+/=]{1,100})*/y;
const MAX_PEM_CHARS = 65_536;

export function detectPemKeys(text: string, out: Candidate[]): void {
  // END markers already searched for: their next position, or -1 when there is none further on,
  // so many BEGIN lines without an END do not rescan the text each time.
  const nextEnd = new Map<string, number>();
  let from = 0;
  for (;;) {
    const start = text.indexOf(PEM_BEGIN, from);
    if (start < 0) return;
    PEM_HEADER_RE.lastIndex = start;
    const header = PEM_HEADER_RE.exec(text);
    if (header === null) {
      from = start + PEM_BEGIN.length;
      continue;
    }
    const bodyStart = start + header[0].length;
    const marker = `-----END ${header[1] ?? ''}PRIVATE KEY${header[2] ?? ''}-----`;
    let endAt = nextEnd.get(marker);
    if (endAt === undefined || (endAt >= 0 && endAt < bodyStart)) {
      endAt = text.indexOf(marker, bodyStart);
      nextEnd.set(marker, endAt);
    }
    let end: number;
    if (endAt >= 0 && endAt - start <= MAX_PEM_CHARS) {
      end = endAt + marker.length;
    } else {
      PEM_BODY_RE.lastIndex = bodyStart;
      PEM_BODY_RE.exec(text);
      end = Math.min(PEM_BODY_RE.lastIndex, start + MAX_PEM_CHARS);
    }
    out.push({ type: 'API_KEY', start, end, value: text.slice(start, end), priority: PRIORITY.PEM });
    from = end;
  }
}

/** scheme://user:password@host: the password, found from the literal "://". */
const URL_PASSWORD_RE = /:\/\/[^\s:@/]{1,128}:([^\s@/]{1,256})@/g;

export function detectUrlPasswords(text: string, out: Candidate[]): void {
  if (!text.includes('://')) return;
  scan(URL_PASSWORD_RE, text, (m) => {
    const password = m[1];
    if (password === undefined) return -1;
    const end = m.index + m[0].length - 1;
    const start = end - password.length;
    out.push({ type: 'API_KEY', start, end, value: password, priority: PRIORITY.KEY_VALUE });
    return end;
  });
}
