// How JavaScript and Python would each read code that both parsers accept. Seed-style Python such
// as `data = [1, 2, 3]\nresult = sum(data)` or `result = x // 2` is valid JavaScript syntax, but
// as JavaScript it assigns undeclared names (a ReferenceError in the sandbox's strict mode), calls
// Python builtins the sandbox does not have, or reads `//` as a comment. acorn's tree says which
// names the code reads and writes; for code in the subset of JavaScript that Python also parses
// (assignments, calls, literals, one statement a line), the names decide without a Python process.

import type { Comment, Token } from 'acorn';
import { parseWrapped } from '../../workers/js/preprocess.js';
import { PYTHON_API_NAMES, SANDBOX_API_NAMES } from '../../workers/kit/api-contract.js';
import { WRAP_PREFIX } from '../../workers/kit/protocol.js';

/** What each language would make of code both parse. */
export interface Readings {
  /** The code is in the subset of JavaScript Python reads as the same statements. */
  pythonCompatible: boolean;
  /** Names JavaScript would fail on (undeclared, or assigned without a declaration). */
  jsFailures: string[];
  /** What JavaScript reads differently from Python: `"x" * 3`, `[1] + [2]`, `"a" in "abc"`, `s.upper()`, `//`. */
  jsDiffers: string[];
  /** Names Python would not find (`null`, `true`, an object key that is no variable). */
  pyFailures: string[];
}

/** The globals of the sandbox's JavaScript compartment: ECMAScript's, then the sandbox API's. */
const JS_GLOBALS = new Set([
  'globalThis', 'undefined', 'NaN', 'Infinity', 'Object', 'Function', 'Array', 'String', 'Number', 'Boolean', 'Symbol',
  'BigInt', 'Math', 'JSON', 'Date', 'RegExp', 'Map', 'Set', 'WeakMap', 'WeakSet', 'WeakRef', 'FinalizationRegistry',
  'Promise', 'Proxy', 'Reflect', 'Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError',
  'URIError', 'AggregateError', 'ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Int8Array', 'Uint8Array',
  'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array',
  'parseInt', 'parseFloat', 'isNaN', 'isFinite', 'encodeURI', 'encodeURIComponent', 'decodeURI', 'decodeURIComponent',
  'escape', 'unescape', 'Intl', 'harden', 'assert', 'lockdown',
  ...SANDBOX_API_NAMES,
]);

/** Python's builtins as the sandbox leaves them, its pre-imported modules and the sandbox API. */
const PY_GLOBALS = new Set([
  'ArithmeticError', 'AssertionError', 'AttributeError', 'BaseException', 'Exception', 'False', 'FileNotFoundError',
  'ImportError', 'IndexError', 'KeyError', 'LookupError', 'NameError', 'None', 'NotImplemented', 'NotImplementedError',
  'OSError', 'OverflowError', 'PermissionError', 'RuntimeError', 'StopIteration', 'True', 'TypeError', 'ValueError',
  'ZeroDivisionError', 'Ellipsis', 'abs', 'aiter', 'all', 'anext', 'any', 'ascii', 'bin', 'bool', 'bytearray', 'bytes',
  'callable', 'chr', 'classmethod', 'compile', 'complex', 'delattr', 'dict', 'dir', 'divmod', 'enumerate', 'eval',
  'exec', 'exit', 'filter', 'float', 'format', 'frozenset', 'getattr', 'globals', 'hasattr', 'hash', 'hex', 'id',
  'int', 'isinstance', 'issubclass', 'iter', 'len', 'list', 'locals', 'map', 'max', 'memoryview', 'min', 'next',
  'object', 'oct', 'ord', 'pow', 'print', 'property', 'quit', 'range', 'repr', 'reversed', 'round', 'set', 'setattr',
  'slice', 'sorted', 'staticmethod', 'str', 'sum', 'super', 'tuple', 'type', 'vars', 'zip',
  'json', 're', 'math', 'statistics', 'collections', 'datetime', 'date', 'timedelta',
  ...PYTHON_API_NAMES,
]);

