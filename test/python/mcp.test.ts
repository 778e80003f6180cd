// The seed's Python flow through MCP: an agent writes a data file with write_workspace_file, then
// runs the seed's README code with execute_code(language="python"), over the SDK's linked
// in-memory transports, with the real executor and a real Pyodide worker behind the front.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor, createHostApi } from '../../src/executor/index.js';
import type { PooledExecutor } from '../../src/executor/index.js';
import { buildServices, connectInMemory } from '../fixtures/mcp/harness.js';
import { PYTHON_START_MS } from './helpers.js';

let executor: PooledExecutor;
let connection: Awaited<ReturnType<typeof connectInMemory>>;
let client: Client;

beforeAll(async () => {
  const { services, config } = await buildServices({
    configure: (c) => {
      c.sandbox = { processes: 1, threadsPerProcess: 1, pythonProcesses: 1 };
    },
  });
  executor = await createExecutor({ config, hostApi: createHostApi({ config, workspace: services.workspace, logger: services.logger }), logger: services.logger, workspace: services.workspace });
  const warm = await executor.execute(
    { code: 'result = 1', language: 'python', timeoutSeconds: PYTHON_START_MS / 1000 - 10, memoryMb: 500 },
    { agent: 'warm', sessionId: 'warm', workspaceNamespace: '', permissions: config.defaultPermissions },
  );
  if (!warm.success) throw new Error(`the Python sandbox did not start: ${warm.error}`);
  services.executor = executor;
  connection = await connectInMemory(services, { sessionId: 'python-session', name: 'tester', workspaceNamespace: '', permissions: config.defaultPermissions });
  client = connection.client;
}, PYTHON_START_MS);

afterAll(async () => {
  await connection?.close();
  await executor?.close();
});

describe('execute_code with language "python" over MCP', () => {
  it("runs the seed's README example and returns the seed's answer", async () => {
    const data = Array.from({ length: 30 }, (_, i) => ({ id: i, status: i % 2 === 0 ? 'active' : 'inactive' }));
    const written = await client.callTool({ name: 'write_workspace_file', arguments: { filename: 'large_data.json', content: JSON.stringify(data) } });
    expect(written.isError).toBeFalsy();
    const r = await client.callTool({
      name: 'execute_code',
      arguments: {
        language: 'python',
        code: [
          'data = json.loads(read_file("large_data.json"))',
          "filtered = [d for d in data if d['status'] == 'active']",
          'print(f"{len(filtered)} active")',
          'result = summarize_list(filtered, limit=5)',
        ].join('\n'),
      },
    });
    expect(r.isError).toBeFalsy();
    const active = data.filter((d) => d.status === 'active');
    expect(r.structuredContent).toMatchObject({ success: true, result: { count: active.length, sample: active.slice(0, 5) }, output: ['15 active'] });
  });

  it('reports a Python exception as a failed call with its class and traceback', async () => {
    const r = await client.callTool({ name: 'execute_code', arguments: { language: 'python', code: 'x = {}\nx["k"]' } });
    const body = r.structuredContent as { success: boolean; error_type?: string; traceback?: string };
    expect(body.success).toBe(false);
    expect(body.error_type).toBe('KeyError');
    expect(body.traceback).toContain('File "<code>", line 2');
  });
});
