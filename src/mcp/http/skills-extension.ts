// The SEP-2640 skills extension (`io.modelcontextprotocol/skills`) on the stateless revision: the
// daemon's skills are already SKILL.md folders, so skills/list and skills/get describe each
// folder the agent may see (`skill://NAME/SKILL.md`, its front matter as written, and every file
// with its sha256 digest and size), and resources/read serves those files. An agent sees exactly
// the skills the skill tools show it (no skills permission: none; another agent's private skill:
// as if it did not exist).

import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { allows } from '../../access/index.js';
import type { AgentIdentity, McpServices } from '../mcp-types.js';

export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
const INVALID_PARAMS = -32602;
const RESOURCE_NOT_FOUND = -32002;
const SKILL_FILE_URI = /^skill:\/\/([^/]+)\/(.+)$/;
const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;
const MIME: Record<string, string> = { '.md': 'text/markdown', '.js': 'text/javascript', '.ts': 'text/typescript', '.py': 'text/x-python' };

export type ExtensionAnswer = { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

interface SkillFile {
  uri: string;
  digest: string;
  size: number;
}

/** Whether the extension answers this request (its own methods, and reads of skill://NAME/FILE). */
export function isSkillsRequest(method: string, params: Record<string, unknown>): boolean {
  return method === 'skills/list' || method === 'skills/get' || (method === 'resources/read' && typeof params['uri'] === 'string' && SKILL_FILE_URI.test(params['uri']));
}

export async function answerSkills(services: McpServices, agent: AgentIdentity, method: string, params: Record<string, unknown>): Promise<ExtensionAnswer> {
  const visible = await visibleSkills(services, agent);
  if (method === 'skills/list') {
    const skills = (await Promise.all(visible.map((name) => entryOf(services.config.skillsDir, name)))).filter((e) => e !== null);
    return { result: { skills } };
  }
  const uri = typeof params['uri'] === 'string' ? params['uri'] : '';
  const match = SKILL_FILE_URI.exec(uri);
  const name = decoded(match?.[1]);
  const file = decoded(match?.[2]);
  // A malformed %-escape names no skill and no file: "not found", never an internal error.
  if (name === undefined || file === undefined) return { error: { code: INVALID_PARAMS, message: `Invalid params: ${uri} is not validly percent-encoded`, data: { uri } } };
  if (method === 'skills/get') {
    const entry = match && match[2] === 'SKILL.md' && visible.includes(name) ? await entryOf(services.config.skillsDir, name) : null;
    if (!entry) return { error: { code: INVALID_PARAMS, message: `Invalid params: ${uri || '(no uri)'} is not a skill this server serves; skills/list gives their skill://NAME/SKILL.md URIs` } };
    return { result: { skill: entry } };
  }
  const files = visible.includes(name) ? await filesOf(services.config.skillsDir, name) : [];
  if (!files.includes(file)) return { error: { code: RESOURCE_NOT_FOUND, message: `Resource not found: ${uri}; skills/list names every file of every skill`, data: { uri } } };
  const text = await readFile(path.join(services.config.skillsDir, name, file), 'utf8');
  return { result: { contents: [{ uri, mimeType: MIME[path.extname(file)] ?? 'text/plain', text }] } };
}

/** resources/list entries of the SKILL.md files the agent may see (name and description from the front matter). */
export async function skillManifestResources(services: McpServices, agent: AgentIdentity): Promise<Record<string, unknown>[]> {
  const entries = await Promise.all((await visibleSkills(services, agent)).map((name) => entryOf(services.config.skillsDir, name)));
  return entries.flatMap((entry) => {
    if (!entry) return [];
    const fm = entry['frontmatter'] as Record<string, unknown>;
    return [{ uri: entry['uri'], name: String(fm['name'] ?? ''), ...(typeof fm['description'] === 'string' && { description: fm['description'] }), mimeType: 'text/markdown' }];
  });
}

function decoded(text: string | undefined): string | undefined {
  try {
    return decodeURIComponent(text ?? '');
  } catch {
    return undefined;
  }
}

async function visibleSkills(services: McpServices, agent: AgentIdentity): Promise<string[]> {
  if (!services.skills || !allows(agent, { kind: 'skills', needs: 'read' })) return [];
  const { skills } = await services.skills.list({ agent: agent.name, agentsConfigured: services.config.agents.length > 0 });
  return skills.map((s) => s.name);
}

/** The folder's files, SKILL.md first; hidden entries and subfolders left out. */
async function filesOf(dir: string, name: string): Promise<string[]> {
  try {
    const entries = await readdir(path.join(dir, name), { withFileTypes: true });
    const files = entries.filter((e) => e.isFile() && !e.name.startsWith('.')).map((e) => e.name);
    return files.includes('SKILL.md') ? ['SKILL.md', ...files.filter((f) => f !== 'SKILL.md').sort()] : [];
  } catch {
    return [];
  }
}

async function entryOf(dir: string, name: string): Promise<Record<string, unknown> | null> {
  const files = await filesOf(dir, name);
  if (files.length === 0) return null;
  const resources: SkillFile[] = [];
  let frontmatter: Record<string, unknown> = { name };
  for (const file of files) {
    const bytes = await readFile(path.join(dir, name, file)).catch(() => null);
    if (!bytes) return null;
    resources.push({ uri: `skill://${encodeURIComponent(name)}/${file}`, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, size: bytes.length });
    if (file === 'SKILL.md') frontmatter = frontMatterOf(bytes.toString('utf8')) ?? frontmatter;
  }
  return { uri: `skill://${encodeURIComponent(name)}/SKILL.md`, frontmatter, resources };
}

/** The front matter exactly as SKILL.md writes it (a client compares the two field by field). */
function frontMatterOf(text: string): Record<string, unknown> | null {
  const match = FRONT_MATTER.exec(text);
  if (!match) return null;
  try {
    const data: unknown = parse(match[1] ?? '');
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
