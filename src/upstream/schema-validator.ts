// Checks tool arguments against the tool's input schema before a call leaves the daemon, so a
// model gets a precise, local error ("missing required argument b") instead of a server's stack.
// Validators are compiled once per server, tool and schema; a schema ajv cannot compile is
// reported once and the call is left to the server to judge.
import { Ajv } from 'ajv';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Logger } from '../util/logger.js';
import { closestNames } from './suggest.js';
import { UpstreamError, qualifiedName } from './upstream-error.js';
import type { UpstreamTool } from './upstream-types.js';

/** Schema problems listed in one message before the rest are counted. */
const MAX_LISTED_ERRORS = 8;
/** Properties described in the "expected" hint. */
const MAX_HINTED_PROPERTIES = 12;

// Upstream schemas come from anywhere: unknown keywords and formats must not break a call, and
// ajv must never write to the console or keep schemas by $id (two servers may reuse one).
const AJV_OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateFormats: false,
  addUsedSchema: false,
  logger: false,
};

type Dialect = 'draft-07' | '2019-09' | '2020-12';

interface CacheEntry {
  schema: object;
  schemaJson: string;
  /** null: the schema did not compile; calls go through unchecked. */
  validate: ValidateFunction | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function dialectOf(schema: object): Dialect {
  const id = isRecord(schema) && typeof schema['$schema'] === 'string' ? schema['$schema'] : '';
  if (id.includes('2020-12')) return '2020-12';
  if (id.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

export class ArgumentValidator {
  readonly #logger: Logger;
  readonly #engines = new Map<Dialect, Ajv | Ajv2019 | Ajv2020>();
  readonly #cache = new Map<string, CacheEntry>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Throws UpstreamError 'INVALID_ARGUMENT' when `args` does not match the tool's input schema. */
  check(tool: UpstreamTool, args: Record<string, unknown>): void {
    const validate = this.#validatorFor(tool);
    if (validate === null || validate(args)) return;
    const problems = describeErrors(validate.errors ?? [], args, tool.inputSchema);
    const listed = problems.slice(0, MAX_LISTED_ERRORS);
    const more = problems.length > listed.length ? `; and ${problems.length - listed.length} more` : '';
    const hint = expectedHint(tool.inputSchema);
    const name = qualifiedName(tool.server, tool.name);
    throw new UpstreamError(
      'INVALID_ARGUMENT',
      `Invalid arguments for ${name}: ${listed.join('; ')}${more}.${hint === '' ? '' : ` Expected ${hint}.`}`,
      { server: tool.server, tool: tool.name },
    );
  }

  /** Drops cached validators of `server` whose tool is not in `keep`. */
  prune(server: string, keep: ReadonlySet<string>): void {
    const prefix = `${server}\0`;
    for (const key of this.#cache.keys()) {
      if (key.startsWith(prefix) && !keep.has(key.slice(prefix.length))) this.#cache.delete(key);
    }
  }

  #validatorFor(tool: UpstreamTool): ValidateFunction | null {
    const key = `${tool.server}\0${tool.name}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined && cached.schema === tool.inputSchema) return cached.validate;
    const schemaJson = JSON.stringify(tool.inputSchema);
    if (cached !== undefined && cached.schemaJson === schemaJson) {
      cached.schema = tool.inputSchema;
      return cached.validate;
    }
    const entry: CacheEntry = { schema: tool.inputSchema, schemaJson, validate: this.#compile(tool) };
    this.#cache.set(key, entry);
    return entry.validate;
  }

  #compile(tool: UpstreamTool): ValidateFunction | null {
    const dialect = dialectOf(tool.inputSchema);
    // $schema is dropped: the engine is chosen by it, and ajv would otherwise insist on knowing
    // the meta-schema (draft-04 and draft-06 are not bundled).
    const { $schema: _ignored, ...schema } = tool.inputSchema as Record<string, unknown>;
    try {
      return this.#engine(dialect).compile(schema);
    } catch (error) {
      this.#logger.warn(
        { code: 'UPSTREAM_SCHEMA_INVALID', server: tool.server, tool: tool.name, reason: (error as Error).message },
        'upstream tool input schema does not compile; its arguments are not checked before calls',
      );
      return null;
    }
  }

  #engine(dialect: Dialect): Ajv | Ajv2019 | Ajv2020 {
    let engine = this.#engines.get(dialect);
    if (engine === undefined) {
      engine = dialect === '2020-12' ? new Ajv2020(AJV_OPTIONS) : dialect === '2019-09' ? new Ajv2019(AJV_OPTIONS) : new Ajv(AJV_OPTIONS);
      this.#engines.set(dialect, engine);
    }
    return engine;
  }
}

/** JSON pointer `/edits/0/newText` as `edits[0].newText`. */
function readablePath(pointer: string): string {
  if (pointer === '') return '';
  let out = '';
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

function valueAt(data: unknown, pointer: string): unknown {
  if (pointer === '') return data;
  let current: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) current = current[Number(part)];
    else if (isRecord(current)) current = current[part];
    else return undefined;
  }
  return current;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

function schemaAt(schema: unknown, schemaPath: string): unknown {
  // schemaPath points at the failing keyword, e.g. "#/properties/edits/items/additionalProperties";
  // its parent is the schema object holding `properties`.
  const parts = schemaPath.replace(/^#\/?/, '').split('/').slice(0, -1);
  let current: unknown = schema;
  for (const part of parts) {
    if (part === '') continue;
    if (Array.isArray(current)) current = current[Number(part)];
    else if (isRecord(current)) current = current[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    else return undefined;
  }
  return current;
}

function describeErrors(errors: readonly ErrorObject[], args: unknown, schema: object): string[] {
  const out = new Set<string>();
  for (const error of errors) {
    const path = readablePath(error.instancePath);
    const where = path === '' ? '' : `"${path}" `;
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
      case 'required':
        out.add(path === '' ? `missing required argument "${String(params['missingProperty'])}"` : `${where}is missing required property "${String(params['missingProperty'])}"`);
        break;
      case 'additionalProperties': {
        const extra = String(params['additionalProperty']);
        const holder = schemaAt(schema, error.schemaPath);
        const known = isRecord(holder) && isRecord(holder['properties']) ? Object.keys(holder['properties']) : [];
        const close = closestNames(extra, known, 1);
        const suggestion = close[0] === undefined ? '' : ` (did you mean "${close[0]}"?)`;
        out.add(path === '' ? `unknown argument "${extra}"${suggestion}` : `${where}has unknown property "${extra}"${suggestion}`);
        break;
      }
      case 'type':
        out.add(`${path === '' ? 'arguments ' : where}must be ${String(params['type'])} (got ${typeName(valueAt(args, error.instancePath))})`);
        break;
      case 'enum': {
        const allowed = Array.isArray(params['allowedValues']) ? params['allowedValues'].map((v) => JSON.stringify(v)).join(', ') : '';
        out.add(`${path === '' ? 'arguments ' : where}must be one of ${allowed} (got ${JSON.stringify(valueAt(args, error.instancePath)) ?? 'undefined'})`);
        break;
      }
      default:
        out.add(`${path === '' ? 'arguments ' : where}${error.message ?? `fails ${error.keyword}`}`);
    }
  }
  return [...out];
}

function describeType(schema: unknown): string {
  if (!isRecord(schema)) return 'any';
  if (Array.isArray(schema['enum'])) return schema['enum'].map((v) => JSON.stringify(v)).join(' | ');
  const type = schema['type'];
  if (Array.isArray(type)) return type.join(' | ');
  if (type === 'array') return `${describeType(schema['items'])}[]`;
  if (typeof type === 'string') return type;
  return 'any';
}

/** `{ a: number, b?: string }` from an object schema, for the error message; '' when not an object schema. */
function expectedHint(schema: object): string {
  if (!isRecord(schema) || !isRecord(schema['properties'])) return '';
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].map(String) : []);
  const names = Object.keys(schema['properties']);
  const parts = names
    .slice(0, MAX_HINTED_PROPERTIES)
    .map((name) => `${name}${required.has(name) ? '' : '?'}: ${describeType((schema['properties'] as Record<string, unknown>)[name])}`);
  if (names.length > MAX_HINTED_PROPERTIES) parts.push('...');
  return `{ ${parts.join(', ')} }`;
}
