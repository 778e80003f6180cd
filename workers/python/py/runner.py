# The sandbox prelude, part 5: running one call. The code is compiled with
# top-level await allowed; a final expression is kept as a candidate result, and a top-level
# `return X` (the code is a function body, as in JavaScript) ends the call with X. Each call gets a
# fresh globals dict (its own builtins, the preloaded modules, the sandbox API, context_vars) and
# a fresh contextvars.Context (so decimal contexts and the like die with it). Code without await
# runs synchronously; code with await runs as a task on a loop of its own, closed at the end.
# Whatever happens, the outcome is JSON text: {"ok": true, "value": ...} or
# {"ok": false, "error": {"type", "message", "traceback", "line"}}.

import ast as _ast, contextvars as _contextvars, traceback as _traceback, inspect as _inspect
import json, re, math, statistics, collections, datetime
from pyodide.webloop import WebLoop as _WebLoop

_walk_tb, _parse, _Context = _traceback.walk_tb, _ast.parse, _contextvars.Context
_set_running_loop, _all_tasks, _CO_COROUTINE = _asyncio.events._set_running_loop, _asyncio.all_tasks, _inspect.CO_COROUTINE
_PyCF_ALLOW_TOP_LEVEL_AWAIT, _Assign, _Name, _Store, _Expr = _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, _ast.Assign, _ast.Name, _ast.Store, _ast.Expr
_fix_missing_locations, _copy_location = _ast.fix_missing_locations, _ast.copy_location
_Handle, _CancelledError = _asyncio.Handle, _asyncio.CancelledError
_module_setattr = _types.ModuleType.__setattr__
LAST_NAME = '__last_expression__'
SIZE_OVERFLOWS = ('too long', 'too many', 'index-sized', 'cannot allocate')
USER_FILES = frozenset({USER_FILENAME, '<string>'})
MAX_RESULT_CHARS = 16 * 1024 * 1024
BOOT_LOOP = _asyncio.get_event_loop()
PRISTINE_STDOUT, PRISTINE_STDERR = sys.stdout, sys.stderr


def asyncio_run(main, **kwargs):
    if _inspect.iscoroutine(main):
        main.close()
    raise RuntimeError("asyncio.run() is not available in the sandbox: use top-level await instead, e.g. result = await main()")


asyncio_run.__module__ = 'asyncio'
_asyncio.run = asyncio_run


class CallLoop(_WebLoop):
    """The event loop of one call; once the call is over it schedules nothing."""

    dead = False

    def call_later(self, delay, callback, *args, context=None):
        if self.dead:
            handle = _Handle(callback, args, self, context=context)
            handle.cancel()
            return handle
        return super().call_later(delay, callback, *args, context=context)

    def call_exception_handler(self, context):
        if self.dead:
            return
        exc = context.get('exception')
        message = context.get('message') or 'unhandled error in a task'
        sys.stderr.write(f"{message}: {type(exc).__name__}: {exc}\n" if exc is not None else f"{message}\n")


class CallState:
    def __init__(self, source):
        self.source_lines = source.splitlines()
        self.output = None
        self.globals = None
        self.loop = None
        self.task = None
        self.workspace = None
        self.tool_names = ()
        self.fetch_allowed = False


class Current:
    call = None


def _user_frames(tb):
    for frame, lineno in _walk_tb(tb):
        filename = frame.f_code.co_filename
        if filename in USER_FILES or filename.startswith('<skill:'):
            yield filename, lineno, frame.f_code.co_name


