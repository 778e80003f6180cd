// Checks that turn a regular-expression candidate into a confident match: checksums (Luhn,
// mod-97), issuer and country tables, and numbering-plan rules. Pure functions over strings.

/** Luhn (mod 10) checksum over a string of ASCII digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function prefixIn(digits: string, length: number, low: number, high: number): boolean {
  const p = Number(digits.slice(0, length));
  return p >= low && p <= high;
}

/**
 * Whether a card number of length `n` whose first digits are `digits` (four are enough) has the
 * length and prefix of a known issuer: Visa, Mastercard (51-55 and 2221-2720), Amex, Discover,
 * JCB, Diners Club, UnionPay.
 */
export function cardIssuerValid(digits: string, n: number = digits.length): boolean {
  switch (digits.charCodeAt(0) - 48) {
    case 4: // Visa
      return n === 13 || n === 16 || n === 19;
    case 5: // Mastercard
      return n === 16 && prefixIn(digits, 2, 51, 55);
    case 2: // Mastercard 2-series
      return n === 16 && prefixIn(digits, 4, 2221, 2720);
    case 3:
      if (prefixIn(digits, 2, 34, 34) || prefixIn(digits, 2, 37, 37)) return n === 15; // Amex
      if (prefixIn(digits, 4, 3528, 3589)) return n >= 16 && n <= 19; // JCB
      if (prefixIn(digits, 3, 300, 305) || prefixIn(digits, 4, 3095, 3095) || prefixIn(digits, 2, 36, 36) || prefixIn(digits, 2, 38, 39)) {
        return n >= 14 && n <= 19; // Diners Club
      }
      return false;
    case 6:
      if (n < 16 || n > 19) return false;
      return (
        prefixIn(digits, 4, 6011, 6011) || // Discover
        prefixIn(digits, 3, 644, 649) ||
        prefixIn(digits, 2, 65, 65) ||
        prefixIn(digits, 2, 62, 62) // UnionPay (and Discover co-branded 622126-622925)
      );
    default:
      return false;
  }
}

/** IBAN lengths by country (SWIFT IBAN registry). */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28,
  CH: 21, CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18,
  FK: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HN: 28, HR: 21, HU: 28,
  IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20,
  LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28,
  NL: 18, NO: 15, OM: 23, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24,
  SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26,
  UA: 29, VA: 22, VG: 24, XK: 20, YE: 30,
};

/** The IBAN length of a country code, or undefined when the country issues no IBANs. */
export function ibanLength(country: string): number | undefined {
  return Object.hasOwn(IBAN_LENGTHS, country) ? IBAN_LENGTHS[country] : undefined;
}

/** ISO 13616 check: known country, its length, and mod-97 of the rearranged number equals 1. */
export function ibanValid(iban: string): boolean {
  if (ibanLength(iban.slice(0, 2)) !== iban.length) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let rem = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const c = rearranged.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      rem = (rem * 10 + (c - 48)) % 97;
    } else if (c >= 65 && c <= 90) {
      rem = (rem * 100 + (c - 55)) % 97;
    } else {
      return false;
    }
  }
  return rem === 1;
}

/** Numbers the SSA never issues or that are known to be published (Woolworth's wallet card). */
const RETIRED_SSNS = new Set(['078051120', '219099999']);

/** SSN area, group and serial ranges: area not 000, 666 or 900-999; group not 00; serial not 0000. */
export function ssnValid(area: string, group: string, serial: string): boolean {
  const a = Number(area);
  if (a === 0 || a === 666 || a >= 900) return false;
  if (group === '00' || serial === '0000') return false;
  return !RETIRED_SSNS.has(area + group + serial);
}

/**
 * NANP area code: NXX (N = 2-9), not an N11 service code, middle digit not 9 (reserved for
 * expansion). The exchange is not checked: numbers like 555-123-4567 are what people write in
 * examples and forms, and treating them as phone numbers errs on the side of privacy.
 */
export function nanpValid(tenDigits: string): boolean {
  if (tenDigits.length !== 10) return false;
  const a0 = tenDigits.charCodeAt(0) - 48;
  const a1 = tenDigits.charCodeAt(1) - 48;
  if (a0 < 2 || a0 > 9 || a1 === 9) return false;
  return !(tenDigits[1] === '1' && tenDigits[2] === '1');
}

/** E.164: 8 to 15 digits, no leading zero; country code 1 must be a valid NANP number. */
export function e164Valid(digits: string): boolean {
  if (digits.length < 8 || digits.length > 15 || digits[0] === '0') return false;
  if (digits[0] === '1') return digits.length === 11 && nanpValid(digits.slice(1));
  return true;
}

/** Whether a base64url segment decodes to a JSON object with a string `alg`: a JWT header. */
export function jwtHeaderValid(segment: string): boolean {
  if (segment.length > 2048) return false;
  try {
    const decoded = Buffer.from(segment, 'base64url').toString('utf8').trimEnd();
    // Most base64url runs starting with eyJ are not JSON; skip the cost of a thrown parse error.
    if (!decoded.endsWith('}')) return false;
    const parsed: unknown = JSON.parse(decoded);
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}
