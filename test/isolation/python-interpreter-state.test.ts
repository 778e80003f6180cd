// Attack class: Python interpreter state shared by every call on a Pyodide worker: ABC registries,
// the codec search path, decimal's C-level default context, sys hooks, copyreg, warnings, function
// defaults of the sandbox API and of stdlib functions, the garbage collector's view of other calls,
// and an agent that only reads a namespace planting code that runs with its co-tenant's powers.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agent, expectNoSecret, loot, PYTHON_START_MS, run, startIsolationDaemon } from './helpers.js';
import type { IsolationDaemon, RunResult } from './helpers.js';

const SECRET = 'sk-victim-PYSECRET-42d1';

// Ordinary Python a victim runs: money with Decimal, a Mapping check on its own class, JSON, re,
// codecs, deepcopy, warnings, random, and its workspace. Its run alone is the reference.
const VICTIM = `
import json, re, decimal, collections, collections.abc, codecs, copy, random, warnings
KEY = ${JSON.stringify(SECRET)}
class Order:
    def __init__(self):
        self.key = KEY
        self.amount = 10
order = Order()
out = {}
out['total'] = str(decimal.Decimal('19.99') * 3)
out['mapping'] = [isinstance(order, collections.abc.Mapping), isinstance({'k': 1}, collections.abc.Mapping), issubclass(Order, collections.abc.Sequence)]
out['dumps'] = json.dumps({'key': KEY, 'amount': order.amount})
out['loads'] = json.loads('{"amount": 10}')
out['re'] = re.compile(r'amount=(\\d+)').findall('amount=10')
out['codec'] = [codecs.lookup('utf-8').name, 'amount=10'.encode('utf-8').decode('utf-8'), codecs.encode(KEY, 'rot13') == KEY]
out['copy'] = dict(copy.deepcopy(collections.OrderedDict(key=KEY, amount=10)))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    warnings.warn('cheap', UserWarning)
out['warned'] = len(caught)
try:
    warnings.warn('plain', DeprecationWarning)
    out['deprecation'] = 'ignored'
except Exception as e:
    out['deprecation'] = type(e).__name__
out['predictable'] = random.random() == random.Random(1234).random()
write_file('receipt.txt', KEY + ' amount=' + str(order.amount))
out['read'] = read_file('receipt.txt')
out['files'] = sorted(list_files())
try:
    1 / 0
except ZeroDivisionError as e:
    out['error'] = str(e)
print('charged', order.amount, 'with', KEY)
result = out
`;

let d: IsolationDaemon;
let attacker: Client;
let victim: Client;
let reader: Client;
let reference: RunResult;

beforeAll(async () => {
  d = await startIsolationDaemon({
    agents: [agent('mallory'), agent('alice'), agent('auditor', { workspace: 'read', skills: 'read' }, 'alice')],
    processes: 1,
    pythonProcesses: 1,
  });
  [attacker, victim, reader] = await Promise.all([d.client('mallory'), d.client('alice'), d.client('auditor')]);
  reference = await run(victim, VICTIM, 'python', 120);
  expect(reference.success, `${reference.error}\n${reference.traceback}`).toBe(true);
}, PYTHON_START_MS);

afterAll(async () => {
  await d?.stop();
});

// Best effort: an attack that worked is taken back, so the next test's failure is its own.
let undo = '';
afterEach(async () => {
  if (undo) await run(attacker, undo, 'python');
  undo = '';
  await run(victim, 'for name in list_files():\n    delete_file(name)', 'python');
});

async function expectVictimUntouched(): Promise<void> {
  await run(victim, "delete_file('receipt.txt')", 'python');
  const attacked = await run(victim, VICTIM, 'python');
  expect({ success: attacked.success, error: attacked.error ?? null, result: attacked.result, output: attacked.output }).toEqual({ success: true, error: null, result: reference.result, output: reference.output });
  const files = await run(victim, 'result = sorted(list_files())', 'python');
  expect(files.result).toEqual(['receipt.txt']);
}

/** Plant, victim, collect, three rounds, both orders, on the one Python worker. */
async function attackRounds(plant: string, collect: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    if (round === 1) await expectVictimUntouched();
    const planted = await run(attacker, plant, 'python');
    expect(JSON.stringify(planted)).not.toContain(SECRET);
    await expectVictimUntouched();
    expectNoSecret(await run(attacker, collect, 'python'), [SECRET]);
  }
  expectNoSecret(await loot(attacker, 'python'), [SECRET]);
}