def error_info(e, source_lines):
    kind = type(e).__name__
    if isinstance(e, MemoryError):
        return {'type': 'MemoryLimitError', 'message': 'the call ran out of memory (a Python allocation failed: the call is over its memory_mb limit)'}
    if isinstance(e, OverflowError) and any(s in _safe_str(e) for s in SIZE_OVERFLOWS):
        # WebAssembly is 32-bit: an object past 2 GiB is refused before it is allocated.
        return {'type': 'MemoryLimitError', 'message': f'the call asked for more memory than the sandbox can have ({_safe_str(e)})'}
    if isinstance(e, (KeyboardInterrupt, _CancelledError)):
        return {'type': 'TimeoutError', 'message': 'execution was stopped: the time limit was reached or the call was cancelled'}
    message = _safe_str(e)
    line = None
    parts = []
    for filename, lineno, name in _user_frames(e.__traceback__):
        parts.append(f'  File "{filename}", line {lineno}, in {name}')
        if filename == USER_FILENAME and 0 < lineno <= len(source_lines):
            parts.append('    ' + source_lines[lineno - 1].strip())
        if filename == USER_FILENAME:
            line = lineno
    if isinstance(e, SyntaxError) and e.filename == USER_FILENAME:
        message = e.msg or message
        line = e.lineno
        parts = [f'  File "{USER_FILENAME}", line {e.lineno}']
        if e.lineno and 0 < e.lineno <= len(source_lines):
            text = source_lines[e.lineno - 1]
            stripped = text.lstrip()
            parts.append('    ' + stripped.rstrip())
            if e.offset:
                parts.append('    ' + ' ' * max(0, e.offset - 1 - (len(text) - len(stripped))) + '^')
        tb = '\n'.join(parts) + f'\n{kind}: {message}'
    else:
        tb = 'Traceback (most recent call last):\n' + '\n'.join(parts) + ('\n' if parts else '') + (f'{kind}: {message}' if message else kind)
    info = {'type': kind, 'message': message or kind, 'traceback': tb}
    if line is not None:
        info['line'] = line
    return info


def _dump(envelope):
    # ASCII only (other characters as \u escapes): Pyodide hands an ASCII str to JavaScript as a
    # block, but any other str character by character (about 75 ns each: 130 ms for 1.7 MB).
    return _dumps(envelope, ensure_ascii=True, allow_nan=False, separators=(',', ':'))


def failure(e, source_lines):
    try:
        return _dump({'ok': False, 'error': error_info(e, source_lines)})
    except BaseException as inner:
        return _dump({'ok': False, 'error': {'type': type(e).__name__, 'message': f'(the error could not be described: {type(inner).__name__})'}})


class TopLevelReturn(BaseException):
    """What a top-level return raises: it unwinds the code (finally blocks run) to the runner."""

    def __init__(self, value=None):
        self.value = value


class _ReturnRewriter(_ast.NodeTransformer):
    """return X outside any function -> raise __code_return__(X); function bodies are left alone."""

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Return(self, node):
        value = node.value if node.value is not None else _ast.Constant(None)
        call = _ast.Call(func=_Name('__code_return__', _ast.Load()), args=[value], keywords=[])
        return _copy_location(_ast.Raise(exc=call, cause=None), node)


NOT_RETURNED = object()


def success(call, returned=NOT_RETURNED):
    g = call.globals
    if returned is not NOT_RETURNED:
        value = returned
    else:
        value = g.get('result')
        if value is None:
            value = g.get(LAST_NAME)
    try:
        return _dump({'ok': True, 'value': to_json_data(value, [MAX_RESULT_CHARS])})
    except BaseException as e:
        return failure(e, call.source_lines)


