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
