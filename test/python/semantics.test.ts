// execute_code with language "python" through the real executor and a real Pyodide worker: the
// seed's README examples as written, results, output, errors, the sandbox API and async code.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_START_MS, startPython } from './helpers.js';
import type { PythonHarness } from './helpers.js';

let h: PythonHarness;
beforeAll(async () => {
  h = await startPython();
}, PYTHON_START_MS);
afterAll(async () => {
  await h?.close();
});

const records = Array.from({ length: 200 }, (_, i) => ({
  id: i,
  name: `user${i}`,
  status: i % 3 === 0 ? 'active' : i % 3 === 1 ? 'inactive' : 'pending',
  amount: (i * 7) % 50,
  region: i % 2 === 0 ? 'eu' : 'us',
}));

describe("the seed's README examples", () => {
  beforeAll(async () => {
    await h.workspace.namespace('').writeFile('large_data.json', JSON.stringify(records));
  });

  it('filters a workspace file and summarizes it', async () => {
    const r = await h.run(
      [
        'data = json.loads(read_file("large_data.json"))',
        "filtered = [d for d in data if d['status'] == 'active']",
        'result = summarize_list(filtered, limit=5)',
      ].join('\n'),
    );
    const active = records.filter((d) => d.status === 'active');
    expect(r.success, r.error).toBe(true);
    expect(r.result).toEqual({ count: active.length, sample: active.slice(0, 5) });
  });

  it('uses filter_by_field, aggregate_stats and format_output with the seed semantics', async () => {
    const r = await h.run(
      [
        'data = json.loads(read_file("large_data.json"))',
        "eu = filter_by_field(data, 'region', 'eu')",
        "stats = aggregate_stats(eu, ['amount'])",
        'text = format_output(stats, max_chars=40)',
        "result = {'stats': stats, 'text': text, 'auto': aggregate_stats(eu[:3])}",
      ].join('\n'),
    );
    expect(r.success, r.error).toBe(true);
    const eu = records.filter((d) => d.region === 'eu');
    const amounts = eu.map((d) => d.amount);
    const sum = amounts.reduce((a, b) => a + b, 0);
    const stats = { count: eu.length, amount_sum: sum, amount_avg: sum / eu.length, amount_min: Math.min(...amounts), amount_max: Math.max(...amounts) };
    const out = r.result as { stats: Record<string, number>; text: string; auto: Record<string, number> };
    expect(out.stats).toEqual(stats);
    expect(out.text).toBe(JSON.stringify(stats, null, 2).slice(0, 40));
    // Numeric fields are detected from the first item: id and amount.
    expect(Object.keys(out.auto).sort()).toEqual(['amount_avg', 'amount_max', 'amount_min', 'amount_sum', 'count', 'id_avg', 'id_max', 'id_min', 'id_sum']);
  });

  it('writes, lists and deletes workspace files', async () => {
    const r = await h.run(
      [
        "write_file('reports/summary.txt', 'done')",
        "listing = list_files('reports')",
        "text = read_file('reports/summary.txt')",
        "delete_file('reports/summary.txt')",
        "result = {'text': text, 'listed': 'summary.txt' in json.dumps(listing), 'workspace': workspace}",
      ].join('\n'),
    );
    expect(r.success, r.error).toBe(true);
    expect(r.result).toEqual({ text: 'done', listed: true, workspace: 'workspace' });
  });

  it('runs a saved skill with exec(load_skill(name))', async () => {
    const skill = "def active_names(data):\n    return [d['name'] for d in data if d['status'] == 'active']\n";
    const saved = await h.run(`save_skill('active_names', ${JSON.stringify(skill)}, 'names of active records')`);
    expect(saved.success, saved.error).toBe(true);
    const r = await h.run(
      ["exec(load_skill('active_names'))", 'data = json.loads(read_file("large_data.json"))', 'result = active_names(data)[:3]'].join('\n'),
    );
    expect(r.success, r.error).toBe(true);
    expect(r.result).toEqual(['user0', 'user3', 'user6']);
    const imported = await h.run("m = import_skill('active_names')\nresult = m.active_names([{'name': 'x', 'status': 'active'}])");
    expect(imported.result).toEqual(['x']);
  });
});

