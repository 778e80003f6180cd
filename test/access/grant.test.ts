// The access check's Grant is proof that the check happened: only src/access makes one, and what
// opens an agent's workspace (workspaceView, the worker's read grant) refuses anything else: a
// plain object, a subclass, a copy, a Proxy, a grant for another resource or a lower level.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS_RANK, Grant, PermissionDenied, allows, authorize, decide, requireGrant } from '../../src/access/index.js';
import type { AccessSubject } from '../../src/access/index.js';
import { Workspace, workspaceView } from '../../src/workspace/index.js';

const writer: AccessSubject = { name: 'writer', workspaceNamespace: 'writer', permissions: { workspace: 'read-write', skills: 'publish', tools: ['github.*'], net: ['*.example.com', 'api.test:8443'], operator: true } };
const reader: AccessSubject = { name: 'reader', workspaceNamespace: 'reader', permissions: { workspace: 'read', skills: 'read', tools: [], net: [] } };

let root: string;
let store: Workspace;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cem-grant-'));
  store = new Workspace({ root, maxFileBytes: 1024, sweepIntervalMs: 0 });
});
afterAll(async () => {
  store.close();
  await rm(root, { recursive: true, force: true });
});

describe('decide and authorize', () => {
  it('answer a Grant for what the permissions allow, and PermissionDenied naming the permission otherwise', () => {
    const granted = decide(writer, 'write_file', { kind: 'workspace', needs: 'read-write' });
    expect(granted).toBeInstanceOf(Grant);
    expect(Grant.isGenuine(granted)).toBe(true);
    const denied = decide(reader, 'write_file', { kind: 'workspace', needs: 'read-write' });
    expect(denied).toBeInstanceOf(PermissionDenied);
    expect(denied).toMatchObject({ code: 'PERMISSION_DENIED', agent: 'reader', action: 'write_file' });
    expect((denied as PermissionDenied).message).toBe(
      'permission denied: write_file needs the "workspace" permission "read-write", and agent "reader" has "read". An operator can grant it in the agent\'s "permissions.workspace" in the daemon configuration.',
    );
    expect(() => authorize(reader, 'save_skill', { kind: 'skills', needs: 'read-write' })).toThrow(PermissionDenied);
  });

  it('ranks the levels once: none < read < read-write < publish', () => {
    expect(ACCESS_RANK).toEqual({ none: 0, read: 1, 'read-write': 2, publish: 3 });
    expect(allows(writer, { kind: 'skills', needs: 'publish' })).toBe(true);
    expect(allows(reader, { kind: 'skills', needs: 'read' })).toBe(true);
    expect(allows(reader, { kind: 'skills', needs: 'read-write' })).toBe(false);
  });

  it('checks tools, hosts and the operator permission with the same answer', () => {
    expect(allows(writer, { kind: 'tool', server: 'github', tool: 'create_issue' })).toBe(true);
    expect(decide(writer, 'slack.post', { kind: 'tool', server: 'slack', tool: 'post' })).toBeInstanceOf(PermissionDenied);
    expect(allows(writer, { kind: 'net', host: 'api.example.com', port: '443', target: 'api.example.com' })).toBe(true);
    expect(allows(writer, { kind: 'net', host: 'example.com', port: '443', target: 'example.com' })).toBe(false); // *.x is not the apex
    expect(allows(writer, { kind: 'net', host: 'api.test', port: '8443', target: 'api.test:8443' })).toBe(true);
    expect(allows(writer, { kind: 'net', host: 'api.test', port: '443', target: 'api.test' })).toBe(false);
    expect(allows(writer, { kind: 'operator' })).toBe(true);
    expect((decide(reader, '/metrics', { kind: 'operator' }) as PermissionDenied).message).toMatch(/^permission denied: \/metrics needs the operator permission; agent "reader" does not have it/);
  });

  it('a grant is frozen: its subject cannot be pointed at another namespace', () => {
    const grant = authorize(reader, 'read_file', { kind: 'workspace', needs: 'read' });
    expect(() => {
      (grant.subject as { workspaceNamespace: string }).workspaceNamespace = 'writer';
    }).toThrow(TypeError);
    expect(() => {
      (grant as unknown as { resource: unknown }).resource = { kind: 'workspace', needs: 'read-write' };
    }).toThrow(TypeError);
    expect(grant.subject.workspaceNamespace).toBe('reader');
  });
});

