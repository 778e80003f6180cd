# The sandbox prelude, part 4: the same agent's hygiene between its own calls.
# Another agent never gets this interpreter (the pool host replaces it with a pristine one), so
# this is not a boundary, only what keeps an agent's calls from surprising each other cheaply.
# At start-up, after the usual modules are imported, the state calls share is recorded:
# sys.modules, every module's namespace, the attributes of every mutable class they define, of
# module-level objects and of closures' cells, and the lists, dicts and sets found there. After
# every call the quick sweep puts back sys.modules (imports of the call are dropped, so the next
# import runs afresh), every module the call assigned to or took the __dict__ of (modules are
# given a class that notices), and the classes and objects of the preloaded modules.
# Comparisons are by identity, so no user code runs while they are made. What only introspection
# reaches (function __globals__, frames) and deeper in-place changes can persist into the same
# agent's next call on this worker.
#
# The sweeps are built once with their whole world bound as defaults: a call may rebind any
# global of this namespace, but not the defaults of a function from here (the audit hook refuses).

import operator as _operator, gc as _gc, random as _random, os as _os, locale as _locale
from itertools import chain as _chain

_IMMUTABLE_TYPE = 1 << 8   # Py_TPFLAGS_IMMUTABLETYPE
# Swept after every call: the classes, objects and containers of the modules every call is handed.
# (Module namespaces themselves are swept when the call touched them: TrackedModule notices.)
# The sandbox's own namespace is always swept whole: it is what the next call's API is made of.
HOT_MODULES = frozenset({'json', 're', 'collections', 'statistics', 'datetime', 'math', SANDBOX_MODULE})
DIRTY_MODULES = set()
_module_dict_of = _types.ModuleType.__dict__['__dict__'].__get__


class TrackedModule(_types.ModuleType):
    """The class shared modules get: assignments and __dict__ access mark the module for the sweep."""

    def __setattr__(self, name, value, _dirty=DIRTY_MODULES, _add=set.add, _set=_types.ModuleType.__setattr__):
        _add(_dirty, self)
        _set(self, name, value)

    def __delattr__(self, name, _dirty=DIRTY_MODULES, _add=set.add, _del=_types.ModuleType.__delattr__):
        _add(_dirty, self)
        _del(self, name)

    def _namespace(self, _dirty=DIRTY_MODULES, _add=set.add, _get=_module_dict_of):
        _add(_dirty, self)
        return _get(self)

    __dict__ = property(_namespace)


def _mutable_class(value):
    return isinstance(value, type) and not (value.__flags__ & _IMMUTABLE_TYPE)


def _is_hot(module_name):
    return module_name in HOT_MODULES


# Exact types take_snapshot has nothing to record for: built-in and immutable, not modules, classes,
# functions or containers, and their objects cannot claim another __class__ (so every check of
# record_value falls through for them). Half the values it meets are of these: one set lookup
# instead of those checks. The filter keeps the claim true whatever is listed. By id: hashing an
# arbitrary class could run its metaclass's code (these built-in types live as long as the process).
_PLAIN_TYPE_IDS = frozenset(id(t) for t in (
    str, int, float, complex, bool, type(None), bytes, tuple, frozenset, range, type(Ellipsis),
    staticmethod, classmethod, property, _types.BuiltinFunctionType, _types.MethodDescriptorType,
    _types.WrapperDescriptorType, _types.GetSetDescriptorType, _types.MemberDescriptorType,
    _types.ClassMethodDescriptorType, _types.MethodWrapperType,
) if t.__flags__ & _IMMUTABLE_TYPE and not issubclass(t, (type, _types.ModuleType, _types.FunctionType, list, dict, set)))


