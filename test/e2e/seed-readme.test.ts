// Every example of the seed server's README ("Code Execution MCP"), run verbatim through MCP
// against the real coordinator (catalog, skills, PII vaults, JavaScript and Python sandboxes),
// with no `language` argument, as the seed's prompts are written; each answer is the seed's.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Coordinator } from '../../src/daemon.js';
import { startCoordinator } from '../../src/daemon.js';
import { silentLogger } from '../../src/util/logger.js';
import { testConfig } from '../fixtures/config.js';
import { runCli, scratch } from '../fixtures/mcp/cli.js';
import { connectInMemory } from '../fixtures/mcp/harness.js';
import { PYTHON_START_MS } from '../python/helpers.js';

const CATALOG_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../catalog');

let coordinator: Coordinator;
let connection: Awaited<ReturnType<typeof connectInMemory>>;
let client: Client;

beforeAll(async () => {
  const base = testConfig();
  const config = { ...base, catalogDir: CATALOG_DIR, sandbox: { processes: 1, threadsPerProcess: 1, pythonProcesses: 1 } };
  coordinator = await startCoordinator(config, silentLogger(), { watch: false });
  const warm = await coordinator.executor.execute(
    { code: 'result = 1', language: 'python', timeoutSeconds: PYTHON_START_MS / 1000 - 10, memoryMb: 500 },
    { agent: 'warm', sessionId: 'warm', workspaceNamespace: '', permissions: config.defaultPermissions },
  );
  if (!warm.success) throw new Error(`the Python sandbox did not start: ${warm.error}`);
  connection = await connectInMemory(coordinator.services, { sessionId: 'seed-session', name: 'agent', workspaceNamespace: '', permissions: config.defaultPermissions });
  client = connection.client;
}, PYTHON_START_MS);

afterAll(async () => {
  await connection?.close();
  await coordinator?.close();
});

async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await client.callTool({ name, arguments: args });
  expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
  return r.structuredContent as Record<string, unknown>;
}

