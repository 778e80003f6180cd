// The per-session registry: one vault per session, isolation between sessions, idle expiry on an
// injected clock, a bound on sessions, and stats that carry counts only.
import { describe, expect, it } from 'vitest';
import { PiiVaults } from '../../src/pii/index.js';

describe('PiiVaults', () => {
  it('creates a vault per session on demand and returns the same one after', () => {
    const vaults = new PiiVaults();
    expect(vaults.has('a')).toBe(false);
    const a = vaults.vault('a');
    expect(vaults.vault('a')).toBe(a);
    expect(vaults.vault('b')).not.toBe(a);
  });

  it('restores a token only in the session that made it', () => {
    const vaults = new PiiVaults();
    const token = vaults.vault('a').tokenize('jane@example.com').text;
    expect(vaults.vault('a').detokenize(token).text).toBe('jane@example.com');
    expect(vaults.vault('b').detokenize(token)).toMatchObject({ text: token, unknown: [token] });
  });

  it('forgets a dropped session', () => {
    const vaults = new PiiVaults();
    const token = vaults.vault('a').tokenize('jane@example.com').text;
    vaults.drop('a');
    vaults.drop('never-existed');
    expect(vaults.has('a')).toBe(false);
    expect(vaults.vault('a').detokenize(token).unknown).toEqual([token]);
  });

  it('expires a vault idle past the TTL, and use keeps it alive', () => {
    let now = 0;
    const vaults = new PiiVaults({ sessionTtlSeconds: 10, now: () => now });
    vaults.vault('busy').tokenize('a@example.com');
    vaults.vault('idle').tokenize('b@example.com');
    now = 6_000;
    vaults.vault('busy');
    now = 12_000;
    expect(vaults.has('busy')).toBe(true);
    expect(vaults.has('idle')).toBe(false);
    expect(vaults.stats()).toEqual({ sessions: 1, tokens: 1 });
  });

  it('drops the least recently used session past maxSessions', () => {
    const vaults = new PiiVaults({ maxSessions: 2 });
    vaults.vault('a');
    vaults.vault('b');
    vaults.vault('a');
    vaults.vault('c');
    expect(['a', 'b', 'c'].filter((id) => vaults.has(id))).toEqual(['a', 'c']);
  });

  it('bounds each vault by maxTokensPerSession', () => {
    const vaults = new PiiVaults({ maxTokensPerSession: 2 });
    vaults.vault('a').tokenize('a@example.com b@example.com c@example.com');
    expect(vaults.stats()).toEqual({ sessions: 1, tokens: 2 });
  });

  it('reports counts, never values', () => {
    const vaults = new PiiVaults();
    vaults.vault('s1').tokenize('jane@example.com 4111 1111 1111 1111');
    const stats = vaults.stats();
    expect(stats).toEqual({ sessions: 1, tokens: 2 });
    expect(JSON.stringify(stats)).not.toMatch(/jane|4111/);
  });

  it('validates its options and session ids', () => {
    expect(() => new PiiVaults({ maxSessions: 0 })).toThrow(/maxSessions/);
    expect(() => new PiiVaults({ sessionTtlSeconds: -1 })).toThrow(/sessionTtlSeconds/);
    expect(() => new PiiVaults({ maxTokensPerSession: 1.5 })).toThrow(/maxTokensPerSession/);
    expect(() => new PiiVaults().vault('')).toThrow(/sessionId/);
  });
});
