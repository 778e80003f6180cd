// Shared fixtures for the skill store tests: temp folders, a store on them, an import_skill
// runtime that evaluates compiled bodies the way the sandbox does, and polling for watcher tests.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { SkillStore } from '../../src/skills/index.js';
import type { SkillCaller, SkillStoreOptions } from '../../src/skills/index.js';
import { silentLogger } from '../../src/util/logger.js';

type AsyncFunctionConstructor = new (...args: string[]) => (...args: unknown[]) => Promise<unknown>;
export const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as AsyncFunctionConstructor;

export async function makeTempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'skills-test-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function makeStore(dir: string, options: Partial<SkillStoreOptions> = {}): SkillStore {
  return new SkillStore({ dir, logger: silentLogger(), ...options });
}

/** import_skill as the sandbox provides it: compile, evaluate once per call tree, share results; as `caller` when given. */
export function importer(store: SkillStore, caller?: SkillCaller): (name: string) => Promise<Record<string, unknown>> {
  const modules = new Map<string, Promise<Record<string, unknown>>>();
  const importSkill = (name: string): Promise<Record<string, unknown>> => {
    let module = modules.get(name);
    if (!module) {
      module = store.compileSkill(name, caller).then((compiled) => {
        const evaluate = new AsyncFunction('import_skill', compiled.body);
        return evaluate(importSkill) as Promise<Record<string, unknown>>;
      });
      modules.set(name, module);
    }
    return module;
  };
  return importSkill;
}

/** Polls `check` until it holds; fails after `timeoutMs` (generous: behaviour, not timing, is tested). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await delay(20);
  }
}
