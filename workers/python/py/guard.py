# The sandbox prelude, part 1: the policy Python code runs under. An audit hook
# (which Python code cannot remove) refuses processes, sockets, ctypes, tracing, host-like file
# access and code-object forgery; user imports go through an import guard; each call gets its own
# builtins. These are the Python layer only: the JavaScript layer (host-powers.ts, lockdown)
# holds even if Python code gets around them.
#
# Functions that must survive hostile code (the audit hook) take everything they use as default
# arguments: Python code can rebind module globals and closure cells, but changing a function's
# __defaults__ or __code__ raises an audit event that this hook refuses.

import sys, builtins as _builtins_module, types as _types, operator as _operator, os as _os
from itertools import repeat as _repeat

SANDBOX_MODULE = '_sandbox'
USER_FILENAME = '<code>'

# Modules user code may not import by name. Most stay loaded for the stdlib's own use; what they
# could do is refused by the audit hook below as well.
USER_DENIED_MODULES = frozenset({
    'js', 'pyodide', 'pyodide_js', '_pyodide', '_pyodide_core', 'micropip', 'emscripten',
    'ctypes', '_ctypes', 'subprocess', '_posixsubprocess', 'socket', '_socket', 'ssl', '_ssl',
    'select', 'selectors', 'multiprocessing', '_multiprocessing', 'signal', '_signal',
    'faulthandler', 'resource', 'pty', 'tty', 'termios', 'fcntl', 'mmap', 'importlib',
    'zipimport', 'pkgutil', 'runpy', '_imp', 'marshal', '_frozen_importlib',
    '_frozen_importlib_external', 'code', 'codeop', 'pdb', 'bdb', 'trace', 'tracemalloc',
    '_tracemalloc', 'ftplib', 'smtplib', 'poplib', 'imaplib', 'nntplib', 'telnetlib',
    'socketserver', 'xmlrpc', 'webbrowser', 'ensurepip', 'venv', 'sysconfig', '_sysconfig',
    '_testcapi', '_testinternalcapi', '_testbuffer', '_testmultiphase', '_testsinglephase',
    '_interpreters', '_interpqueues', '_interpchannels', '_xxsubinterpreters', 'sqlite3', '_sqlite3',
    'dbm', 'shelve', 'tempfile', 'gc',
})
USER_DENIED_SUBMODULES = frozenset({
    'http.client', 'http.server', 'http.cookiejar', 'urllib.request', 'urllib.robotparser',
    'asyncio.subprocess', 'concurrent.interpreters', 'os.system',
})
# Modules that may never be loaded after start-up, whoever asks (the audit hook's 'import' event).
NEVER_LOADED = frozenset({
    'js', 'pyodide_js', 'ctypes', '_ctypes', '_posixsubprocess', 'micropip', 'faulthandler',
    '_testcapi', '_testinternalcapi', '_testbuffer', '_testmultiphase', '_testsinglephase',
    '_interpreters', '_interpqueues', '_interpchannels', '_xxsubinterpreters', '_sqlite3',
})
DENIED_EVENTS = (
    'os.system', 'os.exec', 'os.posix_spawn', 'os.spawn', 'os.fork', 'os.forkpty', 'os.kill',
    'os.killpg', 'os.putenv', 'os.unsetenv', 'os.chdir', 'os.chmod', 'os.chown', 'os.chflags',
    'os.lchflags', 'os.lchmod', 'os.lchown', 'os.link', 'os.symlink', 'os.mkdir', 'os.mkfifo',
    'os.mknod', 'os.remove', 'os.rename', 'os.rmdir', 'os.truncate', 'os.utime', 'os.setxattr',
    'os.removexattr', 'os.getxattr', 'os.listxattr', 'os.startfile', 'os.add_dll_directory',
    'subprocess.', 'socket.', 'ctypes.', 'sys.settrace', 'sys.setprofile',
    'sys._settraceallthreads', 'sys._setprofileallthreads', 'sys.monitoring.', 'sys.addaudithook',
    'sys._current_frames', 'sys._current_exceptions', 'sys.remote_exec', 'code.__new__',
    'marshal.load', 'gc.get_objects', 'gc.get_referrers', 'gc.get_referents', 'shutil.',
    'tempfile.', 'pty.', 'resource.', 'signal.', 'syslog.', 'webbrowser.', 'urllib.Request',
    'http.client.', 'ftplib.', 'smtplib.', 'poplib.', 'imaplib.', 'nntplib.', 'telnetlib.',
    'fcntl.', 'mmap.', 'sqlite3.', 'cpython.', 'builtins.input', 'os.walk', 'glob.glob',
    'os.scandir', 'os.listdir', 'pathlib.Path.glob', 'pathlib.Path.rglob',
)
# The standard library lives in the virtual file system under /lib: imports read it.
STDLIB_PREFIX = '/lib/'