// The attacker's stash lives in the codec search path (a C-level list no sweep sees): a lookup of
// a fresh name returns the stash as the codec's name.
const STASH = `
import codecs, json, sys, random
try:
    stash = codecs.lookup('mallory_stash_%d' % random.randrange(1 << 30)).name
    stash = json.loads(stash)
except Exception:
    stash = []
`;
const COLLECT_CODE = `${STASH}
write_file('loot.txt', json.dumps(stash))
result = stash
`;
// The attacker's helpers hold their state in closures, not in the call's globals (which end with
// the call), and anchor themselves in the codec search path, so they outlive the call.
const KEEP_CODE = `
import codecs, json, sys
def _make():
    import sys, json, codecs
    box = []
    def search(name):
        if name.startswith('mallory_stash'):
            return codecs.CodecInfo(name=json.dumps(box), encode=codecs.utf_8_encode, decode=codecs.utf_8_decode)
        return None
    def keep(*items):
        box.extend(str(i) for i in items)
    def walk_frames():
        # From any hook: the caller's globals, where the victim's KEY and powers live.
        f = sys._getframe(1)
        while f is not None:
            g = f.f_globals
            if 'KEY' in g:
                keep(g['KEY'])
                try:
                    g['write_file']('planted.txt', 'written by mallory with the victim powers')
                except Exception:
                    pass
            f = f.f_back
    return search, keep, walk_frames
_search, keep, walk_frames = _make()
def anchor(*things):
    try:
        codecs.register(lambda name, _anchor=things: None)
    except Exception as e:
        print('codecs.register refused', type(e).__name__)
anchor(_search)
try:
    codecs.register(_search)
except Exception as e:
    print('codecs.register refused', type(e).__name__)
`;

/** The helpers and their collector under a stash name of one test, so tests do not read each other's. */
function keep(tag: string): string {
  return KEEP_CODE.replaceAll('mallory_stash', `mallory_stash_${tag}`);
}
function collect(tag: string): string {
  return COLLECT_CODE.replaceAll('mallory_stash', `mallory_stash_${tag}`);
}

describe('interpreter state one agent changes', () => {
  it("an ABC registered with a __subclasshook__ never runs in another agent's isinstance", async () => {
    const plant = `${keep('abc')}
import collections.abc, abc
class Evil(metaclass=abc.ABCMeta):
    _walk = staticmethod(walk_frames)
    @classmethod
    def __subclasshook__(cls, C):
        cls._walk()
        return NotImplemented
anchor(Evil)
for base in (collections.abc.Mapping, collections.abc.Sequence, collections.abc.Iterable):
    try:
        base.register(Evil)
    except Exception as e:
        print('register refused', type(e).__name__)
result = 'planted'`;
    undo = 'import collections.abc\nfor b in (collections.abc.Mapping, collections.abc.Sequence, collections.abc.Iterable):\n    b._abc_registry_clear(); b._abc_caches_clear()';
    await attackRounds(plant, collect('abc'));
  }, 300_000);

  it("decimal's default context, codecs, copyreg, warnings and random seeded by one agent do not reach another", async () => {
    const plant = `${keep('state')}
import decimal, copyreg, collections, warnings, random
for change in (lambda: setattr(decimal.DefaultContext, 'prec', 3), lambda: setattr(decimal.getcontext(), 'prec', 3),
               lambda: decimal.setcontext(decimal.Context(prec=3)),
               lambda: copyreg.pickle(collections.OrderedDict, lambda od, _k=keep: (_k(*od.values()) or collections.OrderedDict, (), None, None, iter([('amount', 999999)]))),
               lambda: warnings.filterwarnings('error'), lambda: random.seed(1234),
               lambda: codecs.register(lambda name: codecs.lookup('utf-16') if name in ('utf_8', 'utf-8', 'rot13', 'rot_13') else None)):
    try:
        change()
    except Exception as e:
        print('refused', type(e).__name__)
result = 'planted'`;
    undo = 'import decimal, copyreg, collections, warnings\ndecimal.DefaultContext.prec = 28\ncopyreg.dispatch_table.pop(collections.OrderedDict, None)\nwarnings.resetwarnings()';
    await attackRounds(plant, collect('state'));
  }, 300_000);

  it("sys hooks one agent installs never run in another agent's call", async () => {
    const plant = `${keep('hooks')}
def _hooks(walk):
    def hook(*args, **kwargs):
        walk()
        return hook
    return hook
hook = _hooks(walk_frames)
anchor(hook)
for name, install in (('settrace', lambda: sys.settrace(hook)), ('setprofile', lambda: sys.setprofile(hook)),
                      ('displayhook', lambda: setattr(sys, 'displayhook', hook)), ('excepthook', lambda: setattr(sys, 'excepthook', hook)),
                      ('unraisablehook', lambda: setattr(sys, 'unraisablehook', hook)), ('breakpointhook', lambda: setattr(sys, 'breakpointhook', hook)),
                      ('addaudithook', lambda: sys.addaudithook(lambda event, args, _w=walk_frames: _w() if event in ('open', 'exec', 'compile', 'import') else None)),
                      ('stdout', lambda: setattr(sys, 'stdout', None))):
    try:
        install()
    except Exception as e:
        print(name, 'refused', type(e).__name__)
result = 'planted'`;
    await attackRounds(plant, collect('hooks'));
  }, 300_000);

  it("the garbage collector and sys.modules never hand one agent another agent's objects", async () => {
    // The victim runs first, then the attacker scans every object the interpreter still holds.
    await expectVictimUntouched();
    const scan = `
import sys
found = []
def scan(objects):
    for o in objects:
        try:
            if isinstance(o, str) and 'PYSECRET' in o:
                found.append(o)
            elif isinstance(o, dict):
                found.extend(v for v in list(o.values()) if isinstance(v, str) and 'PYSECRET' in v)
        except Exception:
            pass
routes = {}
for name in ('gc', '_pyodide_core', 'importlib', 'pyodide', 'js', 'pyodide_js', '_testinternalcapi'):
    try:
        routes[name] = sys.modules.get(name) is not None
        mod = sys.modules.get(name) or __import__(name)
        if name == 'gc':
            scan(mod.get_objects())
    except Exception as e:
        routes[name] = type(e).__name__
f = sys._getframe()
while f is not None:
    scan([f.f_globals, f.f_locals])
    f = f.f_back
scan(sys.modules.values())
write_file('loot.txt', '\\n'.join(found))
result = found`;
    expectNoSecret(await run(attacker, scan, 'python'), [SECRET]);
    expectNoSecret(await loot(attacker, 'python'), [SECRET]);
  }, 300_000);
});

