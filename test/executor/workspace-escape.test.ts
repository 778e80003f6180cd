// Escaping the workspace from guest code: `..`, absolute and encoded paths, NUL bytes, over-long
// names, symlinks the test plants inside the namespace (to a file, to a folder, dangling), files
// past the size cap, and directories used as files. Each is refused with a clear error, and
// nothing outside the namespace is read, written, listed or deleted. The workspace root has a
// space in its name, so a host path that leaks into a message would show.

import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionResult } from '../../src/executor/index.js';
import { tempDir } from '../fixtures/config.js';
import { startSandbox, textOf } from '../fixtures/escape/sandbox.js';
import type { RunOptions, Sandbox } from '../fixtures/escape/sandbox.js';

const MAX_FILE_BYTES = 1024 * 1024;
const root = tempDir('cem ws escape ');
/** The random part mkdtemp added to the root's name: it can only come from a leaked host path. */
const ROOT_SUFFIX = root.slice(-6);
const outside = tempDir('cem-ws-outside-');
const SECRET = `SECRET-${randomUUID()}`;
const secretPath = path.join(outside, 'secret.txt');
const seen: ExecutionResult[] = [];

let sb: Sandbox;
let ns: string;

async function run(code: string, options?: RunOptions): Promise<ExecutionResult> {
  const r = await sb.run(code, options);
  seen.push(r);
  return r;
}

/** `call` (one sandbox API call) fails with `type` and a message matching `why`. */
async function expectRefused(call: string, type: string, why: RegExp, options?: RunOptions): Promise<ExecutionResult> {
  const r = await run(`return ${call}`, options);
  expect(r.success, `${call} -> ${JSON.stringify(r.result)}`).toBe(false);
  expect(r.error_type, `${call}: ${r.error}`).toBe(type);
  expect(r.error, call).toMatch(why);
  return r;
}

beforeAll(async () => {
  writeFileSync(secretPath, SECRET);
  sb = await startSandbox({
    workspaceDir: path.join(root, 'workspace'),
    limits: { maxFileBytes: MAX_FILE_BYTES },
    sandbox: { processes: 1, threadsPerProcess: 1 },
  });
  ns = sb.namespaceDir('agent-a');
  writeFileSync(path.join(sb.namespaceDir('agent-b'), 'b.txt'), 'agent b only');
  writeFileSync(path.join(ns, 'inside.txt'), 'inside');
  writeFileSync(path.join(ns, 'big.bin'), Buffer.alloc(MAX_FILE_BYTES + 1, 120));
  mkdirSync(path.join(ns, 'dir'));
  writeFileSync(path.join(ns, 'dir', 'f.txt'), 'f');
  // Planted from outside the sandbox: links a guest could find in its namespace.
  symlinkSync(secretPath, path.join(ns, 'link-out'));
  symlinkSync(path.join(outside, 'dangling-target.txt'), path.join(ns, 'dangling-out'));
  symlinkSync(outside, path.join(ns, 'dirlink'));
  symlinkSync(path.join(ns, 'inside.txt'), path.join(ns, 'link-in'));
}, 60_000);

afterAll(async () => {
  await sb?.close();
});

