# guard.py: the audit hook, the import guard, sys as user code sees it, and the call's output.
import sys


def hook():
    return make_audit_hook(frozenset({'json'}), frozenset())


def test_audit_hook_refuses_processes_sockets_and_tracing():
    h = hook()
    for event in ('os.system', 'subprocess.Popen', 'socket.connect', 'sys.settrace', 'ctypes.dlopen', 'os.remove'):
        e = raises(PermissionError, h, event, ())
        assert event in str(e)


def test_audit_hook_lets_imports_list_the_standard_library_only():
    h = hook()
    h('os.listdir', ('/lib/python3.14',))
    for path in ('/home/pyodide', '/lib/../etc', b'/lib/', None):
        raises(PermissionError, h, 'os.listdir', (path,))


def test_audit_hook_allows_reading_the_standard_library_only():
    h = hook()
    h('open', ('/lib/python3.14/json/__init__.py', 'r', 0))
    h('open', ('/lib/x.py', None, 0))
    for args in (('/etc/passwd', 'r', 0), ('/lib/x.py', 'w', 0), ('/lib/x.py', 'r+', 0),
                 ('/lib/x.py', None, 1), ('/lib/../etc/passwd', 'r', 0), (3, 'r', 0), (b'\xff', 'r', 0)):
        assert str(raises(PermissionError, h, 'open', args)) == OPEN_REFUSED, args


def test_audit_hook_refuses_os_open_flags_that_create_or_truncate_under_lib():
    import os
    h = hook()
    h('open', ('/lib/x.py', None, os.O_RDONLY | getattr(os, 'O_CLOEXEC', 0)))
    for flags in (os.O_CREAT, os.O_TRUNC, os.O_APPEND, os.O_CREAT | os.O_EXCL, os.O_RDONLY | os.O_CREAT | os.O_TRUNC):
        assert str(raises(PermissionError, h, 'open', ('/lib/python3.14/pwned.py', None, flags))) == OPEN_REFUSED, flags


def test_audit_hook_refuses_modules_never_loaded():
    h = hook()
    raises(ImportError, h, 'import', ('ctypes', None, None, None, None))
    raises(ImportError, h, 'import', ('ctypes.util', None, None, None, None))
    h('import', ('json', None, None, None, None))


def test_audit_hook_refuses_changes_to_protected_functions():
    h = hook()

    def victim():
        pass

    victim.__module__ = 'json'
    raises(PermissionError, h, 'object.__setattr__', (victim, '__code__', None))
    victim.__module__ = 'elsewhere'
    h('object.__setattr__', (victim, '__code__', None))
    pinned = object()
    h2 = make_audit_hook(frozenset(), frozenset({id(pinned)}))
    raises(PermissionError, h2, 'object.__setattr__', (pinned, '__class__', None))


def test_import_guard_refuses_denied_modules_and_submodules():
    for name in ('os.system', 'ctypes', 'subprocess', 'importlib', 'gc', 'http.client'):
        assert f"'{name}'" in str(raises(ImportError, guarded_import, name))
    raises(ImportError, guarded_import, 'urllib', None, None, ('request',))
    assert guarded_import('json') is sys.modules['json']
    assert guarded_import('sys') is SYS_VIEW


def test_sys_view_hides_frames_tracing_and_the_module_table():
    raises(AttributeError, getattr, SYS_VIEW, '_getframe')
    raises(AttributeError, getattr, SYS_VIEW, 'settrace')
    raises(AttributeError, setattr, SYS_VIEW, 'modules', {})
    raises(AttributeError, delattr, SYS_VIEW, 'path')
    assert 'settrace' not in dir(SYS_VIEW)
    assert 'ctypes' not in SYS_VIEW.modules and 'json' in SYS_VIEW.modules
    assert SYS_VIEW.modules is not sys.modules
    assert SYS_VIEW.version == sys.version


def test_user_builtins_are_fresh_and_refuse_files_and_the_console():
    a, b = user_builtins(), user_builtins()
    assert a is not b and a['__import__'] is guarded_import
    a['len'] = None
    assert b['len'] is len
    assert str(raises(PermissionError, a['open'], '/etc/passwd')) == OPEN_REFUSED
    raises(EOFError, a['input'])
    assert raises(SystemExit, a['exit'], 3).code == 3
    assert 'help' not in a


def test_output_emits_whole_lines():
    lines = []
    out = Output(lines.append)
    out.write('a\nb')
    out.writelines(['c\n', 'd'])
    assert lines == ['a', 'bc']
    out.close_call()
    assert lines == ['a', 'bc', 'd']
    out.write('after\n')
    assert lines == ['a', 'bc', 'd']
    raises(TypeError, out.write, b'bytes')
    raises(OSError, out.fileno)


def test_gc_get_referents_passes_for_functions_only():
    h = hook()

    def f():
        return 1

    h('gc.get_referents', ((),))
    h('gc.get_referents', ((f, hook, make_audit_hook),))
    for objs in ((1,), (int.__dict__,), (f, int.__dict__), (f.__globals__,), (staticmethod(f),)):
        raises(PermissionError, h, 'gc.get_referents', (objs,))
    # sys.audit can raise the event with any arguments: nothing but one tuple of functions passes.
    for args in ((), ([f],), ((f,), (f,)), (iter((f,)),)):
        raises(PermissionError, h, 'gc.get_referents', args)
    for event in ('gc.get_referrers', 'gc.get_objects', 'os.system'):
        raises(PermissionError, h, event, ((f,),))


def test_the_hook_keeps_nothing_mutable_that_could_widen_what_it_allows():
    # Its frame reaches user code in the traceback of every event it refuses (f_locals: its defaults).
    h = hook()
    mutable = [v for v in h.__defaults__ if type(v) in (list, dict, set, bytearray)]
    assert mutable == []