describe('results and output', () => {
  it('takes the value of a final expression when result is not set', async () => {
    expect((await h.run('x = 21\nx * 2')).result).toBe(42);
    expect((await h.run('result = "set"\n"last"')).result).toBe('set');
    expect((await h.run('x = 1')).result).toBeNull();
  });

  it('captures print and sys.stdout/stderr writes as output lines', async () => {
    const r = await h.run("import sys\nprint('a', 1, sep='-')\nprint('no newline', end='')\nsys.stderr.write('err\\n')\nprint('multi\\nline')");
    expect(r.success, r.error).toBe(true);
    expect(r.output).toEqual(['a-1', 'no newlineerr', 'multi', 'line']);
  });

  it('converts any Python value to JSON data', async () => {
    const r = await h.run(
      [
        'import decimal, enum, dataclasses, fractions',
        'class Color(enum.Enum):',
        '    RED = "red"',
        '@dataclasses.dataclass',
        'class P:',
        '    x: int',
        'cyc = []',
        'cyc.append(cyc)',
        'result = {',
        "  'tuple': (1, 2), 'set': {3}, 'dt': datetime(2024, 5, 6, 7, 8, 9), 'd': date(2024, 1, 2),",
        "  'td': timedelta(seconds=90), 'dec': decimal.Decimal('1.5'), 'frac': fractions.Fraction(1, 4),",
        "  'bytes': b'abc', 'enum': Color.RED, 'dc': P(3), 'nan': float('nan'), 'big': 2**70,",
        "  1: 'int key', 'cycle': cyc, 'obj': object, 'counter': collections.Counter('aab'),",
        '}',
      ].join('\n'),
    );
    expect(r.success, r.error).toBe(true);
    expect(r.result).toEqual({
      tuple: [1, 2],
      set: [3],
      dt: '2024-05-06T07:08:09',
      d: '2024-01-02',
      td: 90,
      dec: 1.5,
      frac: 0.25,
      bytes: '<3 bytes>',
      enum: 'red',
      dc: { x: 3 },
      nan: null,
      big: '1180591620717411303424',
      '1': 'int key',
      cycle: ['[Circular]'],
      obj: "<class 'object'>",
      counter: { a: 2, b: 1 },
    });
  });

  it('makes context_vars globals', async () => {
    const r = await h.run('result = {"n": n * 2, "names": [p["name"] for p in people]}', { contextVars: { n: 21, people: [{ name: 'ada' }] } });
    expect(r.result).toEqual({ n: 42, names: ['ada'] });
  });

  it('preloads the seed modules, with datetime the class as in the seed', async () => {
    const r = await h.run(
      'result = [json.dumps([1]), re.sub("a", "b", "aa"), math.sqrt(16), statistics.mean([1, 2, 3]), collections.Counter("aa")["a"], datetime(2020, 1, 1).year, (date(2020, 1, 2) - date(2020, 1, 1)).days, timedelta(days=1).days]',
    );
    expect(r.result).toEqual(['[1]', 'bb', 4, 2, 2, 2020, 1, 1]);
  });
});

describe('errors', () => {
  it('reports the exception class, message, line and a traceback of user code only', async () => {
    const r = await h.run('def f(x):\n    return x["missing"]\n\nvalue = f({})');
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('KeyError');
    expect(r.error).toBe("'missing'");
    expect(r.traceback).toContain('File "<code>", line 4, in <module>');
    expect(r.traceback).toContain('File "<code>", line 2, in f');
    expect(r.traceback).toContain('return x["missing"]');
    expect(r.traceback).not.toMatch(/pyodide|\/lib\/python|node_modules|_sandbox|<sandbox>/);
  });

  it('reports syntax errors with their line', async () => {
    const r = await h.run('x = 1\ny = (\n');
    expect(r.success).toBe(false);
    expect(r.error_type).toBe('SyntaxError');
    expect(r.traceback).toContain('line 2');
  });

  it('maps host errors to Python exceptions that code can catch', async () => {
    const r = await h.run(
      [
        'out = []',
        'try:',
        "    read_file('does-not-exist.txt')",
        'except FileNotFoundError as e:',
        "    out.append('FileNotFoundError')",
        'try:',
        "    read_file('../outside.txt')",
        'except (PermissionError, ValueError) as e:',
        '    out.append(type(e).__name__)',
        'result = out',
      ].join('\n'),
    );
    expect(r.success, r.error).toBe(true);
    expect((r.result as string[])[0]).toBe('FileNotFoundError');
    expect(r.result as string[]).toHaveLength(2);
  });
});

describe('async code and upstream tools', () => {
  it('runs top-level await with tools awaitable and gathered', async () => {
    const r = await h.run(
      [
        'import asyncio',
        'a, b = await asyncio.gather(tools.demo.echo(x=1), tools.demo.echo({"y": 2}))',
        'await sleep(5)',
        'result = [a, b]',
      ].join('\n'),
    );
    expect(r.success, r.error).toBe(true);
    expect(r.result).toEqual([{ echoed: { x: 1 } }, { echoed: { y: 2 } }]);
  });

  it('calls tools synchronously in code without await', async () => {
    const r = await h.run("result = tools.demo.echo(q='x')['echoed']");
    expect(r.result).toEqual({ q: 'x' });
  });

  it('explains unknown tools (the host says why) and asyncio.run', async () => {
    const unknown = await h.run('tools.demo.nope()');
    expect(unknown.error_type).toBe('ValueError');
    expect(unknown.error).toContain('unknown tool demo.nope');
    const server = await h.run('tools.nowhere.thing()');
    expect(server.error).toContain('unknown tool nowhere.thing');
    const run = await h.run('import asyncio\nasync def main():\n    return 1\nresult = asyncio.run(main())');
    expect(run.error_type).toBe('RuntimeError');
    expect(run.error).toContain('top-level await');
  });
});
