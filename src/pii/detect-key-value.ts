// Secrets written as `key=value`, `key: value` or `"key": "value"` where the key names a secret
// (api_key, token, password, client_secret, Authorization, ...). Only the value becomes a
// token, so the key stays readable. The search is anchored on ':' and '=' and walks out from
// there, which keeps it linear whatever the text.

import { PRIORITY } from './candidate.js';
import type { Candidate } from './candidate.js';

/** Key words that name a secret on their own. */
const SECRET_WORDS = new Set([
  'token', 'secret', 'password', 'passwd', 'pwd', 'passphrase', 'apikey', 'auth', 'authorization',
  'credential', 'credentials', 'bearer', 'accesstoken', 'secretkey', 'privatekey',
]);
/** Key words for passwords, which people choose short: 'hunter2' is a password, 'oauth2' is not a token. */
const PASSWORD_WORDS: readonly string[] = ['password', 'passwd', 'pwd', 'passphrase'];
/** Run-together keys: PGPASSWORD, dbpassword, authtoken. */
const SECRET_SUFFIXES: readonly string[] = ['password', 'passwd', 'secret', 'token', 'apikey'];
/** Adjacent key words that name a secret together: api_key, access_key, private_key, x-api-key. */
const SECRET_PAIRS = new Set(['api key', 'access key', 'private key', 'secret key', 'signing key', 'master key']);
/** A last key word that makes the key describe a secret rather than hold one (token_type, password_hint). */
const METADATA_WORDS = new Set([
  'type', 'types', 'count', 'url', 'uri', 'endpoint', 'file', 'path', 'name', 'id', 'hint', 'length',
  'len', 'expiry', 'expires', 'expiration', 'ttl', 'policy', 'limit', 'max', 'min', 'size', 'format',
  'header', 'field', 'prefix', 'usage', 'required', 'enabled', 'method', 'mode', 'version',
  'timeout', 'dir', 'env', 'var', 'provider', 'scheme', 'strategy', 'rotation', 'at',
]);
const KEY_HINT_RE = /token|secret|passw|pwd|passphrase|key|auth|credential|bearer/i;
const KEY_WORD_SPLIT_RE = /[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/;
const SCHEME_RE = /^(?:Bearer|Basic|Token)[ \t]+/i;
const WINDOWS_PATH_RE = /^[A-Za-z]:[\\/]/;
/** Looks like code or a reference, not a literal secret: os.environ, config.db.password. */
const DOTTED_IDENTIFIER_RE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;

const MIN_VALUE_CHARS = 8;
const MIN_PASSWORD_CHARS = 6;
const MAX_VALUE_CHARS = 512;
const MAX_KEY_CHARS = 64;

function isKeyChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46;
}

/** Ends an unquoted value: whitespace, quotes and the punctuation that delimits fields. */
function endsUnquotedValue(c: number): boolean {
  return c <= 32 || c === 34 || c === 39 || c === 96 || c === 44 || c === 59 || c === 60 || c === 62 ||
    c === 40 || c === 41 || c === 91 || c === 93 || c === 123 || c === 125;
}

/** '&' followed by `name=` starts the next query parameter; otherwise it is part of a password. */
const NEXT_PARAM_RE = /[\w.-]{1,64}=/y;

function startsNextParam(text: string, at: number): boolean {
  NEXT_PARAM_RE.lastIndex = at + 1;
  return NEXT_PARAM_RE.test(text);
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/** What a key says about its value: a password, another secret, or nothing secret. */
export type KeyKind = 'password' | 'secret' | 'none';

export function keyKind(key: string): KeyKind {
  if (!KEY_HINT_RE.test(key)) return 'none';
  const words = key.split(KEY_WORD_SPLIT_RE).filter((w) => w.length > 0).map((w) => w.toLowerCase());
  const last = words[words.length - 1];
  if (last === undefined || METADATA_WORDS.has(last)) return 'none';
  let kind: KeyKind = 'none';
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    if (PASSWORD_WORDS.some((p) => w.endsWith(p))) return 'password';
    if (SECRET_WORDS.has(w) || SECRET_SUFFIXES.some((suffix) => w.endsWith(suffix))) kind = 'secret';
    const next = words[i + 1];
    if (next !== undefined && SECRET_PAIRS.has(`${w} ${next}`)) kind = 'secret';
  }
  return kind;
}

/** Whether a value looks like a literal secret rather than a placeholder, reference or word. */
export function valueLooksSecret(value: string, minChars: number = MIN_VALUE_CHARS): boolean {
  if (value.length < minChars || value.length > MAX_VALUE_CHARS) return false;
  const first = value[0];
  if (first === '$' || first === '%' || value.includes('://')) return false;
  // Paths: PWD=/home/user in an environment dump is a directory, not a password.
  if (first === '/' || first === '~' || WINDOWS_PATH_RE.test(value)) return false;
  if (DOTTED_IDENTIFIER_RE.test(value)) return false;
  let digit = false;
  let upper = false;
  let lower = false;
  let symbol = false;
  const distinct = new Set<string>();
  for (const ch of value) {
    distinct.add(ch);
    if (ch >= '0' && ch <= '9') digit = true;
    else if (ch >= 'A' && ch <= 'Z') upper = true;
    else if (ch >= 'a' && ch <= 'z') lower = true;
    else if (ch !== '.' && ch !== '_' && ch !== '-') symbol = true;
  }
  // '********', 'xxxxxxxx': masks, not secrets.
  if (distinct.size < 4) return false;
  return digit || symbol || (upper && lower && value.length >= 12) || value.length >= 24;
}

