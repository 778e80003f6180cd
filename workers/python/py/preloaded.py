# The modules agents use most, loaded once per interpreter: by the memory snapshot (snapshot.py,
# so they are part of it) and again by boot() in the prelude (boot.py), which finds them loaded.
# Part of both the snapshot code and the sandbox prelude (workers/python/prelude.ts).

PRELOADED = (
    'itertools', 'functools', 'operator', 'random', 'string', 'textwrap', 'typing', 'copy', 'heapq',
    'bisect', 'uuid', 'hashlib', 'base64', 'time', 'calendar', 'csv', 'io', 'difflib', 'html',
    'html.parser', 'unicodedata', 'pprint', 'numbers', 'struct', 'binascii', 'zlib', 'hmac',
    'secrets', 'abc', 'contextlib', 'array', 'graphlib', 'shlex', 'fnmatch', 'ipaddress',
    'urllib.parse', 'xml.etree.ElementTree', 'keyword', 'weakref', 'codecs', 'zoneinfo',
    'dataclasses', 'enum', 'fractions', 'decimal', 'statistics', 'collections.abc',
)
