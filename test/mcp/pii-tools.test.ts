// sanitize_pii / restore_pii keyed by MCP session, and the pii.auto boundary on what leaves the
// daemon (execute_code results and output, read_workspace_file content).

import { afterEach, describe, expect, it } from 'vitest';
import { createPiiBoundary } from '../../src/mcp/pii-boundary.js';
import { PiiVaultStore } from '../../src/pii/index.js';
import { startHarness } from '../fixtures/mcp/harness.js';
import type { Harness } from '../fixtures/mcp/harness.js';

const open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

async function harness(options: Parameters<typeof startHarness>[0]): Promise<Harness> {
  const h = await startHarness(options);
  open.push(h);
  return h;
}

describe('PII tools', () => {
  it('sanitizes and restores within one session', async () => {
    const h = await harness({ pii: new PiiVaultStore() });
    const sanitized = await h.client.callTool({ name: 'sanitize_pii', arguments: { text: 'mail jane@example.com now' } });
    const out = sanitized.structuredContent as { sanitized_text: string; pii_found: number; pii_types: string[] };
    expect(out.sanitized_text).toMatch(/^mail \[EMAIL_[0-9a-f]{8}\] now$/);
    expect(out).toMatchObject({ pii_found: 1, pii_types: ['EMAIL'] });
    const restored = await h.client.callTool({ name: 'restore_pii', arguments: { text: out.sanitized_text } });
    expect(restored.structuredContent).toEqual({ restored_text: 'mail jane@example.com now' });
  });

  it('restores a token made in another session of the same agent, and says why one does not restore', async () => {
    const vaults = new PiiVaultStore();
    const a = await harness({ pii: vaults, sessionId: 'session-a' });
    const b = await harness({ pii: vaults, sessionId: 'session-b' });
    const sanitized = await a.client.callTool({ name: 'sanitize_pii', arguments: { text: 'jane@example.com' } });
    const token = (sanitized.structuredContent as { sanitized_text: string }).sanitized_text;
    const restored = await b.client.callTool({ name: 'restore_pii', arguments: { text: token } });
    expect(restored.structuredContent).toEqual({ restored_text: 'jane@example.com' });
    const forged = await b.client.callTool({ name: 'restore_pii', arguments: { text: '[EMAIL_0badf00d]' } });
    expect(forged.structuredContent).toMatchObject({ restored_text: '[EMAIL_0badf00d]', unknown_tokens: ['[EMAIL_0badf00d]'], unknown_reasons: { '[EMAIL_0badf00d]': 'unknown' } });
  });

  it('leaves the PII tools out when the PII subsystem is not wired', async () => {
    const h = await harness({});
    const names = (await h.client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('sanitize_pii');
  });
});

describe('pii.auto boundary', () => {
  it('tokenizes execute_code results and output and read_workspace_file content', async () => {
    const vaults = new PiiVaultStore();
    const h = await harness({ pii: vaults, boundary: createPiiBoundary(vaults) });
    const run = await h.client.callTool({
      name: 'execute_code',
      arguments: { code: 'console.log("call 555-867-5309"); return { who: "jane@example.com" }' },
    });
    const result = run.structuredContent as { result: { who: string }; output: string[] };
    expect(result.result.who).toMatch(/^\[EMAIL_[0-9a-f]{8}\]$/);
    expect(result.output[0]).toMatch(/^call \[PHONE_[0-9a-f]{8}\]$/);
    expect(JSON.stringify(run.content)).not.toContain('jane@example.com');

    await h.client.callTool({ name: 'write_workspace_file', arguments: { filename: 'c.txt', content: 'jane@example.com' } });
    const read = await h.client.callTool({ name: 'read_workspace_file', arguments: { filename: 'c.txt' } });
    const content = (read.structuredContent as { content: string }).content;
    expect(content).toBe(result.result.who);
    const restored = await h.client.callTool({ name: 'restore_pii', arguments: { text: content } });
    expect(restored.structuredContent).toEqual({ restored_text: 'jane@example.com' });
  });
});