describe("the seed README's examples", () => {
  it('Efficient Data Processing: returns only the summary', async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({ id: i, status: i % 4 === 0 ? 'active' : 'inactive' }));
    await call('write_workspace_file', { filename: 'large_dataset.json', content: JSON.stringify(rows) });
    // Seed README, "Efficient Data Processing": the code as written, execute_code(code).
    const code = `
data = json.loads(read_file("large_dataset.json"))
filtered = [d for d in data if d['status'] == 'active']
result = {
    'total': len(data),
    'active': len(filtered),
    'sample': filtered[:5]
}
`;
    const r = await call('execute_code', { code });
    const active = rows.filter((d) => d.status === 'active');
    expect(r).toMatchObject({ success: true, language: 'python', result: { total: 10_000, active: active.length, sample: active.slice(0, 5) } });
  });

  it('Progressive Tool Discovery: finds the security tools and loads one definition', async () => {
    // Seed README, "Progressive Tool Discovery".
    const found = await call('search_tools', { query: 'vulnerability', category: 'security', detail_level: 'summary' });
    expect(found).toMatchObject({ query: 'vulnerability', category: 'security', detail_level: 'summary' });
    const tools = found['tools'] as Record<string, unknown>[];
    expect(tools.map((t) => t['name'])).toContain('web_vuln_scanner');
    // The seed's summary fields, plus whether the tool can be called here (its server is not configured).
    // The reason is on the tool, or once in not_callable[category] when the category's listed tools share it.
    const shared = (found['not_callable'] ?? {}) as Record<string, string>;
    for (const tool of tools) {
      const seedFields = Object.keys(tool).filter((k) => k !== 'why').sort();
      expect(seedFields).toEqual(['callable', 'category', 'description', 'description_only', 'mcp_server', 'name']);
      expect(tool['callable']).toBe(false);
      expect(tool['why'] ?? shared[tool['category'] as string]).toMatch(/not configured/);
    }
    const definition = await call('get_tool_definition', { tool_name: 'web_vuln_scanner', category: 'security' });
    expect(definition).toMatchObject({
      name: 'web_vuln_scanner',
      category: 'security',
      mcp_server: 'security-scanner',
      functions: ['scan_url', 'scan_api', 'get_scan_report'],
      description_only: true,
    });
    expect(definition['use_cases']).toContain('OWASP Top 10 checks');
    expect(definition['typescript']).toMatch(/^\/\/ web_vuln_scanner: description-only/);
    expect(definition['typescript']).not.toMatch(/function/);
  });

  it('Privacy-Preserving Operations: tokenizes, then restores', async () => {
    // Seed README, "Privacy-Preserving Operations".
    const sanitized = await call('sanitize_pii', { text: 'Contact john@example.com at 555-123-4567' });
    expect(sanitized['sanitized_text']).toMatch(/^Contact \[EMAIL_[0-9a-f]{8}\] at \[PHONE_[0-9a-f]{8}\]$/);
    expect(sanitized).toMatchObject({ pii_found: 2 });
    const email = /\[EMAIL_[0-9a-f]{8}\]/.exec(String(sanitized['sanitized_text']))?.[0];
    expect(await call('restore_pii', { text: email })).toMatchObject({ restored_text: 'john@example.com' });
  });

  it('Building Skills: saves the Python skill, then runs it with exec(load_skill(...))', async () => {
    // Seed README, "Building Skills": save_skill as written (no language argument).
    const saved = await call('save_skill', {
      name: 'filter_high_risk',
      code: "def filter_high_risk(vulns): return [v for v in vulns if v['severity'] in ['high', 'critical']]",
      description: 'Filter vulnerabilities to high/critical only',
    });
    expect(saved).toMatchObject({ success: true, name: 'filter_high_risk' });
    const vulns = [
      { id: 1, severity: 'low' },
      { id: 2, severity: 'critical' },
      { id: 3, severity: 'high' },
      { id: 4, severity: 'medium' },
    ];
    await call('write_workspace_file', { filename: 'scan_results.json', content: JSON.stringify(vulns) });
    // Seed README, "Building Skills": "Use in future code execution".
    const code = `
skill = load_skill("filter_high_risk")
exec(skill)
vulns = json.loads(read_file("scan_results.json"))
result = filter_high_risk(vulns)
`;
    const r = await call('execute_code', { code });
    expect(r).toMatchObject({ success: true, language: 'python', result: [vulns[1], vulns[2]] });
    const loaded = await call('load_skill', { name: 'filter_high_risk' });
    expect(loaded).toMatchObject({ name: 'filter_high_risk', code: "def filter_high_risk(vulns): return [v for v in vulns if v['severity'] in ['high', 'critical']]" });
  });

  it("Workspace and the sandbox API: the seed's shapes and Python signatures", async () => {
    expect(await call('write_workspace_file', { filename: 'notes/a.txt', content: 'hello' })).toMatchObject({ success: true, message: 'Written 5 bytes to notes/a.txt' });
    expect(await call('read_workspace_file', { filename: 'notes/a.txt' })).toMatchObject({ success: true, filename: 'notes/a.txt', content: 'hello', size: 5 });
    expect(await call('list_workspace_files', { subpath: 'notes' })).toMatchObject({ success: true, path: 'notes', files: ['notes/a.txt'], count: 1 });
    const code = `
sanitized, tokens = tokenize_pii("mail john@example.com")
restored = detokenize_pii(sanitized, tokens)
message = save_skill("double_it", "function double_it(x) { return 2 * x }", "doubles", "javascript")
return {'sanitized': sanitized, 'tokens': tokens, 'restored': restored, 'vault': detokenize_pii(sanitized), 'message': message}
`;
    const r = await call('execute_code', { code, timeout_seconds: 60 });
    expect(r).toMatchObject({ success: true, language: 'python' });
    const out = r['result'] as Record<string, unknown>;
    expect(out['sanitized']).toMatch(/^mail \[EMAIL_[0-9a-f]{8}\]$/);
    expect(Object.values(out['tokens'] as Record<string, string>)).toEqual(['john@example.com']);
    expect(out).toMatchObject({ restored: 'mail john@example.com', vault: 'mail john@example.com', message: "Skill 'double_it' saved successfully" });
  });

  it('accepts `return X` at the top level of Python code, as the tool description says', async () => {
    const code = [
      'def first_even(xs):',
      '    for x in xs:',
      '        if x % 2 == 0:',
      '            return x',
      'steps = []',
      'try:',
      '    for i in range(10):',
      '        if i == 3:',
      "            return {'found': first_even([1, 3, 8]), 'at': i, 'steps': steps}",
      '        steps.append(i)',
      'finally:',
      "    print('cleanup ran')",
      "result = 'not reached'",
    ].join('\n');
    const r = await call('execute_code', { code });
    expect(r).toMatchObject({ success: true, language: 'python', result: { found: 8, at: 3, steps: [0, 1, 2] }, output: ['cleanup ran'] });
    // 'x = 5' alone is valid JavaScript too: ambiguous code needs the language.
    expect(await call('execute_code', { code: 'x = 5\nreturn', language: 'python' })).toMatchObject({ success: true, result: null, language: 'python' });
  });

  it('says which language to pass when the code parses only in another one', async () => {
    const r = await client.callTool({ name: 'execute_code', arguments: { code: 'rows = [r for r in range(3)]\nresult = len(rows)', language: 'javascript' } });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ success: false, error_type: 'SyntaxError', language: 'javascript' });
    expect((r.structuredContent as { error: string }).error).toMatch(/this looks like Python; pass language: "python"$/);
    const js = await call('execute_code', { code: 'const xs = [1, 2, 3];\nreturn xs.map((x) => x * 2);' });
    expect(js).toMatchObject({ success: true, result: [2, 4, 6], language: 'javascript' });
  });
});

describe('exec without --language', () => {
  it('detects Python from stdin, runs it and names the language', async () => {
    const s = scratch();
    try {
      const r = await runCli(['exec', '-'], s.env, 'rows = [r * 2 for r in range(3)]\nreturn rows\n');
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ success: true, result: [0, 2, 4], language: 'python' });
      const js = await runCli(['exec', '-'], s.env, 'return [1, 2].map((x) => x + 1)');
      expect(JSON.parse(js.stdout)).toMatchObject({ success: true, result: [2, 3], language: 'javascript' });
    } finally {
      s.remove();
    }
  }, PYTHON_START_MS);
});
