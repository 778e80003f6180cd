# integrity.py: the self-check notices changes made by routes the audit hook does not see.


def make(namespace, extra=(), pinned=()):
    return make_integrity_check(namespace, extra, pinned)


def test_intact_until_a_function_changes():
    def f(a=1, *, b=2):
        return a + b

    intact = make({'f': f})
    assert intact()
    f.__kwdefaults__['b'] = 3
    assert not intact()


def test_notices_replaced_defaults_and_code():
    def f(a=1):
        return a

    def g():
        return 0

    intact = make({'f': f})
    f.__defaults__ = (2,)
    assert not intact()
    intact = make({'f': f})
    f.__code__ = g.__code__
    assert not intact()


def test_notices_a_changed_closure_cell():
    box = [1]

    def outer():
        value = box

        def inner():
            return value

        return inner

    inner = outer()
    intact = make({}, (inner,))
    assert intact()
    inner.__closure__[0].cell_contents = [2]
    assert not intact()


def test_covers_methods_and_properties_of_classes():
    class C:
        def m(self, x=1):
            return x

        @property
        def p(self):
            return 1

    intact = make({'C': C})
    C.__dict__['p'].fget.__defaults__ = (5,)
    assert not intact()


def test_notices_a_pinned_object_changing_class():
    class A:
        pass

    class B:
        pass

    obj = A()
    intact = make({}, (), (obj,))
    assert intact()
    obj.__class__ = B
    assert not intact()


def test_notices_a_cell_emptied_or_an_empty_cell_filled():
    def outer():
        full = 1
        empty = None
        del empty

        def inner():
            return full, empty  # noqa: F821 (empty is unbound on purpose)

        return inner

    inner = outer()
    cells = {name: cell for name, cell in zip(inner.__code__.co_freevars, inner.__closure__)}
    intact = make({}, (inner,))
    assert intact()
    cells['empty'].cell_contents = 2
    assert not intact()
    del cells['empty'].cell_contents
    assert intact()
    del cells['full'].cell_contents
    assert not intact()


def test_notices_a_kwdefaults_dict_changed_in_place():
    def f(*, a=1):
        return a

    intact = make({'f': f})
    f.__kwdefaults__['a'] = 2
    assert not intact()
    f.__kwdefaults__['a'] = 1
    assert intact()
    f.__kwdefaults__['b'] = 3
    assert not intact()


def test_reading_lazily_made_attributes_is_not_damage():
    def f(a: int = 1):
        return a

    def g():
        return 0

    intact = make({'f': f, 'g': g})
    f.__dict__
    g.__annotations__
    f.__annotations__['a']
    assert intact()
    g.__name__ = 'renamed'
    assert not intact()


def test_notices_a_replaced_kwdefaults():
    def f():
        return 1

    import types
    h = types.FunctionType(f.__code__, {}, 'f')
    intact = make({'h': h})
    assert intact()
    h.__kwdefaults__ = {'x': 1}
    assert not intact()


def test_referents_are_what_the_attributes_give():
    def f(a: int = 1, *, b=2):
        return a, b, make

    attrs = ('__code__', '__globals__', '__builtins__', '__module__', '__defaults__', '__kwdefaults__', '__doc__',
             '__name__', '__qualname__', '__dict__', '__closure__', '__annotations__', '__annotate__', '__type_params__')
    reachable = {id(getattr(g, a, None)) for g in (f, make) for a in attrs}
    assert [r for r in _referents_of((f, make)) if id(r) not in reachable] == []
