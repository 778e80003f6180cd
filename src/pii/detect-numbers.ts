// Detectors for numbers with a structure: payment cards, SSNs, phone numbers and IBANs. Each
// regex proposes a bounded candidate; a validator decides. Lookbehinds keep digits inside a
// longer word or number from matching.

import { PRIORITY, scan } from './candidate.js';
import type { Candidate } from './candidate.js';
import { cardIssuerValid, e164Valid, ibanLength, ibanValid, luhnValid, nanpValid, ssnValid } from './validators.js';

/**
 * 13-19 digits, bare, or grouped by one kind of separator (space or dash) as cards are printed:
 * 4-4-4-4 (with up to three more digits in a fifth group, or fewer in the fourth), or 4-6-5 and
 * 4-6-4 (Amex, Diners Club). Dates and other grouped numbers fail the shape before any check.
 */
const CARD_RE = /\d(?<![\w-]\d)\d{3}(?:([ -])(?:\d{6}\1\d{4,5}|\d{4}\1\d{4}\1\d{1,4}(?:\1\d{1,3})?)|\d{9,15})(?!\w)/g;

function cardAt(text: string, start: number, candidate: string, sep: string | undefined, out: Candidate[]): number {
  const digits = sep === undefined ? candidate : candidate.split(sep).join('');
  if (digits.length < 13 || digits.length > 19 || !cardIssuerValid(digits) || !luhnValid(digits)) return -1;
  const end = start + candidate.length;
  out.push({ type: 'CREDIT_CARD', start, end, value: candidate, priority: PRIORITY.CREDIT_CARD });
  return end;
}

export function detectCards(text: string, out: Candidate[]): void {
  scan(CARD_RE, text, (m) => {
    const end = cardAt(text, m.index, m[0], m[1], out);
    if (end >= 0 || m[1] === undefined) return end;
    // A fifth group may be an expiry or another field after a 16-digit card: "4111 ... 1111 12/26".
    const cut = m[0].lastIndexOf(m[1]);
    return cut > 14 ? cardAt(text, m.index, m[0].slice(0, cut), m[1], out) : -1;
  });
}

/** 123-45-6789 or 123 45 6789. */
const SSN_RE = /(\d{3})(?<![\w-]\d{3})([- ])(\d{2})\2(\d{4})(?!\w|-\w|\2\d)/g;
/** Nine bare digits only after a label that says what they are. */
const SSN_LABELLED_RE = /\b(?:ssn|social security(?: number| no\.?)?)\s{0,3}(?:#|no\.?)?\s{0,3}[:=#]?\s{0,3}(\d{3})(\d{2})(\d{4})(?!\w)/gi;

export function detectSsns(text: string, out: Candidate[]): void {
  for (const re of [SSN_RE, SSN_LABELLED_RE]) {
    const labelled = re === SSN_LABELLED_RE;
    scan(re, text, (m) => {
      const [area, group, serial] = labelled ? [m[1], m[2], m[3]] : [m[1], m[3], m[4]];
      if (area === undefined || group === undefined || serial === undefined || !ssnValid(area, group, serial)) return -1;
      const end = m.index + m[0].length;
      const start = labelled ? end - 9 : m.index;
      out.push({ type: 'SSN', start, end, value: text.slice(start, end), priority: PRIORITY.SSN });
      return end;
    });
  }
}

/**
 * NANP with separators: (555) 123-4567, 555-123-4567, 555.123.4567, 555 123 4567, with an
 * optional +1 or 1- prefix. Ten bare digits are left alone: they are more often order numbers
 * or epochs than phone numbers; a +1 makes them E.164 below.
 */
const NANP_RE = /(?<![\w+.\-/])(?:\+1[ .-]?|1[ .-])?(?:\((\d{3})\) ?(\d{3})[ .-]|(\d{3})([ .-])(\d{3})\4)(\d{4})(?!\w|[.-]\d)/g;
/**
 * E.164: + then 8-15 digits, optionally grouped by single spaces or dashes, with an optional
 * parenthesized group after the country code as written in the UK and Germany: +44 (0) 20 ...
 */
const E164_RE = /\+(?<![\w+]\+)[1-9]\d{0,3}(?: ?\(\d{1,4}\))?(?:[ -]?\d){4,14}(?!\w)/g;
/** A national trunk prefix, "(0)", is not dialled from abroad and not part of the number. */
const TRUNK_PREFIX_RE = /\(0\)/;

export function detectPhones(text: string, out: Candidate[]): void {
  scan(NANP_RE, text, (m) => {
    const area = m[1] ?? m[3];
    const exchange = m[2] ?? m[5];
    const line = m[6];
    if (area === undefined || exchange === undefined || line === undefined || !nanpValid(area + exchange + line)) return -1;
    const end = m.index + m[0].length;
    out.push({ type: 'PHONE', start: m.index, end, value: m[0], priority: PRIORITY.PHONE });
    return end;
  });
  if (!text.includes('+')) return;
  scan(E164_RE, text, (m) => {
    if (!e164Valid(m[0].replace(TRUNK_PREFIX_RE, '').replace(/\D/g, ''))) return -1;
    const end = m.index + m[0].length;
    out.push({ type: 'PHONE', start: m.index, end, value: m[0], priority: PRIORITY.PHONE });
    return end;
  });
}

/** Country code, check digits, then the national part, compact or in groups split by spaces. */
const IBAN_RE = /[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]){10,30}(?![A-Za-z0-9])/g;

export function detectIbans(text: string, out: Candidate[]): void {
  scan(IBAN_RE, text, (m) => {
    const length = ibanLength(m[0].slice(0, 2));
    if (length === undefined) return -1;
    // The regex may have run on into a following code: cut at the country's length.
    let compact = '';
    let i = 0;
    const raw = m[0];
    while (i < raw.length && compact.length < length) {
      const c = raw[i] ?? '';
      if (c !== ' ') compact += c;
      i++;
    }
    if (compact.length !== length || (i < raw.length && raw[i] !== ' ')) return -1;
    if (!ibanValid(compact)) return -1;
    const end = m.index + i;
    out.push({ type: 'IBAN', start: m.index, end, value: raw.slice(0, i), priority: PRIORITY.IBAN });
    return end;
  });
}
