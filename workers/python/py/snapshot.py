# What the memory snapshot's interpreter runs before its memory is taken (workers/python/snapshot.ts):
# the prelude's own imports and the preloaded modules (seconds of a cold start), after preloaded.py.
# They are imported before the prelude's code instead of after it; none of them keeps a reference
# to what the prelude then replaces (time.sleep, asyncio.run), checked by test/python/snapshot.test.ts.

import sys, builtins, types, json, math, asyncio, datetime, decimal, fractions, enum, dataclasses
import time, collections, collections.abc, ast, contextvars, traceback, inspect, re, statistics
import operator, gc, random, os, locale, importlib
for name in PRELOADED:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
del name, PRELOADED
gc.collect()