/** Methods of Python's str, list and dict that JavaScript's values do not have. */
const PYTHON_METHODS = new Set([
  'append', 'extend', 'items', 'upper', 'lower', 'strip', 'lstrip', 'rstrip', 'startswith', 'endswith', 'format',
  'setdefault', 'isdigit', 'isalpha', 'isalnum', 'isspace', 'isupper', 'islower', 'title', 'capitalize', 'casefold',
  'zfill', 'rjust', 'ljust', 'splitlines', 'rsplit', 'removeprefix', 'removesuffix',
]);

/** A `// rest` that Python reads as floor division: operands and arithmetic only, no prose. */
const FLOOR_OPERAND = /^\s*(?:[A-Za-z_]\w*|\d[\d_]*(?:\.\d+)?)(?:\s*[-+*%]\s*(?:[A-Za-z_]\w*|\d[\d_]*(?:\.\d+)?))*\s*\)*\s*$/;
/** Where a floor division's left operand ends: a name, a number or a closing bracket. */
const OPERAND_END = /(?:[\w)\]])\s*$/;
const ASSIGN_OPERATORS = new Set(['=', '+=', '-=', '*=', '/=', '%=', '**=', '|=', '&=', '^=', '<<=', '>>=']);
const BINARY_OPERATORS = new Set(['+', '-', '*', '/', '%', '**', '<', '>', '<=', '>=', '==', '!=', '|', '&', '^', '<<', '>>', 'in']);
const UNARY_OPERATORS = new Set(['-', '+', '~']);

// acorn's nodes, as far as this reads them.
interface Node {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

class Incompatible extends Error {}

/** Collects names while it checks the subset; throws Incompatible on anything else. */
class Reader {
  readonly jsFailures = new Set<string>();
  readonly jsDiffers = new Set<string>();
  readonly pyReads = new Set<string>();
  readonly pyAssigned = new Set<string>();

  constructor(readonly known: ReadonlySet<string>) {}

  statement(node: Node): void {
    if (node.type === 'ReturnStatement') {
      if (node.argument) this.expression(node.argument as Node);
      return;
    }
    if (node.type !== 'ExpressionStatement') throw new Incompatible();
    const e = node.expression as Node;
    if (e.type === 'AssignmentExpression') return this.assignment(e);
    if (e.type === 'SequenceExpression') return this.tupleStatement(e);
    this.expression(e);
  }

  /** `a = b = value`, `a += 1`, `a.b = 1`, `a[0] = 1`. */
  assignment(node: Node): void {
    if (!ASSIGN_OPERATORS.has(node.operator as string)) throw new Incompatible();
    this.target(node.left as Node);
    const right = node.right as Node;
    if (right.type === 'AssignmentExpression' && node.operator === '=' && right.operator === '=') return this.assignment(right);
    this.expression(right);
  }

  /** `x, y = 1, 2` reads in JavaScript as `x, (y = 1), 2`: Python assigns both. */
  tupleStatement(node: Node): void {
    const items = node.expressions as Node[];
    const at = items.findIndex((n) => n.type === 'AssignmentExpression');
    if (at < 0) return this.expression(node);
    const assign = items[at] as Node;
    if (assign.operator !== '=') throw new Incompatible();
    for (const n of items.slice(0, at)) this.target(n);
    this.target(assign.left as Node);
    this.expression(assign.right as Node);
    for (const n of items.slice(at + 1)) this.expression(n);
  }

  target(node: Node): void {
    if (node.type === 'Identifier') {
      const name = node.name as string;
      this.pyAssigned.add(name);
      if (name !== 'result' && !this.known.has(name)) this.jsFailures.add(name);
      return;
    }
    if (node.type === 'MemberExpression') return this.expression(node);
    throw new Incompatible();
  }