def take_snapshot(extra_namespaces=()):
    """Records the shared state; returns (the quick sweep, protected object ids)."""
    modules = dict(sys.modules)
    # Only the hot records are swept after every call; elsewhere the walk finds the protected
    # functions and classes, and marks what it has seen exactly as before (which decides what it
    # walks next), without building records nobody reads.
    hot = {'dict': [], 'class': [], 'list': [], 'set': [], 'cell': []}
    by_module = {}
    seen = set()
    protected = set()

    def record_container(v, is_hot):
        if id(v) in seen:
            return
        seen.add(id(v))
        if not is_hot:
            return
        t = type(v)
        if t is list:
            hot['list'].append((v, tuple(v)))
        elif t is dict:
            hot['dict'].append((v, tuple(v), tuple(v.values())))
        elif t is set:
            hot['set'].append((v, tuple(v), frozenset(map(id, v))))

    def record_function(f, is_hot):
        protected.add(id(f))
        if f.__kwdefaults__:
            record_container(f.__kwdefaults__, is_hot)
        for cell in f.__closure__ or ():
            if id(cell) not in seen:
                seen.add(id(cell))
                if is_hot:
                    try:
                        hot['cell'].append((cell, cell.cell_contents))
                    except ValueError:
                        pass

    def _mark_function(f, _add=seen.add):
        # What record_function(f, False) does, in one call instead of two: no records, the same marks.
        protected.add(id(f))
        kw = f.__kwdefaults__
        if kw:
            _add(id(kw))
        for cell in f.__closure__ or ():
            _add(id(cell))

    def record_value(v, depth, is_hot, _plain=_PLAIN_TYPE_IDS, _FunctionType=_types.FunctionType):
        t = type(v)
        if id(t) in _plain:
            return
        if t is _types.FunctionType:
            record_function(v, is_hot)
            return
        if isinstance(v, _types.ModuleType):
            return
        if _mutable_class(v):
            if id(v) in seen:
                return
            seen.add(id(v))
            protected.add(id(v))
            mp = v.__dict__
            if is_hot:
                hot['class'].append((v, tuple(mp), tuple(mp.values())))
            if depth == 0:
                for item in tuple(mp.values()):
                    t = type(item)
                    if id(t) in _plain:
                        continue
                    if t is _FunctionType and not is_hot:
                        _mark_function(item)
                        continue
                    record_value(item, 1, is_hot)
            return
        if type(v) is _types.FunctionType:
            record_function(v, is_hot)
            return
        if type(v) in (list, dict, set):
            record_container(v, is_hot)
            return
        if depth == 0 and not isinstance(v, type) and _mutable_class(type(v)):
            inst = getattr(v, '__dict__', None)
            if type(inst) is dict and id(inst) not in seen:
                record_container(inst, is_hot)
                for item in tuple(inst.values()):
                    if type(item) in (list, dict, set):
                        record_container(item, is_hot)

    namespaces = [(name, _module_dict_of(m)) for name, m in modules.items() if isinstance(m, _types.ModuleType)]
    namespaces += [(SANDBOX_MODULE, ns) for ns in extra_namespaces]
    # Hot modules first: what they hold is recorded as hot even when another module holds it too.
    namespaces.sort(key=lambda item: not _is_hot(item[0]))
    for name, namespace in namespaces:
        if type(namespace) is not dict or id(namespace) in seen:
            continue
        seen.add(id(namespace))
        entry = (namespace, tuple(namespace), tuple(namespace.values()))
        if name == SANDBOX_MODULE:
            hot['dict'].append(entry)
        by_module[id(namespace)] = entry
        is_hot = _is_hot(name)
        for value in tuple(namespace.values()):
            t = type(value)
            if id(t) in _PLAIN_TYPE_IDS:
                continue
            if t is _types.FunctionType and not is_hot:
                _mark_function(value)
                continue
            record_value(value, 0, is_hot)

    # The collector calls this list (whatever gc.callbacks is rebound to) in every clean-up and call:
    # a call's callbacks go with the quick sweep, which repeats while a repair drops something.
    hot['list'].append((_gc.callbacks, tuple(_gc.callbacks)))

    # From now on, module assignments are noticed.
    for m in modules.values():
        if type(m) is _types.ModuleType:
            m.__class__ = TrackedModule

    module_state = (tuple(modules), tuple(modules.values()))
    quick = make_sweep(module_state, hot, DIRTY_MODULES, by_module)
    return quick, frozenset(protected)


def make_unchanged(records):
    """A check of every record at once, in C-level passes: the per-container lengths, then every
    key (or item) and every value in order, by identity. True means each container holds exactly
    what was recorded; False only means "look closer" (a set that reordered itself, say), and the
    sweep's per-object pass then decides. Like the sweep, it runs no user code: the containers are
    exact lists, dicts, sets and class mappingproxies, and cells are read with a C-level getter."""
    dicts, classes = records['dict'], records['class']
    mapped = tuple(d for d, _, _ in dicts) + tuple(cls.__dict__ for cls, _, _ in classes)
    containers = mapped + tuple(lst for lst, _ in records['list']) + tuple(s for s, _, _ in records['set'])
    lengths = (tuple(len(keys) for _, keys, _ in dicts) + tuple(len(keys) for _, keys, _ in classes)
               + tuple(len(items) for _, items in records['list']) + tuple(len(items) for _, items, _ in records['set']))
    flat = _chain.from_iterable
    keys = tuple(flat(keys for _, keys, _ in dicts + classes)) + tuple(flat(items for _, items in records['list'])) + tuple(flat(items for _, items, _ in records['set']))
    values = tuple(flat(values for _, _, values in dicts + classes))
    cells = tuple(cell for cell, _ in records['cell'])
    contents = tuple(content for _, content in records['cell'])

    def unchanged(_containers=containers, _lengths=lengths, _mapped=mapped, _keys=keys, _values=values,
                  _cells=cells, _contents=contents, _flat=flat, _tuple=tuple, _map=map, _len=len, _all=all,
                  _is=_operator.is_, _values_of=_operator.methodcaller('values'),
                  _content=_operator.attrgetter('cell_contents')):
        if _tuple(_map(_len, _containers)) != _lengths:
            return False
        if not (_all(_map(_is, _flat(_containers), _keys)) and _all(_map(_is, _flat(_map(_values_of, _mapped)), _values))):
            return False
        try:
            return _all(_map(_is, _map(_content, _cells), _contents))
        except ValueError:
            return False  # a cell emptied since

    return unchanged