# os.open flags that write, create or truncate (Emscripten's values, as its os has them): with any
# of them an open of /lib would change the agent's own interpreter's standard library, even with
# O_RDONLY (O_CREAT makes a file, O_TRUNC empties one).
OPEN_WRITE_FLAGS = (_os.O_WRONLY | _os.O_RDWR | _os.O_CREAT | _os.O_TRUNC | _os.O_APPEND | _os.O_EXCL
                    | getattr(_os, 'O_TMPFILE', 0))

OPEN_REFUSED = ("file access is not available in the sandbox; use read_file(), write_file(), "
                "list_files() and delete_file() for the workspace")


def make_audit_hook(protected_modules, protected_ids):
    """The hook, with its whole world bound as defaults (see the note at the top). gc.get_referents
    passes only for functions (the self-check takes the prelude functions' references that way):
    what a function refers to, its attributes give anyway. The hook holds no flag to allow more:
    its frame, and so its locals, reach user code in the traceback of every event it refuses."""

    def audit_hook(event, args, _denied=DENIED_EVENTS, _never=NEVER_LOADED, _protected=protected_modules,
                   _prefix=STDLIB_PREFIX, _str=str, _bytes=bytes, _int=int, _type=type,
                   _startswith=str.startswith, _partition=str.partition, _decode=bytes.decode,
                   _PermissionError=PermissionError, _ImportError=ImportError,
                   _FunctionType=_types.FunctionType, _typetype=type, _getattr=getattr,
                   _isinstance=isinstance, _open_refused=OPEN_REFUSED, _sandbox=SANDBOX_MODULE,
                   _ids=protected_ids, _id=id, _all=all, _map=map, _repeat=_repeat, _is=_operator.is_,
                   _len=len, _tuple=tuple, _write_flags=OPEN_WRITE_FLAGS):
        # The most frequent event by far (every read of a function's __code__, a frame's or a
        # generator's attributes), and one the hook never refuses: answered before anything else.
        if event == 'object.__getattr__':
            return
        if _startswith(event, _denied):
            if (event == 'gc.get_referents' and _len(args) == 1 and _type(args[0]) is _tuple
                    and _all(_map(_is, _map(_type, args[0]), _repeat(_FunctionType)))):
                return
            if event == 'os.listdir' or event == 'os.scandir':
                # The import system lists the standard library's folders.
                path = args[0] if args else None
                if _type(path) is _str and _startswith(path, _prefix) and '..' not in path:
                    return
                raise _PermissionError(_open_refused)
            raise _PermissionError(f"{event} is not allowed in the sandbox")
        if event == 'open':
            path, mode = args[0], args[1]
            if _type(path) is _bytes:
                try:
                    path = _decode(path)
                except Exception:
                    raise _PermissionError(_open_refused) from None
            if _type(path) is not _str or not _startswith(path, _prefix) or '..' in path:
                raise _PermissionError(_open_refused)
            if mode is None:
                flags = args[2]
                if _type(flags) is not _int or flags & _write_flags != 0:
                    raise _PermissionError(_open_refused)
            elif _type(mode) is not _str or ('w' in mode or 'a' in mode or '+' in mode or 'x' in mode):
                raise _PermissionError(_open_refused)
        elif event == 'import':
            name = args[0]
            if _type(name) is _str and (name in _never or _partition(name, '.')[0] in _never):
                raise _ImportError(f"module '{name}' is not available in the sandbox")
        elif event == 'object.__setattr__' or event == 'object.__delattr__':
            # Python audits assignments to __code__, __defaults__, __kwdefaults__ and a type's
            # special names (deletions too, as object.__delattr__): refuse them for anything that
            # belongs to a shared module.
            target = args[0]
            if _id(target) in _ids:
                raise _PermissionError(f"changing {args[1]} of a shared object is not allowed in the sandbox")
            if _type(target) is _FunctionType or _isinstance(target, _typetype):
                module = _getattr(target, '__module__', None)
                if _type(module) is _str and (module in _protected or module == _sandbox):
                    raise _PermissionError(f"changing {args[1]} of {module} objects is not allowed in the sandbox")

    return audit_hook