describe('paths that climb out are refused', () => {
  it('.., a/../../x, another namespace, absolute and drive paths', async () => {
    const outsideName = JSON.stringify(path.relative(ns, secretPath));
    await expectRefused("read_file('..')", 'PermissionError', /leads outside the workspace/);
    await expectRefused("read_file('../agent-b/b.txt')", 'PermissionError', /leads outside the workspace/);
    await expectRefused("read_file('a/../../x')", 'PermissionError', /leads outside the workspace/);
    await expectRefused(`read_file(${outsideName})`, 'PermissionError', /leads outside the workspace/);
    await expectRefused(`read_file(${JSON.stringify(secretPath)})`, 'PermissionError', /is absolute; paths are relative to the workspace/);
    await expectRefused("read_file('/etc/passwd')", 'PermissionError', /is absolute/);
    await expectRefused("read_file('C:/Windows/win.ini')", 'PermissionError', /is absolute/);
    await expectRefused("read_file('..\\\\x')", 'WorkspaceError', /backslash/);
    await expectRefused("write_file('../../escaped.txt', 'x')", 'PermissionError', /leads outside the workspace/);
    await expectRefused("write_file('a/../../../escaped.txt', 'x')", 'PermissionError', /leads outside the workspace/);
    await expectRefused(`write_file(${JSON.stringify(path.join(outside, 'abs.txt'))}, 'x')`, 'PermissionError', /is absolute/);
    await expectRefused("delete_file('../agent-b/b.txt')", 'PermissionError', /leads outside the workspace/);
    await expectRefused("list_files('..')", 'PermissionError', /leads outside the workspace/);
    await expectRefused("list_files('../agent-b')", 'PermissionError', /leads outside the workspace/);
    expect(existsSync(path.join(root, 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(root, 'workspace', 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'abs.txt'))).toBe(false);
    expect(readFileSync(path.join(sb.namespaceDir('agent-b'), 'b.txt'), 'utf8')).toBe('agent b only');
  });

  it('the workspace itself is not a file', async () => {
    await expectRefused("read_file('.')", 'WorkspaceError', /names the workspace itself/);
    await expectRefused("write_file('.', 'x')", 'WorkspaceError', /names the workspace itself/);
    await expectRefused("delete_file('a/..')", 'WorkspaceError', /names the workspace itself/);
    await expectRefused("read_file('')", 'WorkspaceError', /must not be empty/);
    // './' too: see F7 below.
    for (const call of ["write_file('./', 'x')", "delete_file('./')"]) {
      const r = await run(`return ${call}`);
      expect(r.success, call).toBe(false);
    }
    expect(existsSync(ns)).toBe(true);
  });

  // Regression for finding F7 (fixed in c6bca60): normalizeRelative() stripped trailing slashes
  // after its "names the workspace itself" check, so './' was refused for a wrong reason
  // ('Access denied: ".." leads outside the workspace').
  it("'./' is refused as naming the workspace itself (F7)", async () => {
    await expectRefused("write_file('./', 'x')", 'WorkspaceError', /names the workspace itself/);
    await expectRefused("delete_file('./')", 'WorkspaceError', /names the workspace itself/);
  });

  it('encoded and look-alike names are plain names inside the namespace', async () => {
    const names = ['%2e%2e/enc1.txt', '..%2fenc2.txt', '\uff0e\uff0e/enc3.txt', '.../enc4.txt', '~/enc5.txt', 'file:/enc6.txt'];
    const r = await run(`for (const n of ${JSON.stringify(names)}) write_file(n, 'x'); return list_files()`);
    expect(r.error, r.traceback).toBeUndefined();
    for (const n of names) {
      expect(r.result).toContain(n);
      expect(existsSync(path.join(ns, n))).toBe(true);
    }
    expect(existsSync(path.join(root, 'workspace', 'enc1.txt'))).toBe(false);
    expect(existsSync(path.join(root, 'enc2.txt'))).toBe(false);
  });

  it('NUL and control characters are refused', async () => {
    await expectRefused("read_file('inside.txt\\u0000.png')", 'WorkspaceError', /NUL or control character/);
    await expectRefused("write_file('a\\u0000/../../x', 'x')", 'WorkspaceError', /NUL or control character/);
    await expectRefused("write_file('line\\nbreak.txt', 'x')", 'WorkspaceError', /NUL or control character/);
  });

  it('over-long names are refused: a segment past 255 bytes, a path past 1024 characters', async () => {
    await expectRefused("write_file('x'.repeat(256), 'x')", 'WorkspaceError', /longer than 255 bytes/);
    await expectRefused("write_file('\\u00e9'.repeat(128), 'x')", 'WorkspaceError', /longer than 255 bytes/);
    await expectRefused("read_file('a/'.repeat(600) + 'f')", 'WorkspaceError', /the limit is 1024/);
    const ok = await run("write_file('y'.repeat(255), 'x'); return read_file('y'.repeat(255))");
    expect(ok.result).toBe('x');
  });
});

describe('symlinks planted in the namespace do not lead out', () => {
  it('a link to a file outside: read and write through it are refused, the target is untouched', async () => {
    await expectRefused("read_file('link-out')", 'PermissionError', /leads outside the workspace/);
    const write = await run("return write_file('link-out', 'overwritten')");
    expect(write.success).toBe(false);
    // Refused as leading outside, or (since F5) as a symbolic link, whatever its target.
    expect(`${write.error_type}: ${write.error}`).toMatch(/^PermissionError: .*leads outside the workspace|^WorkspaceError: .*symbolic link/);
    expect(readFileSync(secretPath, 'utf8')).toBe(SECRET);
  });

  it('a link to a folder outside: reading, writing, listing and deleting below it are refused', async () => {
    await expectRefused("read_file('dirlink/secret.txt')", 'PermissionError', /leads outside the workspace/);
    await expectRefused("write_file('dirlink/planted.txt', 'x')", 'PermissionError', /leads outside the workspace/);
    await expectRefused("write_file('dirlink/sub/planted.txt', 'x')", 'PermissionError', /leads outside the workspace/);
    await expectRefused("list_files('dirlink')", 'PermissionError', /leads outside the workspace/);
    await expectRefused("delete_file('dirlink/secret.txt')", 'PermissionError', /leads outside the workspace/);
    expect(existsSync(path.join(outside, 'planted.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'sub'))).toBe(false);
    expect(readFileSync(secretPath, 'utf8')).toBe(SECRET);
  });

  it('listing the namespace does not follow links: nothing of the outside folder shows', async () => {
    const r = await run('return list_files()');
    const files = r.result as string[];
    expect(files).toContain('inside.txt');
    expect(files).toContain('dir/f.txt');
    for (const f of files) expect(f).not.toMatch(/secret|dirlink|link-out/);
  });

  it('a dangling link to a missing file outside: writing through it creates nothing outside', async () => {
    const r = await run("return write_file('dangling-out', 'planted')");
    expect(r.success).toBe(false);
    expect(existsSync(path.join(outside, 'dangling-target.txt'))).toBe(false);
  });

  // Regression for finding F5 (fixed in c6bca60): writeFile() let a symlink whose target is inside
  // (or missing) through its checks, then open(..., O_NOFOLLOW) failed with a raw ELOOP: error_type
  // "Error", "ELOOP: too many symbolic links encountered, open '<path> ws escape XXXXXX<path>'",
  // leaking the parts of the root path after a space past hostErrorOf()'s scrub.
  it('writing to a symlink is refused with a clear workspace error and no host path fragments (F5)', async () => {
    for (const link of ['link-in', 'dangling-out']) {
      const r = await run(`return write_file(${JSON.stringify(link)}, 'x')`);
      expect(['WorkspaceError', 'PermissionError']).toContain(r.error_type);
      expect(r.error).toMatch(/link/i);
      expect(r.error).not.toMatch(/ELOOP|<path>/);
      expect(r.error).not.toContain(ROOT_SUFFIX);
    }
  });

  it('deleting links removes the links, never their targets', async () => {
    const r = await run("delete_file('link-out'); delete_file('dirlink'); return list_files()");
    expect(r.error, r.traceback).toBeUndefined();
    expect(() => lstatSync(path.join(ns, 'link-out'))).toThrow();
    expect(() => lstatSync(path.join(ns, 'dirlink'))).toThrow();
    expect(readFileSync(secretPath, 'utf8')).toBe(SECRET);
    expect(existsSync(outside)).toBe(true);
  });
});

describe('sizes and kinds', () => {
  it('files past the size cap are refused both ways', async () => {
    await expectRefused("read_file('big.bin')", 'WorkspaceError', new RegExp(`is ${MAX_FILE_BYTES + 1} bytes, over the ${MAX_FILE_BYTES}-byte file limit`));
    await expectRefused(`write_file('too-big.txt', 'x'.repeat(${MAX_FILE_BYTES + 1}))`, 'WorkspaceError', new RegExp(`content is ${MAX_FILE_BYTES + 1} bytes, over the ${MAX_FILE_BYTES}-byte file limit`));
    expect(existsSync(path.join(ns, 'too-big.txt'))).toBe(false);
  });

  it('directories are not files: writing over one, reading one, writing below a file, deleting a full one', async () => {
    await expectRefused("write_file('dir', 'x')", 'WorkspaceError', /is a directory/);
    await expectRefused("write_file('dir/', 'x')", 'WorkspaceError', /is a directory/);
    await expectRefused("read_file('dir')", 'WorkspaceError', /is a directory; use list_files/);
    await expectRefused("write_file('inside.txt/child.txt', 'x')", 'WorkspaceError', /is a file, not a directory/);
    await expectRefused("delete_file('dir')", 'WorkspaceError', /non-empty directory/);
    expect(readFileSync(path.join(ns, 'dir', 'f.txt'), 'utf8')).toBe('f');
    expect(readFileSync(path.join(ns, 'inside.txt'), 'utf8')).toBe('inside');
  });

  it('missing files and folders are reported as such', async () => {
    await expectRefused("read_file('nope.txt')", 'FileNotFoundError', /File not found: "nope.txt"/);
    await expectRefused("delete_file('nope.txt')", 'FileNotFoundError', /File not found/);
    await expectRefused("list_files('nope')", 'FileNotFoundError', /Directory not found/);
  });
});

describe('permissions', () => {
  it('a read-only agent cannot write or delete; an agent without workspace access cannot read', async () => {
    const readOnly = { workspace: 'read' as const, skills: 'none' as const, tools: [], net: [] };
    const none = { ...readOnly, workspace: 'none' as const };
    await expectRefused("write_file('ro.txt', 'x')", 'PermissionError', /write_file needs the "workspace" permission "read-write", and agent "[^"]+" has "read"/, { permissions: readOnly });
    await expectRefused("delete_file('inside.txt')", 'PermissionError', /delete_file needs the "workspace" permission "read-write", and agent "[^"]+" has "read"/, { permissions: readOnly });
    await expectRefused("read_file('inside.txt')", 'PermissionError', /read_file needs the "workspace" permission "read", and agent "[^"]+" has "none"/, { permissions: none });
    expect(existsSync(path.join(ns, 'ro.txt'))).toBe(false);
    expect(existsSync(path.join(ns, 'inside.txt'))).toBe(true);
  });
});

describe('after every probe', () => {
  it('no message named a host path and the secret never surfaced', () => {
    expect(seen.length).toBeGreaterThan(30);
    for (const r of seen) {
      const text = textOf(r);
      expect(text).not.toContain(SECRET);
      for (const p of [root, path.join(root, 'workspace'), process.cwd()]) expect(text).not.toContain(p);
      expect(text).not.toContain(ROOT_SUFFIX);
    }
  });
});