def make_sweep(module_state, records, dirty, by_module):
    missing = object()
    unchanged = make_unchanged(records)

    def sweep(_modules=sys.modules, _module_keys=module_state[0], _module_values=module_state[1],
              _dicts=tuple(records['dict']), _classes=tuple(records['class']), _lists=tuple(records['list']),
              _sets=tuple(records['set']), _cells=tuple(records['cell']), _dirty=dirty, _by_module=by_module,
              _missing=missing, _len=len, _all=all, _map=map, _is=_operator.is_, _zip=zip, _dict=dict,
              _tuple=tuple, _id=id, _frozenset=frozenset, _set_attr=type.__setattr__,
              _del_attr=type.__delattr__, _clear=dict.clear, _update=dict.update, _values=dict.values,
              _get=dict.get, _namespace_of=_module_dict_of, _unchanged=unchanged):
        """Puts back what differs from the snapshot; returns how many objects it repaired."""
        repaired = 0
        if (_len(_modules) != _len(_module_keys) or not _all(_map(_is, _values(_modules), _module_values))
                or not _all(_map(_is, _modules, _module_keys))):
            _clear(_modules)
            _update(_modules, _zip(_module_keys, _module_values))
            repaired += 1
        # Usually nothing changed: one pass over everything says so, and the per-object pass below
        # is left for the modules the call touched.
        if _unchanged():
            dicts, classes, lists, sets, cells = (), (), (), (), ()
        else:
            dicts, classes, lists, sets, cells = _dicts, _classes, _lists, _sets, _cells
        if _dirty is not None:
            touched = _tuple(_dirty)
            _dirty.clear()
            dicts = _tuple(_get(_by_module, _id(_namespace_of(m)), _missing) for m in touched) + dicts
        for entry in dicts:
            if entry is _missing:
                continue
            d, keys, values = entry
            if _len(d) != _len(keys) or not _all(_map(_is, _values(d), values)) or not _all(_map(_is, d, keys)):
                _clear(d)
                _update(d, _zip(keys, values))
                repaired += 1
        for cls, keys, values in classes:
            mp = cls.__dict__
            if _len(mp) == _len(keys) and _all(_map(_is, mp.values(), values)) and _all(_map(_is, mp, keys)):
                continue
            pristine = _dict(_zip(keys, values))
            for k in _tuple(mp):
                if _get(pristine, k, _missing) is _missing:
                    _del_attr(cls, k)
            for k, v in _zip(keys, values):
                if mp.get(k, _missing) is not v:
                    _set_attr(cls, k, v)
            repaired += 1
        for lst, items in lists:
            if _len(lst) != _len(items) or not _all(_map(_is, lst, items)):
                lst[:] = items
                repaired += 1
        for s, items, ids in sets:
            if _len(s) != _len(items) or _frozenset(_map(_id, s)) != ids:
                s.clear()
                s.update(items)
                repaired += 1
        for cell, contents in cells:
            try:
                same = cell.cell_contents is contents
            except ValueError:
                same = False
            if not same:
                cell.cell_contents = contents
                repaired += 1
        return repaired

    return sweep


class Settings:
    """Interpreter-wide settings a call may change, as they were at start-up."""
    recursion_limit = sys.getrecursionlimit()
    int_max_str_digits = sys.get_int_max_str_digits()
    gc_threshold = _gc.get_threshold()
    locale = _locale.setlocale(_locale.LC_ALL)


def make_reset(_settings=(Settings.recursion_limit, Settings.int_max_str_digits, Settings.gc_threshold, Settings.locale)):
    def reset_settings(_s=_settings, _sys=sys, _gc=_gc, _random=_random, _urandom=_os.urandom,
                       _from_bytes=int.from_bytes, _locale=_locale, _LC_ALL=_locale.LC_ALL):
        _sys.setrecursionlimit(_s[0])
        _sys.set_int_max_str_digits(_s[1])
        _gc.enable()
        _gc.set_threshold(*_s[2])
        try:
            if _locale.setlocale(_LC_ALL) != _s[3]:
                _locale.setlocale(_LC_ALL, _s[3])
        except Exception:
            pass
        # A call's random state must not let the next one predict (or learn) its numbers.
        _random.seed(_from_bytes(_urandom(16), 'little'))

    return reset_settings
