# The sandbox prelude, part 6: the self-check run after every call. The audit
# hook refuses changes to the prelude's functions, but a route it does not see (an in-place change
# to a __kwdefaults__ dict, a closure cell, a path nobody found yet) must not leave a worker that
# breaks every later call: the check notices, and the worker is replaced instead of reused.
# It compares by identity only, so no user code runs while it is made, in a few C-level passes
# (map with operator.is_ over one tuple per attribute).

def make_integrity_check(namespace, extra_functions, pinned):
    """A function that says whether the prelude is as it was at start-up: every function of the
    namespace and of its classes keeps its code, defaults, keyword defaults and closure, and the
    pinned objects keep their class."""
    functions = []
    seen = set()

    def add(f):
        if type(f) is _types.FunctionType and id(f) not in seen:
            seen.add(id(f))
            functions.append(f)

    for value in tuple(namespace.values()) + tuple(extra_functions):
        add(value)
        if isinstance(value, type):
            for member in tuple(value.__dict__.values()):
                add(getattr(member, '__func__', member))
                if isinstance(member, property):
                    add(member.fget)
                    add(member.fset)
    # One tuple per attribute, so the check is a few passes of C-level identity comparisons (map with
    # operator.is_) instead of a Python loop over every function: after every call, it is on the
    # call's path. Function attributes and cell contents are C-level descriptors of builtin types,
    # which no user code can override, so reading them runs no user code either.
    functions = tuple(functions)
    codes = tuple(f.__code__ for f in functions)
    defaults = tuple(f.__defaults__ for f in functions)
    kwdefaults = tuple(f.__kwdefaults__ for f in functions)
    closures = tuple(f.__closure__ for f in functions)
    kw_records = tuple((kw, tuple(kw), tuple(kw.values())) for kw in kwdefaults if kw is not None)
    all_cells = tuple(c for f in functions for c in f.__closure__ or ())
    cells = tuple(c for c in all_cells if _cell_full(c))
    contents = tuple(c.cell_contents for c in cells)
    empty_cells = tuple(c for c in all_cells if not _cell_full(c))
    pinned = tuple(pinned)
    classes = tuple(type(obj) for obj in pinned)

    def intact(_functions=functions, _codes=codes, _defaults=defaults, _kwdefaults=kwdefaults,
               _closures=closures, _kw_records=kw_records, _cells=cells, _contents=contents, _empty=empty_cells,
               _pinned=pinned, _classes=classes, _all=all, _cell_full=_cell_full, _map=map, _len=len,
               _is=_operator.is_, _type=type, _get=dict.get, _values=dict.values,
               _code=_operator.attrgetter('__code__'), _default=_operator.attrgetter('__defaults__'),
               _kwdefault=_operator.attrgetter('__kwdefaults__'), _closure=_operator.attrgetter('__closure__'),
               _content=_operator.attrgetter('cell_contents')):
        if not (_all(_map(_is, _map(_code, _functions), _codes))
                and _all(_map(_is, _map(_default, _functions), _defaults))
                and _all(_map(_is, _map(_kwdefault, _functions), _kwdefaults))
                and _all(_map(_is, _map(_closure, _functions), _closures))
                and _all(_map(_is, _map(_type, _pinned), _classes))):
            return False
        for kw, keys, values in _kw_records:
            if _len(kw) != _len(keys) or not _all(_map(_is, _values(kw), values)) or not _all(_map(_is, kw, keys)):
                return False
        for cell in _empty:
            if _cell_full(cell):
                return False
        try:
            return _all(_map(_is, _map(_content, _cells), _contents))
        except ValueError:
            return False  # a cell that was full at start-up is empty now

    return intact


def _cell_full(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False
