// The SEP-2640 skills extension (`io.modelcontextprotocol/skills`) on the stateless revision: the
// daemon's skills are already SKILL.md folders, so skills/list and skills/get describe each
// folder the agent may see (`skill://NAME/SKILL.md`, its front matter as written, and every file
// with its sha256 digest and size), and resources/read serves those files. An agent sees exactly
// the skills the skill tools show it (no skills permission: none; another agent's private skill:
// as if it did not exist). A request's cost is not its agent's bytes: digests and front matter are
// kept per version of a file (src/skills/skill-file-facts.ts), and an agent runs at most
// SKILLS_REQUESTS_PER_AGENT of these requests at once.

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { allows } from '../../access/index.js';
import { SkillFileFacts } from '../../skills/index.js';
import { PerKeyLimit } from '../../util/per-key-limit.js';
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

/** Skills requests one agent runs at once, and how many may wait behind them. */
export const SKILLS_REQUESTS_PER_AGENT = 2;
export const SKILLS_REQUESTS_WAITING_PER_AGENT = 32;
const SERVER_BUSY = -32000;

/** One daemon's readers: facts of skill files by version, and the per-agent bound. */
interface SkillsReader {
  facts: SkillFileFacts<Record<string, unknown> | null>;
  limit: PerKeyLimit;
}

// Per services object (one per daemon) rather than module globals, so two daemons in one process
// (tests, the cluster's) never share a bound; the stateless endpoint needs no extra wiring.
const readers = new WeakMap<McpServices, SkillsReader>();

function readerOf(services: McpServices): SkillsReader {
  let reader = readers.get(services);
  if (reader === undefined) {
    reader = {
      facts: new SkillFileFacts((bytes, file) => (path.basename(file) === 'SKILL.md' ? frontMatterOf(bytes.toString('utf8')) : null)),
      limit: new PerKeyLimit(SKILLS_REQUESTS_PER_AGENT, SKILLS_REQUESTS_WAITING_PER_AGENT),
    };
    readers.set(services, reader);
  }
  return reader;
}

export async function answerSkills(services: McpServices, agent: AgentIdentity, method: string, params: Record<string, unknown>): Promise<ExtensionAnswer> {
  const reader = readerOf(services);
  const ran = await reader.limit.run(agent.name, () => answer(services, reader.facts, agent, method, params));
  if (ran.refused) {
    return { error: { code: SERVER_BUSY, message: `Server busy: this agent already has ${SKILLS_REQUESTS_PER_AGENT + SKILLS_REQUESTS_WAITING_PER_AGENT} skills requests in progress; wait for their answers, then retry` } };
  }
  return ran.value;
}

type Facts = SkillFileFacts<Record<string, unknown> | null>;

async function answer(services: McpServices, facts: Facts, agent: AgentIdentity, method: string, params: Record<string, unknown>): Promise<ExtensionAnswer> {
  const visible = await visibleSkills(services, agent);
  const dir = services.config.skillsDir;
  if (method === 'skills/list') {
    const skills = (await Promise.all(visible.map((name) => entryOf(facts, dir, name)))).filter((e) => e !== null);
    return { result: { skills } };
  }
  const uri = typeof params['uri'] === 'string' ? params['uri'] : '';
  const match = SKILL_FILE_URI.exec(uri);
  const name = decoded(match?.[1]);
  const file = decoded(match?.[2]);
  // A malformed %-escape names no skill and no file: invalid params, never an internal error.
  if (name === undefined || file === undefined) return { error: { code: INVALID_PARAMS, message: `Invalid params: ${uri} is not validly percent-encoded`, data: { uri } } };
  if (method === 'skills/get') {
    const entry = match && match[2] === 'SKILL.md' && visible.includes(name) ? await entryOf(facts, dir, name) : null;
    if (!entry) return { error: { code: INVALID_PARAMS, message: `Invalid params: ${uri || '(no uri)'} is not a skill this server serves; skills/list gives their skill://NAME/SKILL.md URIs` } };
    return { result: { skill: entry } };
  }
  const files = visible.includes(name) ? await filesOf(dir, name) : [];
  if (!files.includes(file)) return { error: { code: RESOURCE_NOT_FOUND, message: `Resource not found: ${uri}; skills/list names every file of every skill`, data: { uri } } };
  const text = await readFile(path.join(dir, name, file), 'utf8');
  return { result: { contents: [{ uri, mimeType: MIME[path.extname(file)] ?? 'text/plain', text }] } };
}

/** A URI part percent-decoded, or undefined when its escapes are malformed (then it names nothing served). */
function decoded(part: string | undefined): string | undefined {
  try {
    return decodeURIComponent(part ?? '');
  } catch {
    return undefined;
  }
}

/** resources/list entries of the SKILL.md files the agent may see (name and description from the front matter). */
export async function skillManifestResources(services: McpServices, agent: AgentIdentity): Promise<Record<string, unknown>[]> {
  const { facts } = readerOf(services);
  const entries = await Promise.all((await visibleSkills(services, agent)).map((name) => entryOf(facts, services.config.skillsDir, name)));
  return entries.flatMap((entry) => {
    if (!entry) return [];
    const fm = entry.frontmatter;
    return [{ uri: entry.uri, name: String(fm['name'] ?? ''), ...(typeof fm['description'] === 'string' && { description: fm['description'] }), mimeType: 'text/markdown' }];
  });
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

interface SkillEntry {
  uri: string;
  frontmatter: Record<string, unknown>;
  resources: SkillFile[];
}

async function entryOf(facts: Facts, dir: string, name: string): Promise<SkillEntry | null> {
  const files = await filesOf(dir, name);
  if (files.length === 0) return null;
  const known = await Promise.all(files.map((file) => facts.of(path.join(dir, name, file))));
  const resources: SkillFile[] = [];
  let frontmatter: Record<string, unknown> = { name };
  for (const [i, file] of files.entries()) {
    const f = known[i];
    if (!f) return null;
    resources.push({ uri: `skill://${encodeURIComponent(name)}/${file}`, digest: f.digest, size: f.size });
    if (file === 'SKILL.md') frontmatter = f.derived ?? frontmatter;
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