# What user code's sys lacks: frames, tracing, the import machinery and the module table
# (sys.modules is a filtered copy), i.e. the direct routes into the prelude and the runtime.
SYS_HIDDEN = frozenset({
    '_getframe', '_getframemodulename', 'settrace', 'setprofile', 'gettrace', 'getprofile',
    '_settraceallthreads', '_setprofileallthreads', 'addaudithook', '_current_frames',
    '_current_exceptions', 'meta_path', 'path_hooks', 'path_importer_cache', 'monitoring',
    'remote_exec', '_clear_type_cache', '_clear_internal_caches', 'activate_stack_trampoline',
    'deactivate_stack_trampoline', 'setdlopenflags', '_enablelegacywindowsfsencoding',
    'breakpointhook', '__breakpointhook__', 'last_exc', 'last_traceback', 'last_value', 'last_type',
})


def _sys_refused(name):
    return AttributeError(f"sys.{name} is not available in the sandbox")


class SysView(_types.ModuleType):
    """The sys module as user code imports it: reads and writes go to the real one, except the
    names in SYS_HIDDEN; sys.modules is a fresh copy without the modules user code may not import."""

    def __getattr__(self, name, _sys=sys, _hidden=SYS_HIDDEN, _getattr=getattr, _refused=_sys_refused):
        if name in _hidden:
            raise _refused(name)
        return _getattr(_sys, name)

    def __setattr__(self, name, value, _sys=sys, _hidden=SYS_HIDDEN, _setattr=setattr, _refused=_sys_refused):
        if name in _hidden or name == 'modules' or name[:2] == '__':
            raise _refused(name)
        _setattr(_sys, name, value)

    def __delattr__(self, name, _refused=_sys_refused):
        raise _refused(name)

    def __dir__(self, _sys=sys, _hidden=SYS_HIDDEN):
        return sorted(n for n in dir(_sys) if n not in _hidden)

    def _modules(self, _sys=sys, _denied=USER_DENIED_MODULES, _partition=str.partition):
        return {k: v for k, v in tuple(_sys.modules.items()) if _partition(k, '.')[0] not in _denied}

    modules = property(_modules)


SYS_VIEW = SysView('sys', sys.__doc__)


def guarded_import(name, globals=None, locals=None, fromlist=(), level=0,
                   _real=_builtins_module.__import__, _denied=USER_DENIED_MODULES,
                   _denied_sub=USER_DENIED_SUBMODULES, _str=str, _type=type,
                   _partition=str.partition, _ImportError=ImportError, _sys_view=SYS_VIEW):
    if level == 0 and _type(name) is _str:
        if name == 'sys':
            return _sys_view
        if _partition(name, '.')[0] in _denied or name in _denied_sub:
            raise _ImportError(f"import of '{name}' is not allowed in the sandbox")
        if fromlist:
            for item in fromlist:
                if _type(item) is _str and f"{name}.{item}" in _denied_sub:
                    raise _ImportError(f"import of '{name}.{item}' is not allowed in the sandbox")
    return _real(name, globals, locals, fromlist, level)


def refused_open(*args, **kwargs):
    raise PermissionError(OPEN_REFUSED)


def refused_input(*args, **kwargs):
    raise EOFError("input() is not available in the sandbox: there is no console")


def refused_breakpoint(*args, **kwargs):
    raise RuntimeError("breakpoint() is not available in the sandbox")


def sandbox_exit(code=None):
    raise SystemExit(code)


PRISTINE_BUILTINS = dict(_builtins_module.__dict__)
for _name in ('help', 'copyright', 'credits', 'license'):
    PRISTINE_BUILTINS.pop(_name, None)
PRISTINE_BUILTINS.update({
    '__import__': guarded_import, 'open': refused_open, 'input': refused_input,
    'breakpoint': refused_breakpoint, 'exit': sandbox_exit, 'quit': sandbox_exit,
})
del _name


def user_builtins():
    """A fresh builtins mapping for one call: what the call changes there dies with it."""
    return dict(PRISTINE_BUILTINS)


class Output:
    """sys.stdout and sys.stderr of one call: whole lines go to the call's output."""

    encoding = 'utf-8'
    errors = 'replace'

    def __init__(self, emit):
        self._emit = emit
        self._partial = ''
        self.closed = False

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.closed:
            return len(text)
        data = self._partial + text
        lines = data.split('\n')
        self._partial = lines.pop()
        for line in lines:
            self._emit(line)
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def close_call(self):
        if self._partial and not self.closed:
            self._emit(self._partial)
        self._partial = ''
        self.closed = True

    def isatty(self):
        return False

    def writable(self):
        return True

    def readable(self):
        return False

    def fileno(self):
        raise OSError("the sandbox output has no file descriptor")
