// Integration benchmark: costs that cross subsystems, through the composition root. An upstream
// tool call made from sandbox code against the same call made directly by an MCP client (the
// UpstreamManager), and import_skill inside a call, warm (compiled and cached) versus cold.

import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCoordinator } from '../src/daemon.js';
import type { CallIdentity } from '../src/executor/index.js';
import { silentLogger } from '../src/util/logger.js';
import type { BenchRow, BenchSection } from './bench-types.js';
import { benchConfig } from './executor-bench.js';
import { load, percentile, round, summary } from './stats.js';

const require = createRequire(import.meta.url);

function memoryServerEntry(): string {
  const manifest = require.resolve('@modelcontextprotocol/server-memory/package.json');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string | Record<string, string> };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : (Object.values(pkg.bin)[0] as string);
  return path.join(path.dirname(manifest), bin);
}

export const integrationBench: BenchSection = {
  group: 'integration',
  async run(progress) {
    const rows: BenchRow[] = [];
    const root = mkdtempSync(path.join(tmpdir(), 'cem-bench-int-'));
    const config = {
      ...benchConfig(root),
      mcpServers: { memory: { command: process.execPath, args: [memoryServerEntry()], env: { MEMORY_FILE_PATH: path.join(root, 'memory.jsonl') } } },
    };
    const coordinator = await startCoordinator(config, silentLogger(), { watch: false });
    const identity: CallIdentity = { agent: 'bench', sessionId: 'bench', workspaceNamespace: '', permissions: config.defaultPermissions };
    const exec = async (code: string): Promise<void> => {
      const r = await coordinator.executor.execute({ code, language: 'javascript', timeoutSeconds: 30, memoryMb: 500 }, identity);
      if (!r.success) throw new Error(`benchmark call failed: ${r.error_type}: ${r.error}`);
    };
    try {
      progress('integration: waiting for the upstream memory server');
      for (let i = 0; i < 200 && coordinator.upstream.status().memory?.state !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
      await coordinator.upstream.callTool('memory', 'create_entities', { entities: [{ name: 'bench', entityType: 'thing', observations: ['x'] }] });

      progress('integration: upstream tool call, direct MCP client');
      const direct = await load(300, 1, () => coordinator.upstream.callTool('memory', 'read_graph', {}));
      progress('integration: upstream tool call from sandbox code');
      const fromCode = await load(300, 1, () => exec('return (await tools.memory.read_graph({})).entities.length'));
      const p50 = (l: number[]) => round(percentile(l, 50), 3);
      rows.push({ group: 'integration', name: 'upstream call direct (MCP client, memory.read_graph)', value: p50(direct.latencies), unit: 'ms', extra: summary(direct.latencies) });
      rows.push({
        group: 'integration',
        name: 'upstream call from sandbox code (execute_code + tools.memory.read_graph)',
        value: p50(fromCode.latencies),
        unit: 'ms',
        extra: summary(fromCode.latencies),
        baseline: { name: 'direct MCP client call', ratio: round(p50(fromCode.latencies) / Math.max(0.001, p50(direct.latencies)), 2) },
      });

      // What a script that calls a tool many times pays per call: 20 calls inside one execute_code
      // (its own overhead spread over them), against 20 direct calls, rounds interleaved.
      progress('integration: upstream tool calls in a loop inside one call, against direct calls');
      const LOOP = 20;
      const loopDirect: number[] = [];
      const loopCode: number[] = [];
      for (let round = 0; round < 40; round++) {
        let t = performance.now();
        for (let i = 0; i < LOOP; i++) await coordinator.upstream.callTool('memory', 'read_graph', {});
        loopDirect.push((performance.now() - t) / LOOP);
        t = performance.now();
        await exec(`for (let i = 0; i < ${LOOP}; i++) await tools.memory.read_graph({}); return 1`);
        loopCode.push((performance.now() - t) / LOOP);
      }
      const loopRatio = round(p50(loopCode) / Math.max(0.001, p50(loopDirect)), 2);
      rows.push({ group: 'integration', name: `upstream call direct, ${LOOP} in a row (per call)`, value: p50(loopDirect), unit: 'ms', extra: summary(loopDirect) });
      rows.push({
        group: 'integration',
        name: `upstream call from sandbox code, ${LOOP} in a loop of one call (per call)`,
        value: p50(loopCode),
        unit: 'ms',
        extra: summary(loopCode),
        baseline: { name: 'direct MCP client call, in a row', ratio: loopRatio },
        target: '<= 1.3x direct',
        met: loopRatio <= 1.3,
      });

      progress('integration: import_skill inside a call, warm and cold');
      await coordinator.skills.save({ name: 'bench_skill', code: 'export function double(x) { return x * 2 }\nexport const version = 1;' });
      const useSkill = "const { double } = await import_skill('bench_skill'); return double(21)";
      const plain = await load(300, 1, () => exec('return 42'));
      const warm = await load(300, 1, () => exec(useSkill));
      const cold: number[] = [];
      for (let i = 0; i < 40; i++) {
        // A new version each time: the store compiles it afresh and the preprocessed source is new.
        await coordinator.skills.save({ name: 'bench_skill', code: `export function double(x) { return x * 2 }\nexport const version = ${i + 2};` });
        const t = performance.now();
        await exec(useSkill);
        cold.push(performance.now() - t);
      }
      const base = p50(plain.latencies);
      rows.push({ group: 'integration', name: 'call without import_skill (reference)', value: base, unit: 'ms', extra: summary(plain.latencies) });
      rows.push({ group: 'integration', name: 'call with import_skill, warm (cached compile)', value: p50(warm.latencies), unit: 'ms', extra: { ...summary(warm.latencies), added_ms: round(p50(warm.latencies) - base, 3) } });
      rows.push({ group: 'integration', name: 'call with import_skill, cold (skill just changed)', value: round(percentile(cold, 50), 3), unit: 'ms', extra: { ...summary(cold), added_ms: round(percentile(cold, 50) - base, 3) } });
    } finally {
      await coordinator.close();
    }
    return rows;
  },
};