def compile_user(source):
    """The code object for source, or a failure envelope (text) for a syntax error."""
    try:
        tree = _parse(source, USER_FILENAME, 'exec')
        tree = _fix_missing_locations(_ReturnRewriter().visit(tree))
        if tree.body and isinstance(tree.body[-1], _Expr):
            last = tree.body[-1]
            assign = _Assign(targets=[_Name(LAST_NAME, _Store())], value=last.value)
            tree.body[-1] = _fix_missing_locations(_copy_location(assign, last))
        return compile(tree, USER_FILENAME, 'exec', flags=_PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except BaseException as e:
        return failure(e, source.splitlines())


def api_globals(call, workspace, tool_names, fetch_allowed):
    g = {
        '__builtins__': user_builtins(), '__doc__': None,
        'json': json, 're': re, 'math': math, 'statistics': statistics, 'collections': collections,
        'datetime': datetime.datetime, 'date': datetime.date, 'timedelta': datetime.timedelta,
        'read_file': read_file, 'write_file': write_file, 'list_files': list_files,
        'delete_file': delete_file, 'workspace': workspace, 'save_skill': save_skill,
        'load_skill': load_skill, 'list_skills': list_skills, 'import_skill': make_import_skill(call),
        'tokenize_pii': tokenize_pii, 'detokenize_pii': detokenize_pii,
        'filter_by_field': filter_by_field, 'summarize_list': summarize_list,
        'aggregate_stats': aggregate_stats, 'format_output': format_output,
        'search_tools': search_tools, 'sleep': sleep, 'tools': Tools(tool_names),
        # Always there, as in JavaScript: without a net permission it raises PermissionError naming it.
        'fetch': fetch,
    }
    return g


def make_import_skill(call):
    modules, loading = {}, []

    def import_skill(name):
        """A Python skill's functions as a module: m = import_skill('name'); m.fn(...)."""
        if not isinstance(name, str):
            raise TypeError('import_skill(name): name must be a string')
        if name in loading:
            raise ImportError('import cycle between skills: ' + ' -> '.join(loading[loading.index(name):] + [name]))
        if name in modules:
            return modules[name]
        found = host_sync('skill_module', name)
        if found.get('language') != 'python':
            raise ImportError(f"skill {name} is {found.get('language')}; import it from JavaScript, or read it with load_skill()")
        module = SkillModule(f'skill_{name}')
        module.__dict__.update(api_globals(call, call.workspace, call.tool_names, call.fetch_allowed))
        module.__dict__['import_skill'] = import_skill
        loading.append(name)
        try:
            exec(compile(found.get('source', ''), f'<skill:{name}>', 'exec', dont_inherit=True), module.__dict__)
        finally:
            loading.remove(name)
        modules[name] = module
        return module

    return import_skill


async def _drive(call, coro):
    try:
        await coro
    except TopLevelReturn as r:
        Bridge.done(success(call, r.value))
        return
    except BaseException as e:
        Bridge.done(failure(e, call.source_lines))
        return
    Bridge.done(success(call))


def _run_sync(call, code):
    try:
        exec(code, call.globals)
    except TopLevelReturn as r:
        return success(call, r.value)
    except BaseException as e:
        return failure(e, call.source_lines)
    return success(call)


def begin(code, source, context_json, workspace, tool_names_json, fetch_allowed, long_names_json='', *long_values, _zip=zip, _str=str, _type=type):
    """Starts a call: returns its outcome (JSON text), or None when it runs as a task (async code)
    whose outcome comes through Bridge.done. context_json: the context_vars as JSON text (UTF-8
    bytes, a Uint8Array, when long: no string conversion per character), but for the long string
    values named in long_names_json, which come as their UTF-8 bytes in long_values."""
    call = CallState(source)
    Current.call = call
    call.output = Output(Bridge.emit)
    # Not through TrackedModule: swapping the streams is not a change the sweep needs to see.
    _module_setattr(sys, 'stdout', call.output)
    _module_setattr(sys, 'stderr', call.output)
    try:
        call.workspace, call.tool_names, call.fetch_allowed = workspace, tuple(_loads(tool_names_json)), bool(fetch_allowed)
        g = api_globals(call, workspace, call.tool_names, call.fetch_allowed)
        g['__name__'] = '__main__'
        g['__code_return__'] = TopLevelReturn
        g['result'] = None
        if context_json:
            g.update(_loads(context_json if _type(context_json) is _str else context_json.to_bytes()))
        if long_names_json:
            for name, value in _zip(_loads(long_names_json), long_values):
                g[name] = value.to_bytes().decode('utf-8')
        call.globals = g
        context = _Context()
        if code.co_flags & _CO_COROUTINE:
            loop = call.loop = CallLoop()
            coro = eval(code, g)
            call.task = loop.create_task(_drive(call, coro), context=context)
            return None
        _set_running_loop(BOOT_LOOP)
        return context.run(_run_sync, call, code)
    except BaseException as e:
        return failure(e, call.source_lines)


def cancel():
    """Stops the running task of an async call (the time limit passed or the call was cancelled)."""
    call = Current.call
    if call is not None and call.task is not None and not call.task.done():
        call.task.cancel()


def end_call():
    """Closes what the call left: its partial output line, its tasks, its globals."""
    call = Current.call
    Current.call = None
    if call is None:
        return
    try:
        call.output.close_call()
    except BaseException:
        pass
    loop = call.loop
    if loop is not None:
        loop.dead = True
        try:
            tasks = list(_all_tasks(loop))
        except BaseException:
            tasks = []
        for task in tasks:
            try:
                task.get_coro().close()
            except BaseException:
                pass
    if call.globals is not None:
        try:
            call.globals.clear()
        except BaseException:
            pass
    try:
        _set_running_loop(BOOT_LOOP)
    except BaseException:
        pass
    _module_setattr(sys, 'stdout', PRISTINE_STDOUT)
    _module_setattr(sys, 'stderr', PRISTINE_STDERR)