describe('two agents on one namespace', () => {
  it("code planted by a read-only agent never runs with the read-write agent's powers", async () => {
    const refused = await run(reader, "write_file('direct.txt', 'x')", 'python');
    expect(refused).toMatchObject({ success: false, error_type: 'PermissionError' });
    const plant = `${keep('shared')}
import collections.abc, abc
class Evil(metaclass=abc.ABCMeta):
    _walk = staticmethod(walk_frames)
    @classmethod
    def __subclasshook__(cls, C):
        cls._walk()
        return NotImplemented
anchor(Evil)
collections.abc.Mapping.register(Evil)
import decimal
decimal.DefaultContext.prec = 3
result = 'planted'`;
    undo = 'import collections.abc, decimal\ncollections.abc.Mapping._abc_registry_clear(); collections.abc.Mapping._abc_caches_clear()\ndecimal.DefaultContext.prec = 28';
    for (let round = 0; round < 2; round++) {
      await run(reader, plant, 'python');
      await expectVictimUntouched();
      const listed = await run(reader, 'result = sorted(list_files())', 'python');
      expect(listed.result).toEqual(['receipt.txt']);
    }
  }, 300_000);
});

// Last: no agent can take back a replaced __code__, so what works here must not blame earlier tests.
describe('the sandbox API and stdlib functions', () => {
  it('changing the defaults or code of the sandbox API and of stdlib functions stays in the call', async () => {
    const plant = `${keep('defaults')}
import json, re
def tampered(path):
    return 'tampered'
changes = {
    'del read_file.__defaults__': lambda: delattr(list_files, '__defaults__'),
    'list_files.__defaults__ = None': lambda: setattr(list_files, '__defaults__', None),
    'write_file.__defaults__': lambda: setattr(write_file, '__defaults__', ('stolen',)),
    'read_file.__code__': lambda: setattr(read_file, '__code__', tampered.__code__),
    'json.dumps.__kwdefaults__': lambda: json.dumps.__kwdefaults__.update(sort_keys=True, indent=1),
    'json.JSONEncoder.__init__.__kwdefaults__': lambda: json.JSONEncoder.__init__.__kwdefaults__.update(indent=2),
    're.compile.__defaults__': lambda: setattr(re.compile, '__defaults__', (re.IGNORECASE | re.VERBOSE,)),
    'json.loads.__code__': lambda: setattr(json.loads, '__code__', (lambda s, **kw: {'amount': 999999}).__code__),
}
done = []
for name, change in changes.items():
    try:
        change()
        done.append(name)
    except Exception as e:
        pass
result = done`;
    await attackRounds(plant, collect('defaults'));
  }, 300_000);
});
