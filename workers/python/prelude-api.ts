// Python source, part 2 of the sandbox prelude: the sandbox API under the SPEC's names, the
// seed's data helpers, and the conversion of any Python value to JSON data. Host calls cross to
// JavaScript as JSON text through two bridge functions and come back as JSON text, so no
// JavaScript object is ever handed to user code.
//
// Host calls that return at once (files, skills, PII, search) block until the coordinator
// answers. Upstream tools, fetch and sleep follow the caller: inside async code (code that uses
// top-level await, so a task is running) they return awaitables; elsewhere they block and
// return the value.

export const API_PY = String.raw`
import json as _json, math as _math, asyncio as _asyncio, datetime as _dt, decimal as _decimal
import fractions as _fractions, enum as _enum, dataclasses as _dataclasses, time as _time
from collections import deque as _deque
from collections.abc import Mapping as _Mapping

# Bound once: a call may replace json.dumps or math.isfinite for itself without breaking how its
# outcome is reported.
_dumps, _loads, _isfinite = _json.dumps, _json.loads, _math.isfinite
_current_task, _asyncio_sleep = _asyncio.current_task, _asyncio.sleep


def interruptible_sleep(seconds, _sleep=_time.sleep, _monotonic=_time.monotonic, _min=min):
    """time.sleep in short steps: in a worker thread one long sleep cannot be interrupted."""
    if seconds < 0:
        raise ValueError('sleep length must be non-negative')
    end = _monotonic() + seconds
    while True:
        left = end - _monotonic()
        if left <= 0:
            return
        _sleep(_min(left, 0.05))


interruptible_sleep.__name__ = interruptible_sleep.__qualname__ = 'sleep'
interruptible_sleep.__module__ = 'time'
_time.sleep = _time_sleep = interruptible_sleep
_is_dataclass, _fields = _dataclasses.is_dataclass, _dataclasses.fields

HOST_ERRORS = {
    'FileNotFoundError': FileNotFoundError, 'PermissionError': PermissionError,
    'ValueError': ValueError, 'TypeError': TypeError, 'TimeoutError': TimeoutError,
    'ImportError': ImportError, 'KeyError': KeyError, 'FileExistsError': FileExistsError,
    'IsADirectoryError': IsADirectoryError, 'NotADirectoryError': NotADirectoryError,
}
MAX_DEPTH = 64


class Bridge:
    """The JavaScript side of host calls; set once at start-up."""
    sync = None
    async_ = None
    emit = None
    done = None


def _reply_value(reply, _str=str, _type=type):
    """A host reply: 's' + text (a string value, no JSON to decode), UTF-8 bytes of a long text
    (a Uint8Array), 'j' + JSON, or 'e' + error JSON."""
    if _type(reply) is not _str:
        return reply.to_bytes().decode('utf-8')
    kind, body = reply[:1], reply[1:]
    if kind == 's':
        return body
    if kind == 'j':
        return _loads(body)
    error = _loads(body) if kind == 'e' else {}
    error_type = HOST_ERRORS.get(error.get('name'), RuntimeError)
    raise error_type(error.get('message') or 'host call failed')


def _encode_args(args):
    return _dumps([to_json_data(a, [1 << 28]) for a in args], ensure_ascii=False)


def host_sync(method, *args):
    return _reply_value(Bridge.sync(method, _encode_args(args)))


async def _host_async(method, encoded):
    return _reply_value(await Bridge.async_(method, encoded))


def in_async_code():
    try:
        return _current_task() is not None
    except RuntimeError:
        return False


def host_call_follow(method, *args):
    """A host call that is awaitable inside async code and blocking elsewhere."""
    encoded = _encode_args(args)
    if in_async_code():
        return _host_async(method, encoded)
    return _reply_value(Bridge.sync(method, encoded))


# ---- JSON data ----------------------------------------------------------------------------

def _describe(value):
    try:
        text = repr(value)
        return text if isinstance(text, str) else f"<{type(value).__name__}>"
    except Exception:
        return f"<{type(value).__name__}>"


def _key(k):
    if isinstance(k, str):
        return str(k)
    if k is None or isinstance(k, bool):
        return 'null' if k is None else ('true' if k else 'false')
    if isinstance(k, (int, float)):
        return repr(k)
    return _describe(k)


def to_json_data(value, budget, depth=0, ancestors=None):
    """Plain JSON data for any Python value; never raises for what the value is."""
    if budget[0] <= 0:
        return '[truncated]'
    t = type(value)
    if value is None or t is bool:
        budget[0] -= 5
        return value
    if t is int or (isinstance(value, int) and not isinstance(value, bool) and not isinstance(value, _enum.Enum)):
        budget[0] -= 8
        v = int(value)
        return v if -9007199254740992 <= v <= 9007199254740992 else str(v)
    if t is float or isinstance(value, float):
        budget[0] -= 8
        v = float(value)
        return v if _isfinite(v) else None
    if t is str or isinstance(value, str):
        v = str(value)
        budget[0] -= len(v) + 2
        if budget[0] < 0:
            keep = max(0, len(v) + budget[0])
            return v[:keep] + f"...[truncated {len(v) - keep} chars]"
        return v
    if isinstance(value, _enum.Enum):
        return to_json_data(value.value, budget, depth, ancestors)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return to_json_data(value.isoformat(), budget, depth, ancestors)
    if isinstance(value, _dt.timedelta):
        return to_json_data(value.total_seconds(), budget, depth, ancestors)
    if isinstance(value, _decimal.Decimal):
        return to_json_data(float(value) if value.is_finite() else str(value), budget, depth, ancestors)
    if isinstance(value, _fractions.Fraction):
        return to_json_data(float(value), budget, depth, ancestors)
    if isinstance(value, complex):
        return to_json_data(str(value), budget, depth, ancestors)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return to_json_data(f"<{len(value)} bytes>", budget, depth, ancestors)
    if isinstance(value, BaseException):
        return {'name': type(value).__name__, 'message': to_json_data(_safe_str(value), budget, depth + 1, ancestors)}
    if ancestors is None:
        ancestors = set()
    if id(value) in ancestors:
        budget[0] -= 10
        return '[Circular]'
    if depth >= MAX_DEPTH:
        return '[too deep]'
    ancestors.add(id(value))
    try:
        if _is_dataclass(value) and not isinstance(value, type):
            value = {f.name: getattr(value, f.name, None) for f in _fields(value)}
        if isinstance(value, (dict, _Mapping)):
            out = {}
            for k, v in value.items():
                if budget[0] <= 0:
                    break
                key = _key(k)
                budget[0] -= len(key) + 4
                out[key] = to_json_data(v, budget, depth + 1, ancestors)
            return out
        if isinstance(value, (list, tuple, set, frozenset, _deque, range)):
            out = []
            n = len(value)
            for i, item in enumerate(value):
                if budget[0] <= 0:
                    out.append(f"[... {n - i} more items]")
                    break
                budget[0] -= 1
                out.append(to_json_data(item, budget, depth + 1, ancestors))
            return out
        return to_json_data(_describe(value), budget, depth, None)
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception as err:
        return f"[unserializable: {type(err).__name__}: {_safe_str(err)}]"
    finally:
        ancestors.discard(id(value))


def _safe_str(value):
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"


# ---- the sandbox API ----------------------------------------------------------------------

def read_file(path):
    """The text of a workspace file."""
    return host_sync('read_file', path)


def write_file(path, content):
    """Writes text to a workspace file (folders are created)."""
    return host_sync('write_file', path, content)


def list_files(subpath='.'):
    """The entries of a workspace folder."""
    return host_sync('list_files', '.' if subpath is None else subpath)


def delete_file(path):
    """Deletes a workspace file."""
    return host_sync('delete_file', path)


def save_skill(name, code, description='', language='python'):
    """Saves reusable code as a skill (Python unless language says otherwise)."""
    return host_sync('save_skill', name, code, description or '', language)


def load_skill(name):
    """The code of a skill, so exec(load_skill(name)) defines its functions here."""
    return host_sync('load_skill', name)


def list_skills():
    return host_sync('list_skills')


def tokenize_pii(text):
    """The text with PII replaced by tokens. (The seed returned a tuple; this returns the text.)"""
    return host_sync('tokenize_pii', text)


def detokenize_pii(text):
    return host_sync('detokenize_pii', text)


def search_tools(query='', options=None, **kwargs):
    """Ranked upstream tools: search_tools('github issues', limit=5, detail_level='full')."""
    opts = dict(options or {})
    opts.update(kwargs)
    return host_sync('search_tools', query if query is not None else '', opts)


def sleep(ms):
    """Waits ms milliseconds: awaitable in async code, blocking elsewhere."""
    seconds = max(0.0, float(ms) / 1000.0)
    if in_async_code():
        return _asyncio_sleep(seconds)
    _time_sleep(seconds)


def filter_by_field(data, field, value):
    """Items of data whose field equals value."""
    return [d for d in data if isinstance(d, dict) and d.get(field) == value]


def summarize_list(data, limit=10):
    """{'count', 'sample'}: how many items, and the first limit of them."""
    data = list(data)
    return {'count': len(data), 'sample': data[:limit]}


def aggregate_stats(data, numeric_fields=None):
    """count, and FIELD_sum/_avg/_min/_max of each numeric field (missing values count as 0)."""
    data = list(data)
    if not data:
        return {'count': 0}
    if numeric_fields is None:
        first = data[0] if isinstance(data[0], dict) else {}
        numeric_fields = [k for k, v in first.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    stats = {'count': len(data)}
    for field in numeric_fields:
        values = [d.get(field, 0) if isinstance(d, dict) else 0 for d in data]
        values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if values:
            stats[f"{field}_sum"] = sum(values)
            stats[f"{field}_avg"] = sum(values) / len(values)
            stats[f"{field}_min"] = min(values)
            stats[f"{field}_max"] = max(values)
    return stats


def format_output(data, max_chars=5000):
    """Pretty JSON of data, cut to max_chars."""
    return _dumps(to_json_data(data, [max(max_chars * 2, 1024)]), indent=2, ensure_ascii=False)[:max_chars]


class Response:
    """What fetch() returns: the body is already read."""

    def __init__(self, reply):
        self.status = reply.get('status', 0)
        self.status_text = reply.get('statusText', '')
        self.url = reply.get('url', '')
        self.headers = {str(k).lower(): v for k, v in reply.get('headers', [])}
        self.ok = 200 <= self.status < 300
        self._body = reply.get('body', '')

    def text(self):
        return self._body

    def json(self):
        return _loads(self._body)

    def __repr__(self):
        return f"<Response {self.status} {self.url}>"


async def _fetch_async(encoded):
    return Response(await _host_async('fetch', encoded))


def fetch(url, method='GET', headers=None, body=None, **init):
    """HTTP for the hosts this agent may reach: awaitable in async code, blocking elsewhere."""
    options = dict(init)
    options.update({'method': method, 'headers': dict(headers or {})})
    if body is not None:
        options['body'] = body if isinstance(body, str) else _dumps(body)
    encoded = _encode_args([str(url), options])
    if in_async_code():
        return _fetch_async(encoded)
    return Response(_reply_value(Bridge.sync('fetch', encoded)))


class ToolServer:
    """tools.SERVER: one attribute per upstream tool of that server."""

    def __init__(self, server, names):
        self._server = server
        self._names = frozenset(names)

    def __getattr__(self, tool):
        if tool.startswith('__'):
            raise AttributeError(tool)
        return self[tool]

    def __getitem__(self, tool):
        if tool not in self._names:
            raise AttributeError(f"server '{self._server}' has no tool '{tool}'; it has: {', '.join(sorted(self._names)) or 'none'}")
        server = self._server

        def call(args=None, **kwargs):
            payload = dict(args or {})
            payload.update(kwargs)
            return host_call_follow('call_tool', server, tool, payload)

        call.__name__ = tool
        call.__qualname__ = f"tools.{server}.{tool}"
        return call

    def __dir__(self):
        return sorted(self._names)

    def __repr__(self):
        return f"<tools.{self._server}: {', '.join(sorted(self._names))}>"


class Tools:
    """tools.SERVER.TOOL(**arguments), or tools['server-name']['tool'](arguments)."""

    def __init__(self, qualified_names):
        by_server = {}
        for q in qualified_names:
            server, _, tool = q.partition('.')
            by_server.setdefault(server, []).append(tool)
        self._servers = {s: ToolServer(s, names) for s, names in by_server.items()}

    def __getattr__(self, server):
        if server.startswith('__'):
            raise AttributeError(server)
        return self[server]

    def __getitem__(self, server):
        found = self._servers.get(server)
        if found is None:
            raise AttributeError(f"no upstream server '{server}'; available: {', '.join(sorted(self._servers)) or 'none'}")
        return found

    def __dir__(self):
        return sorted(self._servers)

    def __repr__(self):
        return f"<tools: {', '.join(sorted(self._servers)) or 'none'}>"


class SkillModule(_types.ModuleType):
    """What import_skill returns: a module of the skill's functions, also awaitable (as in JS)."""

    def __await__(self):
        return self
        yield
`;
