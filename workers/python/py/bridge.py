# The sandbox prelude, part 2: the crossing to the host and back. Host calls go
# to JavaScript as JSON text through two bridge functions and come back as text (or UTF-8 bytes
# of a long text), so no JavaScript object is ever handed to user code. Any Python value becomes
# JSON data here, whatever it is (cycles, NaN, big ints, dates, bytes, objects), without raising.
#
# Host calls that return at once (files, skills, PII, search) block until the coordinator
# answers. Upstream tools, fetch and sleep follow the caller: inside async code (code that uses
# top-level await, so a task is running) they return awaitables; elsewhere they block and
# return the value.

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
    # ASCII only, as the runner's outcome (runner.py _dump): it crosses to JavaScript as a block.
    return _dumps([to_json_data(a, [1 << 28]) for a in args], ensure_ascii=True)


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
    # Exact str, int, float, dict and list first (what results are mostly made of): the same
    # outcome as the general checks below, without a dozen isinstance checks per value.
    if t is str:
        budget[0] -= len(value) + 2
        if budget[0] < 0:
            keep = max(0, len(value) + budget[0])
            return value[:keep] + f"...[truncated {len(value) - keep} chars]"
        return value
    if t is int:
        budget[0] -= 8
        return value if -9007199254740992 <= value <= 9007199254740992 else str(value)
    if t is float:
        budget[0] -= 8
        return value if _isfinite(value) else None
    if t is not dict and t is not list:
        if value is None or t is bool:
            budget[0] -= 5
            return value
        if isinstance(value, int) and not isinstance(value, bool) and not isinstance(value, _enum.Enum):
            budget[0] -= 8
            v = int(value)
            return v if -9007199254740992 <= v <= 9007199254740992 else str(v)
        if isinstance(value, float):
            budget[0] -= 8
            v = float(value)
            return v if _isfinite(v) else None
        if isinstance(value, str):
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
    # The containers being converted, outermost first, compared by identity. Not a set of id()s:
    # each id() is an audit event, and the sandbox's audit hook (guard.py) runs on every one.
    if ancestors is None:
        ancestors = []
    for outer in ancestors:
        if outer is value:
            budget[0] -= 10
            return '[Circular]'
    if depth >= MAX_DEPTH:
        return '[too deep]'
    ancestors.append(value)
    try:
        if t is not dict and t is not list and _is_dataclass(value) and not isinstance(value, type):
            value = {f.name: getattr(value, f.name, None) for f in _fields(value)}
        if t is dict or (t is not list and isinstance(value, (dict, _Mapping))):
            out = {}
            for k, v in value.items():
                if budget[0] <= 0:
                    break
                key = k if type(k) is str else _key(k)
                budget[0] -= len(key) + 4
                # A short exact str or a safe exact int, as to_json_data would give it, without the call.
                tv = type(v)
                if tv is str and budget[0] >= len(v) + 2:
                    budget[0] -= len(v) + 2
                    out[key] = v
                elif tv is int and budget[0] > 0 and -9007199254740992 <= v <= 9007199254740992:
                    budget[0] -= 8
                    out[key] = v
                else:
                    out[key] = to_json_data(v, budget, depth + 1, ancestors)
            return out
        if t is list or isinstance(value, (list, tuple, set, frozenset, _deque, range)):
            out = []
            n = len(value)
            for i, item in enumerate(value):
                if budget[0] <= 0:
                    out.append(f"[... {n - i} more items]")
                    break
                budget[0] -= 1
                ti = type(item)
                if ti is str and budget[0] >= len(item) + 2:
                    budget[0] -= len(item) + 2
                    out.append(item)
                elif ti is int and budget[0] > 0 and -9007199254740992 <= item <= 9007199254740992:
                    budget[0] -= 8
                    out.append(item)
                else:
                    out.append(to_json_data(item, budget, depth + 1, ancestors))
            return out
        return to_json_data(_describe(value), budget, depth, None)
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception as err:
        return f"[unserializable: {type(err).__name__}: {_safe_str(err)}]"
    finally:
        ancestors.pop()


def _safe_str(value):
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"
