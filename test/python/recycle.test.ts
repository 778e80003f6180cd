// A Python interpreter that ran one agent's code never runs another agent's unless it is
// pristine: 'recycle' replaces it. Each test plants state an interpreter keeps (where no sweep
// reaches), shows the same agent still sees it (documented), recycles, and checks the next agent
// sees exactly what a pristine interpreter shows.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_START_MS } from './helpers.js';
import { PythonProcess, valueOf } from './process-driver.js';

/** What a call can observe of interpreter-wide state; a pristine interpreter always shows the same. */
const PROBE = String.raw`
import collections.abc, codecs, decimal, builtins, atexit, threading, copyreg, warnings, json, re, random, string, functools
observed = {}
observed['abc_int_is_mapping'] = isinstance(1, collections.abc.Mapping)
try:
    codecs.lookup('planted-codec')
    observed['codec'] = True
except LookupError:
    observed['codec'] = False
observed['decimal'] = str(decimal.Decimal('19.99') * 3)
observed['decimal_default_prec'] = decimal.DefaultContext.prec
observed['decimal_rounding'] = decimal.DefaultContext.rounding
observed['excepthook_pristine'] = __import__('sys').excepthook is __import__('sys').__excepthook__
observed['displayhook_pristine'] = __import__('sys').displayhook is __import__('sys').__displayhook__
observed['builtins_planted'] = hasattr(builtins, 'planted')
observed['builtins_len_pristine'] = builtins.len is len
observed['string_planted'] = getattr(string, 'planted', None)
observed['atexit_callbacks'] = atexit._ncallbacks()
observed['threading_excepthook_pristine'] = threading.excepthook is threading.__excepthook__
observed['copyreg_ellipsis'] = type(Ellipsis) in copyreg.dispatch_table
observed['warnings_filters'] = [f[0] for f in warnings.filters[:3]]
observed['json_dumps'] = json.dumps([1, 2])
observed['re_cache'] = len(re._cache) + len(getattr(re, '_cache2', {}))
r = random.random()
random.seed(42)
observed['random_seeded'] = r == random.random()
result = observed
`;

/** Every plant of the list in issue 10: each stays in the interpreter past the call. */
const PLANT = String.raw`
import collections.abc, codecs, decimal, builtins, atexit, threading, copyreg, warnings, json, re, random, string, sys
collections.abc.Mapping.register(int)
codecs.register(lambda name, c=codecs: c.lookup('utf-8') if name in ('planted-codec', 'planted_codec') else None)
decimal.DefaultContext.prec = 2
decimal.DefaultContext.rounding = decimal.ROUND_DOWN
sys.excepthook = lambda *a: None
sys.displayhook = lambda v: None
builtins.planted = True
string.planted = 'yes'
atexit.register(lambda: None)
threading.excepthook = lambda args: None
copyreg.pickle(type(Ellipsis), lambda e: 'Ellipsis')
warnings.simplefilter('error')
for i in range(50):
    re.compile('planted-%d' % i)
random.seed(42)
result = 'planted'
`;

/** An object registered in the ABC registry whose check walks frames to the caller's host powers. */
const TRAP = String.raw`
import collections.abc, inspect
class Meta(type):
    def __subclasscheck__(cls, sub):
        f = inspect.currentframe()
        while f is not None:
            g = f.f_globals
            if 'write_file' in g and 'workspace' in g:
                g['write_file']('trap-ran.txt', 'planted by alice, ran in ' + str(g['workspace']))
            f = f.f_back
        return False
class Trap(metaclass=Meta):
    pass
collections.abc.Mapping.register(Trap)
result = 'armed'
`;
/** A result the sandbox's own conversion checks against Mapping (isinstance of a plain object). */
const TRIGGER = 'class Thing:\n    pass\nresult = [Thing()]';

