# The sandbox prelude, part 6: the self-check run after every call. The audit
# hook refuses changes to the prelude's functions, but a route it does not see (an in-place change
# to a __kwdefaults__ dict, a closure cell, a path nobody found yet) must not leave a worker that
# breaks every later call: the check notices, and the worker is replaced instead of reused.
# It compares by identity only, so no user code runs while it is made, in a few C-level passes
# (map with operator.is_ over what every function refers to, taken in one gc.get_referents call).

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
    # Reading __code__, __defaults__ or __kwdefaults__ raises an audit event, and the hook (a Python
    # function) runs for each: 3 reads of every function cost more than the rest of the check. So the
    # check takes every function's references at once, through one gc.get_referents call (C-level,
    # one audit event, which the hook lets through for functions only: it reveals nothing more):
    # code, globals, defaults, keyword defaults, closure, name, qualname, dict, annotations, in that
    # order. The lazily made ones (__dict__, __annotations__) are made now, so that a call reading
    # them does not look like damage. Cell contents and kwdefaults' items are read directly (no event).
    for f in functions:
        f.__dict__
        f.__annotations__
    functions = tuple(functions)
    referents = _referents_of(functions)
    kwdefaults = tuple(f.__kwdefaults__ for f in functions)
    kw_records = tuple((kw, tuple(kw), tuple(kw.values())) for kw in kwdefaults if kw is not None)
    all_cells = tuple(c for f in functions for c in f.__closure__ or ())
    cells = tuple(c for c in all_cells if _cell_full(c))
    contents = tuple(c.cell_contents for c in cells)
    empty_cells = tuple(c for c in all_cells if not _cell_full(c))
    pinned = tuple(pinned)
    classes = tuple(type(obj) for obj in pinned)

    def intact(_functions=functions, _referents=referents, _referents_of=_referents_of,
               _kw_records=kw_records, _cells=cells, _contents=contents, _empty=empty_cells,
               _pinned=pinned, _classes=classes, _all=all, _cell_full=_cell_full, _map=map, _len=len,
               _is=_operator.is_, _type=type, _values=dict.values,
               _content=_operator.attrgetter('cell_contents')):
        now = _referents_of(_functions)
        if not (_len(now) == _len(_referents) and _all(_map(_is, now, _referents))
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


def _referents_of(functions, _get_referents=_gc.get_referents):
    """What the functions refer to, in one list (the audit hook lets gc.get_referents pass for
    functions only, which refer to nothing their attributes do not give)."""
    return _get_referents(*functions)