  expression(node: Node): void {
    switch (node.type) {
      case 'Identifier': {
        const name = node.name as string;
        if (!JS_GLOBALS.has(name) && !this.known.has(name)) this.jsFailures.add(name);
        this.pyReads.add(name);
        return;
      }
      case 'Literal':
        if (node.regex !== undefined || node.bigint !== undefined) throw new Incompatible();
        if (node.value === null || typeof node.value === 'boolean') this.pyReads.add(node.raw as string);
        return;
      case 'ArrayExpression':
        for (const el of node.elements as (Node | null)[]) {
          if (el === null || el.type === 'SpreadElement') throw new Incompatible();
          this.expression(el);
        }
        return;
      case 'ObjectExpression':
        for (const p of node.properties as Node[]) {
          if (p.type !== 'Property' || p.kind !== 'init' || p.method || p.shorthand || p.computed) throw new Incompatible();
          // Python reads a bare key as a variable; JavaScript as a name.
          const key = p.key as Node;
          if (key.type === 'Identifier') this.pyReads.add(key.name as string);
          else this.expression(key);
          this.expression(p.value as Node);
        }
        return;
      case 'MemberExpression':
        if (node.optional) throw new Incompatible();
        this.expression(node.object as Node);
        if (node.computed) this.expression(node.property as Node);
        return;
      case 'CallExpression':
        return this.call(node);
      case 'BinaryExpression':
        return this.binary(node);
      case 'UnaryExpression':
        if (!UNARY_OPERATORS.has(node.operator as string)) throw new Incompatible();
        return this.expression(node.argument as Node);
      case 'SequenceExpression':
        for (const n of node.expressions as Node[]) this.expression(n);
        return;
      case 'AwaitExpression':
        return this.expression(node.argument as Node);
      default:
        throw new Incompatible();
    }
  }

  call(node: Node): void {
    if (node.optional) throw new Incompatible();
    const callee = node.callee as Node;
    this.expression(callee);
    const args = node.arguments as Node[];
    if (callee.type === 'MemberExpression' && !callee.computed && !rootedAt(callee, 'tools')) {
      const method = (callee.property as Node).name as string;
      const receiver = callee.object as Node;
      if (PYTHON_METHODS.has(method)) this.jsDiffers.add(`.${method}()`);
      if (method === 'join' && receiver.type === 'Literal' && typeof receiver.value === 'string') this.jsDiffers.add('str.join()');
      if (method === 'split' && args.length === 0) this.jsDiffers.add('.split()');
    }
    for (const arg of args) {
      if (arg.type === 'SpreadElement') throw new Incompatible();
      // f(key=value): a keyword argument to Python, an assignment to an undeclared name to JavaScript.
      if (arg.type === 'AssignmentExpression' && arg.operator === '=' && (arg.left as Node).type === 'Identifier') {
        const name = (arg.left as Node).name as string;
        if (name !== 'result' && !this.known.has(name)) this.jsFailures.add(name);
        this.expression(arg.right as Node);
        continue;
      }
      this.expression(arg);
    }
  }

