# The sandbox prelude, part 7: start-up. Preloads the modules agents use most (PRELOADED, preloaded.py)
# (so their imports cost nothing per call and they are part of the recorded state), removes the
# JavaScript bridge modules and host-flavoured leftovers, records the shared state, installs the
# audit hook, and freezes the start-up objects out of the garbage collector's way.

def install(sync, async_, emit, done):
    Bridge.sync, Bridge.async_, Bridge.emit, Bridge.done = sync, async_, emit, done


def boot():
    """Seals the interpreter; returns what JavaScript keeps: the quick sweep, reset, collect,
    freeze and the self-check."""
    import importlib, os, posix
    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    for name in ('js', 'pyodide_js', 'pyodide_js._api'):
        sys.modules.pop(name, None)
    # No current-directory imports, no host path in the environment, no way to end the process.
    sys.path[:] = [p for p in sys.path if p.startswith(STDLIB_PREFIX)]
    os.environ.pop('_', None)
    for module in (os, posix):
        for name in ('_exit', 'abort'):
            if hasattr(module, name):
                delattr(module, name)
    _gc.collect()
    protected_modules = frozenset(name for name in sys.modules if name != '__main__')
    quick, protected_ids = take_snapshot((globals(),))
    reset = make_reset()
    hook = make_audit_hook(protected_modules, protected_ids | {id(SYS_VIEW)})
    intact = make_integrity_check(globals(), (hook, quick, reset), (SYS_VIEW,))
    sys.addaudithook(hook)
    _gc.collect()
    _gc.freeze()
    return quick, reset, _gc.collect, _gc.freeze, intact