describe('a Grant cannot be forged', () => {
  const real = (): Grant => authorize(writer, 'write_file', { kind: 'workspace', needs: 'read-write' });
  const forgeries: [string, () => unknown][] = [
    ['a plain object with the same fields', () => ({ subject: writer, action: 'write_file', resource: { kind: 'workspace', needs: 'read-write' } })],
    ['an object with the prototype of Grant', () => Object.assign(Object.create(Grant.prototype) as object, { subject: writer, action: 'write_file', resource: { kind: 'workspace', needs: 'read-write' } })],
    ['a spread copy of a real grant', () => ({ ...real() })],
    ['a structured clone of a real grant', () => structuredClone({ ...real() })],
    ['a Proxy around a real grant', () => new Proxy(real(), {})],
    ['an object whose prototype is a real grant', () => Object.create(real()) as object],
    ['null', () => null],
  ];

  for (const [what, forge] of forgeries) {
    it(`refuses ${what}`, () => {
      const fake = forge();
      expect(Grant.isGenuine(fake)).toBe(false);
      expect(() => requireGrant(fake, 'workspace')).toThrow(TypeError);
      expect(() => workspaceView(store, fake as Grant)).toThrow(/expected a Grant from the access check/);
    });
  }

  it('refuses a subclass, whether it calls the constructor or not', () => {
    const Ctor = Grant as unknown as new (...args: unknown[]) => object;
    expect(() => new Ctor(Symbol('Grant'), writer, 'write_file', { kind: 'workspace', needs: 'read-write' })).toThrow(/made only by the access check/);
    class Sub extends Ctor {
      constructor() {
        super(Symbol('Grant'), writer, 'write_file', { kind: 'workspace', needs: 'read-write' });
      }
    }
    expect(() => new Sub()).toThrow(/made only by the access check/);
    expect(() => Reflect.construct(Ctor, [Symbol('Grant'), writer, 'x', { kind: 'operator' }], class {})).toThrow(/made only by the access check/);
    // Nothing on the class leads to the minting function.
    expect(Object.getOwnPropertySymbols(Grant)).toEqual([]);
    expect(Object.getOwnPropertyNames(Grant).sort()).toEqual(['isGenuine', 'length', 'name', 'prototype']);
  });

  it('refuses a real grant for another resource or a lower level', () => {
    const skills = authorize(writer, 'save_skill', { kind: 'skills', needs: 'publish' });
    expect(() => workspaceView(store, skills)).toThrow(/expected a Grant for "workspace", got one for "skills"/);
    const read = authorize(reader, 'read_file', { kind: 'workspace', needs: 'read' });
    expect(() => requireGrant(read, 'workspace', 'read-write')).toThrow(/"read-write", got one for "read"/);
  });

  it('a view opened from a read grant reads but refuses writes and deletes itself', async () => {
    await store.namespace('reader').writeFile('a.txt', 'hello');
    const view = workspaceView(store, authorize(reader, 'read_file', { kind: 'workspace', needs: 'read' }));
    expect((await view.readFile('a.txt')).content).toBe('hello');
    await expect(view.writeFile('b.txt', 'x')).rejects.toBeInstanceOf(PermissionDenied);
    await expect(view.deleteFile('a.txt')).rejects.toBeInstanceOf(PermissionDenied);
    expect(await view.listFiles('.')).toEqual(['a.txt']);
    const writes = workspaceView(store, real());
    expect(writes.namespaceName).toBe(store.namespace('writer').namespaceName);
  });
});