/**
 * The last unquoted run scanned. Where an unquoted value ends does not depend on where it
 * starts, so separators inside one long run (password=password=...) share one scan.
 */
interface RunCache {
  from: number;
  to: number;
}

export function detectKeyValueSecrets(text: string, out: Candidate[]): void {
  // No secret word anywhere, no secret key: one scan instead of one look per separator.
  if (!KEY_HINT_RE.test(text)) return;
  const run: RunCache = { from: -1, to: -1 };
  // Two indexOf cursors merged in order: far cheaper than a regex over every character.
  let colon = text.indexOf(':');
  let equals = text.indexOf('=');
  while (colon >= 0 || equals >= 0) {
    const sep = colon >= 0 && (equals < 0 || colon < equals) ? colon : equals;
    const end = matchAt(text, sep, out, run);
    // Separators inside a value just taken are part of it.
    const from = end > sep ? end : sep + 1;
    if (colon >= 0 && colon < from) colon = text.indexOf(':', from);
    if (equals >= 0 && equals < from) equals = text.indexOf('=', from);
  }
}

function unquotedRunEnd(text: string, start: number, run: RunCache): number {
  if (start >= run.from && start < run.to) return run.to;
  let k = start;
  while (k < text.length) {
    const c = text.charCodeAt(k);
    if (endsUnquotedValue(c) || (c === 38 /* & */ && startsNextParam(text, k))) break;
    k++;
  }
  run.from = start;
  run.to = k;
  return k;
}

/** Tries the separator at `sep`; pushes the value and returns where it ends, or -1. */
function matchAt(text: string, sep: number, out: Candidate[], run: RunCache): number {
  const sepChar = text.charCodeAt(sep);
  // '==' and '!=' are comparisons; ':=' is an assignment and is handled from the ':'.
  if (sepChar === 61 /* = */) {
    const prev = text.charCodeAt(sep - 1);
    if (prev === 61 || prev === 33 || prev === 60 || prev === 62 || prev === 58) return -1;
    if (text.charCodeAt(sep + 1) === 61) return -1;
  }
  // The key, walking back: spaces, an optional closing quote, then key characters.
  let j = sep - 1;
  let spaces = 0;
  while (j >= 0 && isSpace(text.charCodeAt(j)) && spaces < 4) {
    j--;
    spaces++;
  }
  const closing = text.charCodeAt(j);
  if (closing === 34 || closing === 39) j--;
  const keyEnd = j + 1;
  while (j >= 0 && keyEnd - j <= MAX_KEY_CHARS && isKeyChar(text.charCodeAt(j))) j--;
  if (j >= 0 && isKeyChar(text.charCodeAt(j))) return -1; // a key longer than any real one
  // The shortest secret key word is three letters (pwd).
  if (keyEnd - (j + 1) < 3) return -1;
  const kind = keyKind(text.slice(j + 1, keyEnd));
  if (kind === 'none') return -1;

  // The value, walking forward: ':=', spaces, an optional quote and an auth scheme.
  let k = sep + 1;
  // ':=' (Go, Pascal) and '=>' (PHP, Ruby) are separators too.
  if ((sepChar === 58 /* : */ && text.charCodeAt(k) === 61) || (sepChar === 61 && text.charCodeAt(k) === 62)) k++;
  spaces = 0;
  while (k < text.length && isSpace(text.charCodeAt(k)) && spaces < 4) {
    k++;
    spaces++;
  }
  const quote = text.charCodeAt(k);
  const quoted = quote === 34 || quote === 39 || quote === 96;
  if (quoted) k++;
  const scheme = SCHEME_RE.exec(text.slice(k, k + 16));
  if (scheme !== null) k += scheme[0].length;
  const start = k;
  if (quoted) {
    const limit = Math.min(text.length, start + MAX_VALUE_CHARS + 1);
    while (k < limit && text.charCodeAt(k) !== quote && text.charCodeAt(k) !== 10) k++;
    if (text.charCodeAt(k) !== quote) return -1;
  } else {
    k = unquotedRunEnd(text, start, run);
    // getToken(...) is a call, not a value.
    if (text.charCodeAt(k) === 40) return -1;
  }
  let end = k;
  // A sentence may end right after the value: "password: hunter22." keeps the dot out.
  if (!quoted) while (end > start && (text[end - 1] === '.' || text[end - 1] === ':')) end--;
  const value = text.slice(start, end);
  if (!valueLooksSecret(value, kind === 'password' ? MIN_PASSWORD_CHARS : MIN_VALUE_CHARS)) return -1;
  out.push({ type: 'API_KEY', start, end, value, priority: PRIORITY.KEY_VALUE });
  return end;
}
