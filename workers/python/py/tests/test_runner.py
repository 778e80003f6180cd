# runner.py: compiling a call's code and describing its errors.


def test_compile_user_keeps_the_last_expression_as_a_candidate_result():
    code = compile_user('1 + 1')
    g = {}
    exec(code, g)
    assert g[LAST_NAME] == 2


def test_compile_user_describes_a_syntax_error():
    out = compile_user('x = (1,\ny = 2')
    assert isinstance(out, str)
    envelope = _loads(out)
    assert envelope['ok'] is False and envelope['error']['type'] == 'SyntaxError'
    assert envelope['error']['traceback'].startswith('  File "<code>", line ')


def test_error_info_shows_only_user_frames():
    source = 'def f():\n    raise ValueError("bad")\nf()'
    try:
        exec(compile(source, USER_FILENAME, 'exec'), {})
    except ValueError as e:
        info = error_info(e, source.splitlines())
    assert (info['type'], info['message'], info['line']) == ('ValueError', 'bad', 2)
    assert 'raise ValueError("bad")' in info['traceback']
    assert '<sandbox>' not in info['traceback']


def test_error_info_names_memory_and_time_limits():
    assert error_info(MemoryError(), [])['type'] == 'MemoryLimitError'
    assert error_info(OverflowError('cannot allocate 3 GB'), [])['type'] == 'MemoryLimitError'
    assert error_info(KeyboardInterrupt(), [])['type'] == 'TimeoutError'


def test_asyncio_run_points_to_top_level_await():
    import asyncio

    async def main():
        return 1

    e = raises(RuntimeError, asyncio.run, main())
    assert 'top-level await' in str(e)


def test_outcomes_are_ascii_json_that_decodes_to_the_same_text():
    text = _dump({'ok': True, 'value': ['é', '中', '😀', '\ud800', 'plain']})
    assert text.isascii()
    assert _loads(text) == {'ok': True, 'value': ['é', '中', '😀', '\ud800', 'plain']}
