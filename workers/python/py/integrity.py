# The sandbox prelude, part 6: the self-check run after every call. The audit
# hook refuses changes to the prelude's functions, but a route it does not see (an in-place change
# to a __kwdefaults__ dict, a closure cell, a path nobody found yet) must not leave a worker that
# breaks every later call: the check notices, and the worker is replaced instead of reused.
# It compares by identity only, so no user code runs while it is made (~0.1 ms).

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
    records = []
    for f in functions:
        kw = f.__kwdefaults__
        cells = tuple(c.cell_contents for c in f.__closure__ or () if _cell_full(c))
        records.append((f, f.__code__, f.__defaults__, kw, tuple(kw.items()) if kw else (), f.__closure__, cells))
    records = tuple(records)
    pins = tuple((obj, type(obj)) for obj in pinned)

    missing = object()

    def intact(_records=records, _pins=pins, _type=type, _len=len, _zip=zip, _cell_full=_cell_full,
               _all=all, _tuple=tuple, _missing=missing, _get=dict.get):
        for f, code, defaults, kw, kw_items, closure, cells in _records:
            if f.__code__ is not code or f.__defaults__ is not defaults or f.__kwdefaults__ is not kw:
                return False
            if kw is not None:
                if _len(kw) != _len(kw_items):
                    return False
                for k, v in kw_items:
                    if _get(kw, k, _missing) is not v:
                        return False
            if f.__closure__ is not closure:
                return False
            if closure:
                now = _tuple(c.cell_contents for c in closure if _cell_full(c))
                if _len(now) != _len(cells) or not _all(a is b for a, b in _zip(now, cells)):
                    return False
        for obj, cls in _pins:
            if _type(obj) is not cls:
                return False
        return True

    return intact


def _cell_full(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False
