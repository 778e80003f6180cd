// Detector behaviour beyond the corpus scores: overlap resolution, word boundaries, the spans of
// key=value secrets, and inputs built to make a backtracking regex run for ever.
import { describe, expect, it } from 'vitest';
import { detectPii } from '../../src/pii/index.js';

const found = (text: string) => detectPii(text).map((m) => [m.type, m.value]);

describe('overlap resolution', () => {
  it('reports a grouped card number once, as a card, not also as a phone or SSN', () => {
    expect(found('card 4111-1111-1111-1111 ok')).toEqual([['CREDIT_CARD', '4111-1111-1111-1111']]);
    expect(found('card 4111 1111 1111 1111 ok')).toEqual([['CREDIT_CARD', '4111 1111 1111 1111']]);
  });

  it('reports an IPv4 address once, not as a phone number', () => {
    expect(found('host 192.168.100.200 up')).toEqual([['IP_ADDRESS', '192.168.100.200']]);
  });

  it('prefers the IPv6 address over the IPv4 tail of a mapped address', () => {
    expect(found('peer ::ffff:192.168.1.10')).toEqual([['IP_ADDRESS', '::ffff:192.168.1.10']]);
  });

  it('prefers the email over the digits in its local part', () => {
    expect(found('text 2025550143@txt.example.com')).toEqual([['EMAIL', '2025550143@txt.example.com']]);
  });

  it('prefers the card over a key=value secret with the same span', () => {
    expect(detectPii('secret=4111111111111111').map((m) => m.type)).toEqual(['CREDIT_CARD']);
  });

  it('prefers a JWT over the key=value reading of an Authorization header', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX2hlcmVfMTIz';
    expect(found(`Authorization: Bearer ${jwt}`)).toEqual([['API_KEY', jwt]]);
  });
});

describe('boundaries', () => {
  it('does not match digits inside a longer number or word', () => {
    expect(found('id 94111111111111111 and x4111111111111111 and 4111111111111111z')).toEqual([]);
    expect(found('ref 1123-45-6789 and A123-45-6789')).toEqual([]);
    expect(found('seq 1.2.3.4.5 and 10.0.0.1.2')).toEqual([]);
  });

  it('keeps a card before an expiry date in the same run of groups', () => {
    expect(found('4111 1111 1111 1111 12/26')).toEqual([['CREDIT_CARD', '4111 1111 1111 1111']]);
  });

  it('treats dotted quads after a version word or product token as versions', () => {
    expect(found('v1.2.3.4, version 1.2.3.4, Chrome/120.0.0.0, release: 10.0.0.1')).toEqual([]);
    expect(found('plain 1.2.3.4')).toEqual([['IP_ADDRESS', '1.2.3.4']]);
  });

  it('leaves sentence punctuation out of emails, IPv6 addresses and secrets', () => {
    expect(found('write to ann@example.com.')).toEqual([['EMAIL', 'ann@example.com']]);
    expect(found('reach 2001:db8::1.')).toEqual([['IP_ADDRESS', '2001:db8::1']]);
    expect(found('password: Winter2025!.')).toEqual([['API_KEY', 'Winter2025!']]);
  });

  it('validates IBANs by country length and checksum, compact or grouped', () => {
    expect(found('GB82 WEST 1234 5698 7654 32 and DE89370400440532013000')).toEqual([
      ['IBAN', 'GB82 WEST 1234 5698 7654 32'],
      ['IBAN', 'DE89370400440532013000'],
    ]);
    expect(found('GB82 WEST 1234 5698 7654 33')).toEqual([]);
  });

  it('rejects SSNs in impossible ranges', () => {
    for (const ssn of ['000-12-3456', '666-12-3456', '900-12-3456', '123-00-4567', '123-45-0000']) expect(found(ssn)).toEqual([]);
  });
});

describe('key=value secrets', () => {
  it('tokenizes the value only, so the key stays readable', () => {
    const [m] = detectPii('DB_PASSWORD="c0rrect-h0rse" next');
    expect(m).toMatchObject({ type: 'API_KEY', value: 'c0rrect-h0rse' });
  });

  it('recognises secret keys in common spellings and ignores metadata keys', () => {
    for (const text of ['apiKey: abcd1234efgh', 'x-api-key=abcd1234efgh', 'PGPASSWORD=abcd1234efgh', '"client_secret": "abcd1234efgh"']) {
      expect(detectPii(text).map((m) => m.value), text).toEqual(['abcd1234efgh']);
    }
    for (const text of ['token_type: abcd1234efgh', 'password_hint=abcd1234efgh', 'max_tokens: 12345678', 'author: abcd1234efgh']) {
      expect(detectPii(text), text).toEqual([]);
    }
  });

  it('accepts shorter values for password keys than for other secrets', () => {
    expect(found('password: hunter2')).toEqual([['API_KEY', 'hunter2']]);
    expect(found('auth: oauth2')).toEqual([]);
  });

  it('does not take paths for passwords', () => {
    expect(found('PWD=/home/runner/work OLDPWD=C:\\Users\\me2')).toEqual([]);
  });

  it('stops an unquoted value at the next query parameter but not at an & inside it', () => {
    expect(found('?token=abcd1234efgh&page=2')).toEqual([['API_KEY', 'abcd1234efgh']]);
    expect(found('pwd=Tr0ub4dor&3 ok')).toEqual([['API_KEY', 'Tr0ub4dor&3']]);
  });
});

describe('URLs and names', () => {
  it('takes the password of a URL with credentials, not an email made of it', () => {
    expect(found('postgres://app:Secr3tPw@db.internal:5432/app')).toEqual([['API_KEY', 'Secr3tPw']]);
    expect(found('https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r')).toEqual([
      ['API_KEY', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
    ]);
    expect(found('mailto:ann@example.com')).toEqual([['EMAIL', 'ann@example.com']]);
  });

  it("keeps an apostrophe inside a local part but not a quote around the address", () => {
    expect(found("O'Brien.K@example.ie and 'ann@example.com'")).toEqual([
      ['EMAIL', "O'Brien.K@example.ie"],
      ['EMAIL', 'ann@example.com'],
    ]);
  });

  it('reads a parenthesized trunk prefix as part of an international number', () => {
    expect(found('+44 (0) 20 7946 0000')).toEqual([['PHONE', '+44 (0) 20 7946 0000']]);
  });
});

describe('adversarial inputs', () => {
  const MB = 1 << 20;
  const repeat = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  const units = [
    'a', '1', '1 ', '1-', '1.', 'a@', 'a@b.', ':', 'a:', 'password=', 'token=aaaaaaa1 ', '"password": "',
    '-----BEGIN RSA PRIVATE KEY-----\n', 'eyJ', 'eyJhbGc.', 'GB82 ', '+1 ', '(555) ', '4111 ', 'a.b_c', 'sk-', 'AKIA',
    'deadbeef:', 'ssn ', 'v1.2.3.4 ', 'x@example.com ', 'a://b:c@', "a'", '+44 (0) ',
  ];

  it.each(units)('finishes on 1 MB of %j', (unit) => {
    const text = repeat(unit);
    const matches = detectPii(text);
    expect(Array.isArray(matches)).toBe(true);
  });

  it('finishes on 1 MB without a single separator', () => {
    expect(detectPii('x'.repeat(MB))).toEqual([]);
  });
});