  binary(node: Node): void {
    const op = node.operator as string;
    if (!BINARY_OPERATORS.has(op)) throw new Incompatible();
    const left = node.left as Node;
    const right = node.right as Node;
    const isString = (n: Node): boolean => n.type === 'Literal' && typeof n.value === 'string';
    const isList = (n: Node): boolean => n.type === 'ArrayExpression';
    if (op === '*' && (isString(left) || isString(right) || isList(left) || isList(right))) this.jsDiffers.add(`${op} on a sequence`);
    if (op === '+' && (isList(left) || isList(right))) this.jsDiffers.add('+ on a list');
    if (op === 'in' && (isString(right) || isList(right))) this.jsDiffers.add('in on a sequence');
    this.expression(left);
    this.expression(right);
  }
}

function rootedAt(node: Node, name: string): boolean {
  let n = node;
  while (n.type === 'MemberExpression' || n.type === 'CallExpression') n = (n.type === 'MemberExpression' ? n.object : n.callee) as Node;
  return n.type === 'Identifier' && n.name === name;
}

/**
 * Whether every line break of a statement falls inside brackets, as Python requires. Statements
 * come in order: `cursor` carries the token index from one to the next, so all of them together
 * take one pass over the tokens.
 */
function linesJoinInBrackets(tokens: readonly Token[], cursor: { at: number }, start: number, end: number): boolean {
  let depth = 0;
  let line = -1;
  while (cursor.at < tokens.length && (tokens[cursor.at] as Token).start < start) cursor.at++;
  for (; cursor.at < tokens.length; cursor.at++) {
    const t = tokens[cursor.at] as Token;
    if (t.end > end) break;
    const at = t.loc?.start.line ?? 0;
    if (line >= 0 && at !== line && depth === 0) return false;
    line = t.loc?.end.line ?? at;
    const label = t.type.label;
    if (label === '(' || label === '[' || label === '{') depth++;
    else if (label === ')' || label === ']' || label === '}') depth--;
  }
  return true;
}

/**
 * The two readings of code acorn accepts (as the sandbox wraps it), or undefined when it does not
 * parse. `known` holds names the call defines in both languages (context_vars).
 */
export function readings(code: string, known: ReadonlySet<string> = new Set()): Readings | undefined {
  const offset = WRAP_PREFIX.length;
  const tokens: Token[] = [];
  const comments: Comment[] = [];
  let program: Node;
  try {
    program = parseWrapped(code, { tokens, comments }) as unknown as Node;
  } catch {
    return undefined;
  }
  const reader = new Reader(known);
  let pythonCompatible = true;
  const floorReads: string[] = [];
  try {
    for (const c of comments) {
      const lineStart = code.lastIndexOf('\n', c.start - offset - 1) + 1;
      const before = code.slice(lineStart, c.start - offset);
      if (c.type !== 'Line' || !OPERAND_END.test(before) || !FLOOR_OPERAND.test(c.value)) throw new Incompatible();
      floorReads.push(...(c.value.match(/[A-Za-z_]\w*/g) ?? []));
    }
    const fn = ((program.body as Node[])[0] as Node).expression as Node;
    const cursor = { at: 0 };
    for (const statement of (fn.body as Node).body as Node[]) {
      // One statement a line, unindented (or after a `;`), as Python's top level wants.
      // (Only the blanks back to the previous statement are read: linear over all statements.)
      const at = statement.start - offset;
      let i = at - 1;
      while (i >= 0 && (code[i] === ' ' || code[i] === '\t')) i--;
      if (i >= 0 && code[i] !== ';' && code[i] !== '\n') throw new Incompatible();
      if ((i < 0 || code[i] === '\n') && i !== at - 1) throw new Incompatible(); // indented
      if (!linesJoinInBrackets(tokens, cursor, statement.start, statement.end)) throw new Incompatible();
      reader.statement(statement);
    }
  } catch {
    // Incompatible, or a RangeError from nesting deeper than the stack: either way not for Python.
    pythonCompatible = false;
  }
  // A `//` Python reads as floor division only when its right operand is the program's own
  // number or variable: `result = 1 + 2 // sum` stays a JavaScript comment.
  const floor = comments.length > 0 && floorReads.every((n) => reader.pyAssigned.has(n) || known.has(n));
  if (floor && comments.length > 0) reader.jsDiffers.add('//');
  else if (comments.length > 0) pythonCompatible = false;
  const pyFailures = [...reader.pyReads].filter((n) => !PY_GLOBALS.has(n) && !reader.pyAssigned.has(n) && !known.has(n));
  return { pythonCompatible, jsFailures: [...reader.jsFailures], jsDiffers: [...reader.jsDiffers], pyFailures };
}