describe('recycling a Python interpreter for another agent', () => {
  let proc: PythonProcess;
  let pristine: Record<string, unknown>;

  beforeAll(async () => {
    proc = new PythonProcess();
    await proc.ready;
    pristine = valueOf(await proc.run(PROBE, { agent: 'alice' })) as Record<string, unknown>;
  }, PYTHON_START_MS);

  afterAll(() => proc?.close());

  it('a pristine interpreter shows the expected defaults', () => {
    expect(pristine).toMatchObject({ abc_int_is_mapping: false, codec: false, decimal: '59.97', decimal_default_prec: 28, builtins_planted: false, copyreg_ellipsis: false, random_seeded: false });
  });

  it('gives the next agent a pristine interpreter after every class of plant', async () => {
    await proc.recycle();
    expect(valueOf(await proc.run(PLANT, { agent: 'alice' }))).toBe('planted');
    // Same agent, same interpreter: what no sweep reaches is still there (documented).
    const same = valueOf(await proc.run(PROBE, { agent: 'alice' })) as Record<string, unknown>;
    expect(same).toMatchObject({ abc_int_is_mapping: true, codec: true, decimal: '59', decimal_default_prec: 2, copyreg_ellipsis: true, atexit_callbacks: (pristine.atexit_callbacks as number) + 1 });
    await proc.recycle();
    const next = valueOf(await proc.run(PROBE, { agent: 'bob' }));
    expect(next).toEqual(pristine);
  }, PYTHON_START_MS);

  it('an ABC-registry trap set by one agent never runs in another agent\'s call', async () => {
    await proc.recycle();
    expect(valueOf(await proc.run(TRAP, { agent: 'alice' }))).toBe('armed');
    // The trap is live: the sandbox's own result conversion runs it in alice's next call.
    valueOf(await proc.run(TRIGGER, { agent: 'alice' }));
    expect(proc.files.get('alice')?.get('trap-ran.txt')).toBe('planted by alice, ran in alice');
    await proc.recycle();
    valueOf(await proc.run(TRIGGER, { agent: 'bob' }));
    expect(proc.files.get('bob')?.has('trap-ran.txt') ?? false).toBe(false);
  }, PYTHON_START_MS);

  it('undoes for the next agent what only introspection reached', async () => {
    await proc.recycle();
    const plant = [
      'import string, textwrap',
      "string.Template.delimiter = '#'",
      "textwrap.dedent.__globals__['planted'] = True",
      "textwrap.TextWrapper.fill = lambda self, text: 'planted'",
      "result = 'planted'",
    ].join('\n');
    expect(valueOf(await proc.run(plant, { agent: 'alice' }))).toBe('planted');
    await proc.recycle();
    const seen = await proc.run("import string, textwrap\nresult = [string.Template.delimiter, hasattr(textwrap, 'planted'), textwrap.fill('a b', width=10)]", { agent: 'bob' });
    expect(valueOf(seen)).toEqual(['$', false, 'a b']);
  }, PYTHON_START_MS);

  it('answers every recycle sent while the interpreter still cleans up after an answered call', async () => {
    // The answer goes out before the clean-up (python-worker.ts answerFirst); this clean-up runs a
    // finalizer for a second. Each of the three recycles gets its answer (one got it before).
    const slow = ['import time', 'class Slow:', '    def __del__(self, _now=time.monotonic):', '        end = _now() + 1', '        while _now() < end:', '            pass', 's = Slow()', 's.me = s', 'del s', "result = 'answered'"].join('\n');
    expect(valueOf(await proc.run(slow, { agent: 'dave' }))).toBe('answered');
    const ms = await Promise.all([proc.recycle(), proc.recycle(), proc.recycle()]);
    expect(ms.length).toBe(3);
    expect(valueOf(await proc.run("import json\nresult = hasattr(json, 'x')", { agent: 'erin' }))).toBe(false);
  }, PYTHON_START_MS);

  it('recycles back to back and while a replacement is under way, answering each request', async () => {
    await Promise.all([proc.recycle(), proc.recycle(), proc.recycle()]);
    expect(valueOf(await proc.run('result = 6 * 7', { agent: 'carol' }))).toBe(42);
  }, PYTHON_START_MS);
});
