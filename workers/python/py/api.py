# The sandbox prelude, part 3: the sandbox API under the SPEC's names (files,
# skills, PII, tool search, sleep, fetch, tools.SERVER.TOOL) and the seed's data helpers, with the
# seed's semantics and signatures: tokenize_pii returns (text, tokens), save_skill the seed's
# confirmation string.

# ---- the sandbox API ----------------------------------------------------------------------
import re as _re_api

def list_files(subpath='.'):
    """The entries of a workspace folder."""
    return host_sync('list_files', '.' if subpath is None else subpath)


def save_skill(name, code, description='', language='python', shared=False):
    """Saves reusable code as a skill (Python unless language says otherwise); returns the seed's message.

    Python code is parsed here first, by this interpreter (0x400 is ast.PyCF_ONLY_AST: nothing
    runs): the daemon trusts that check for saves made from Python, so it needs no other
    interpreter (which a lone Python process, busy with this very call, could not lend it).
    shared=True publishes the skill to every agent (needs the skills permission "publish").
    """
    if language in (None, 'python') and isinstance(code, str):
        try:
            compile(code, f'skills/{name}/index.py', 'exec', 0x400, True)
        except SyntaxError as e:
            raise SyntaxError(f"Skill {name!r} was not saved: {e.msg} (line {e.lineno}). Fix the code and save again.") from None
    host_sync('save_skill', name, code, description or '', language, {'shared': bool(shared)})
    return f"Skill '{name}' saved successfully"


_PII_TOKEN = _re_api.compile(r'\[(?:EMAIL|PHONE|SSN|CREDIT_CARD|IP_ADDRESS|IBAN|API_KEY)_[0-9a-f]{8}\]')


def tokenize_pii(text):
    """(sanitized_text, tokens), as in the seed: tokens maps each new token to the value it hides."""
    sanitized = host_sync('tokenize_pii', text)
    before = set(_PII_TOKEN.findall(text)) if isinstance(text, str) else set()
    new = [t for t in dict.fromkeys(_PII_TOKEN.findall(sanitized)) if t not in before]
    if not new:
        return sanitized, {}
    # One host call for all of them: detected values never hold a NUL.
    values = host_sync('detokenize_pii', '\x00'.join(new)).split('\x00')
    return sanitized, dict(zip(new, values)) if len(values) == len(new) else {t: host_sync('detokenize_pii', t) for t in new}


def detokenize_pii(text, tokens=None):
    """The text with tokens restored: from the tokens dict given, else from this session's vault."""
    if tokens is None:
        return host_sync('detokenize_pii', text)
    for token, original in dict(tokens).items():
        text = text.replace(token, original)
    return text


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
        # A tool this agent cannot call still reaches the host, which says why (not permitted,
        # server not configured or failed, no such tool) and how to fix it, as in JavaScript.
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
        return found if found is not None else ToolServer(server, ())

    def __dir__(self):
        return sorted(self._servers)

    def __repr__(self):
        return f"<tools: {', '.join(sorted(self._servers)) or 'none'}>"


class SkillModule(_types.ModuleType):
    """What import_skill returns: a module of the skill's functions, also awaitable (as in JS)."""

    def __await__(self):
        return self
        yield


# ---- the plain host calls, made from the API table --------------------------------------------
# The table (workers/kit/api-contract.ts) is the one list of the sandbox API. Its 'host-sync'
# rows whose Python function only forwards its arguments to the row's host method (read_file,
# write_file, delete_file, load_skill, list_skills) are not written here: workers/python/prelude.ts
# makes them from the table (def SIGNATURE: return host_sync(HOST_METHOD, ARGS...)) and adds them to
# the prelude after this file, with these docstrings. The functions above have behaviour of their own.
FORWARDER_DOCS = {
    'read_file': 'The text of a workspace file.',
    'write_file': 'Writes text to a workspace file (folders are created).',
    'delete_file': 'Deletes a workspace file.',
    'load_skill': 'The code of a skill, so exec(load_skill(name)) defines its functions here.',
}
