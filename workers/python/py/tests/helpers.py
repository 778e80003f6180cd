# Shared by the prelude's Python tests (run in the prelude's namespace, before each test file).

class FakeHost:
    """Stands in for the JavaScript side of host calls: records each call, answers from replies."""

    def __init__(self, replies=None):
        self.calls = []
        self.replies = dict(replies or {})

    def sync(self, method, args_json):
        args = _loads(args_json)
        self.calls.append((method, args))
        reply = self.replies.get(method, '')
        if callable(reply):
            reply = reply(*args)
        if isinstance(reply, BaseException):
            return 'e' + _dumps({'name': type(reply).__name__, 'message': str(reply)})
        return 's' + reply if isinstance(reply, str) else 'j' + _dumps(reply)


class fake_host:
    """with fake_host({'read_file': 'text'}) as host: ... (Bridge.sync is put back after)."""

    def __init__(self, replies=None):
        self.host = FakeHost(replies)

    def __enter__(self):
        self.saved = Bridge.sync
        Bridge.sync = self.host.sync
        return self.host

    def __exit__(self, *exc):
        Bridge.sync = self.saved
        return False


def raises(kind, fn, *args, **kwargs):
    """The exception fn raised, which must be a kind."""
    try:
        fn(*args, **kwargs)
    except kind as e:
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)} did not raise {kind.__name__}")
