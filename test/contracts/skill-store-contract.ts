// The contract of skill storage (src/skills/skill-repository.ts), written once so every store can
// run it: today the folder store (SkillStore). What the tools and the sandbox rely on: a save is
// loaded, listed and deleted whole; with agents configured a private skill is invisible to other
// agents and its name is not theirs to take; bad names and code are refused with the code that
// says why; concurrent saves of one name leave one whole version; a reopened store holds what was
// acknowledged; each agent's quota is its own and names the option to raise.

import { describe, expect, it } from 'vitest';
import { SkillError } from '../../src/skills/index.js';
import type { SkillCaller, SkillRepository } from '../../src/skills/index.js';

export interface SkillStoreHarness {
  /** A fresh, empty, started store; `quota` each agent's share. */
  store(options?: { quota?: { count?: number; bytes?: number }; maxCodeBytes?: number }): Promise<SkillRepository>;
  /** A new started store over what the last `store()` saved (a restart), once that one is closed. */
  reopen(): Promise<SkillRepository>;
}

const alice: SkillCaller = { agent: 'alice', agentsConfigured: true };
const bob: SkillCaller = { agent: 'bob', agentsConfigured: true };

async function refusal(promise: Promise<unknown>): Promise<SkillError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SkillError);
  return error as SkillError;
}

export function describeSkillStoreContract(name: string, harness: SkillStoreHarness): void {
  describe(`skill store contract: ${name}`, () => {
    it('saves, loads, lists and deletes a skill whole', async () => {
      const store = await harness.store();
      await store.save({ name: 'add_one', code: 'export function addOne(x) {\n  return x + 1;\n}\n', description: 'adds one' }, alice);
      const loaded = await store.load('add_one', alice);
      expect(loaded.code).toBe('export function addOne(x) {\n  return x + 1;\n}\n');
      expect(loaded.metadata).toMatchObject({ name: 'add_one', description: 'adds one', language: 'javascript' });
      expect((await store.list(alice)).skills.map((s) => s.name)).toContain('add_one');
      expect((await store.compileSkill('add_one', alice)).body).toContain('addOne');
      expect(store.usage('alice')).toMatchObject({ skills: 1 });
      await store.delete('add_one', alice);
      expect((await refusal(store.load('add_one', alice))).code).toBe('SKILL_NOT_FOUND');
      expect(store.usage('alice')).toMatchObject({ skills: 0, bytes: 0 });
      await store.close();
    });

    it("keeps agents apart: another agent neither sees, loads, changes nor deletes a private skill", async () => {
      const store = await harness.store();
      const code = 'export const secret = "alice-private-payload";\n';
      await store.save({ name: 'secret_tool', code }, alice);
      expect((await store.list(bob)).skills.map((s) => s.name)).not.toContain('secret_tool');
      const hidden = await refusal(store.load('secret_tool', bob));
      expect(hidden.code).toBe('SKILL_NOT_FOUND');
      expect(hidden.message).not.toContain('alice-private-payload');
      expect((await refusal(store.compileSkill('secret_tool', bob))).code).toBe('SKILL_NOT_FOUND');
      expect((await refusal(store.save({ name: 'secret_tool', code: 'export const x = 1;\n' }, bob))).code).toBe('NOT_OWNER');
      expect((await refusal(store.delete('secret_tool', bob))).code).toBe('SKILL_NOT_FOUND');
      expect((await store.load('secret_tool', alice)).code).toBe(code);
      await store.close();
    });

    it('refuses bad names and bad code with the code that says why, and keeps serving', async () => {
      const store = await harness.store({ maxCodeBytes: 1000 });
      for (const bad of ['', '../escape', 'a/b', 'x'.repeat(200), 'has space']) {
        expect((await refusal(store.save({ name: bad, code: 'export const a = 1;\n' }, alice))).code, bad).toBe('INVALID_NAME');
      }
      expect((await refusal(store.save({ name: 'broken', code: 'export function (' }, alice))).code).toBe('SYNTAX_ERROR');
      const large = await refusal(store.save({ name: 'large', code: `export const s = "${'x'.repeat(1000)}";\n` }, alice));
      expect(large.code).toBe('CODE_TOO_LARGE');
      await store.save({ name: 'fine', code: 'export const a = 1;\n' }, alice);
      expect((await store.list(alice)).skills.map((s) => s.name)).toEqual(['fine']);
      await store.close();
    });

    it('concurrent saves of one name leave one whole version, loaded and listed alike', async () => {
      const store = await harness.store();
      const versions = Array.from({ length: 8 }, (_, i) => `export const version = ${i};\nexport const pad = "${'p'.repeat(i * 50)}";\n`);
      const saved = await Promise.allSettled(versions.map((code) => store.save({ name: 'raced', code }, alice)));
      expect(saved.some((r) => r.status === 'fulfilled')).toBe(true);
      const loaded = await store.load('raced', alice);
      expect(versions).toContain(loaded.code);
      expect((await store.list(alice)).skills.filter((s) => s.name === 'raced')).toHaveLength(1);
      expect(store.usage('alice').skills).toBe(1);
      await store.close();
    });

    it('a reopened store holds every acknowledged save and delete', async () => {
      const store = await harness.store();
      await store.save({ name: 'kept', code: 'export const k = 1;\n' }, alice);
      await store.save({ name: 'gone', code: 'export const g = 1;\n' }, alice);
      await store.delete('gone', alice);
      await store.close();
      const again = await harness.reopen();
      expect((await again.load('kept', alice)).code).toBe('export const k = 1;\n');
      expect((await refusal(again.load('gone', alice))).code).toBe('SKILL_NOT_FOUND');
      expect((await refusal(again.load('kept', bob))).code).toBe('SKILL_NOT_FOUND');
      await again.close();
    });

    it("holds each agent's quota on its own, naming the option to raise", async () => {
      const store = await harness.store({ quota: { count: 2 } });
      await store.save({ name: 'a1', code: 'export const a = 1;\n' }, alice);
      await store.save({ name: 'a2', code: 'export const a = 2;\n' }, alice);
      const over = await refusal(store.save({ name: 'a3', code: 'export const a = 3;\n' }, alice));
      expect(over.code).toBe('QUOTA_EXCEEDED');
      expect(over.message).toContain('limits.skillQuotaCount');
      await store.save({ name: 'a2', code: 'export const a = 22;\n' }, alice);
      await store.save({ name: 'b1', code: 'export const b = 1;\n' }, bob);
      expect(store.usage('bob')).toMatchObject({ skills: 1, quota_count: 2 });
      await store.close();
    });
  });
}
