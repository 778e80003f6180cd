# api.py: the sandbox API as Python code sees it, with the host faked.
import inspect


def test_plain_host_calls_are_made_from_the_table():
    for name in ('read_file', 'write_file', 'delete_file', 'load_skill', 'list_skills'):
        f = globals()[name]
        assert f.__code__.co_filename == '<sandbox>', name
        assert f.__module__ == '_sandbox', name
        assert f.__doc__ == FORWARDER_DOCS.get(name), name


def test_made_functions_keep_their_signatures_and_docstrings():
    assert str(inspect.signature(read_file)) == '(path)'
    assert str(inspect.signature(write_file)) == '(path, content)'
    assert str(inspect.signature(list_skills)) == '()'
    assert read_file.__doc__ == 'The text of a workspace file.'
    assert list_skills.__doc__ is None


def test_made_functions_take_keyword_arguments():
    with fake_host({'write_file': 'ok'}) as host:
        assert write_file(content='hi', path='a.txt') == 'ok'
    assert host.calls == [('write_file', ['a.txt', 'hi'])]


def test_made_functions_raise_pythons_own_argument_errors():
    e = raises(TypeError, read_file)
    assert str(e) == "read_file() missing 1 required positional argument: 'path'"
    e = raises(TypeError, read_file, 'a', 'b')
    assert 'takes 1 positional argument but 2 were given' in str(e)


def test_host_errors_reach_the_caller_as_their_python_class():
    with fake_host({'read_file': FileNotFoundError('a.txt not found')}):
        assert str(raises(FileNotFoundError, read_file, 'a.txt')) == 'a.txt not found'


def test_list_files_reads_the_root_for_none():
    with fake_host({'list_files': []}) as host:
        list_files()
        list_files(None)
        list_files('sub')
    assert [args for _, args in host.calls] == [['.'], ['.'], ['sub']]


def test_save_skill_checks_python_syntax_before_the_host_sees_it():
    with fake_host({'save_skill': {'success': True}}) as host:
        e = raises(SyntaxError, save_skill, 'bad', 'def (:')
        assert "Skill 'bad' was not saved" in str(e)
        assert host.calls == []
        assert save_skill('good', 'x = 1', shared=True) == "Skill 'good' saved successfully"
    assert host.calls == [('save_skill', ['good', 'x = 1', '', 'python', {'shared': True}])]


def test_tokenize_pii_returns_text_and_the_new_tokens():
    token = '[EMAIL_0123abcd]'
    replies = {'tokenize_pii': f'mail {token}', 'detokenize_pii': 'a@b.example'}
    with fake_host(replies):
        assert tokenize_pii('mail a@b.example') == (f'mail {token}', {token: 'a@b.example'})
    with fake_host({'tokenize_pii': 'nothing here'}):
        assert tokenize_pii('nothing here') == ('nothing here', {})


def test_detokenize_pii_uses_the_tokens_given():
    assert detokenize_pii('hi [EMAIL_0123abcd]', {'[EMAIL_0123abcd]': 'a@b.example'}) == 'hi a@b.example'


def test_search_tools_merges_keyword_options():
    with fake_host({'search_tools': {'tools': []}}) as host:
        search_tools('github', {'limit': 3}, detail_level='full')
        search_tools(None)
    assert host.calls == [('search_tools', ['github', {'limit': 3, 'detail_level': 'full'}]), ('search_tools', ['', {}])]


def test_data_helpers():
    rows = [{'k': 'a', 'n': 1}, {'k': 'b', 'n': 3}, 'not a dict']
    assert filter_by_field(rows, 'k', 'b') == [{'k': 'b', 'n': 3}]
    assert summarize_list(range(20), limit=2) == {'count': 20, 'sample': [0, 1]}
    assert aggregate_stats([]) == {'count': 0}
    stats = aggregate_stats(rows[:2])
    assert stats == {'count': 2, 'n_sum': 4, 'n_avg': 2.0, 'n_min': 1, 'n_max': 3}
    assert aggregate_stats([{'flag': True}]) == {'count': 1}
    assert format_output({'a': 1}) == '{\n  "a": 1\n}'
    assert format_output('x' * 50, max_chars=10) == '"' + 'x' * 9


def test_tools_route_calls_and_list_what_is_known():
    t = Tools(['demo.echo', 'demo.slow', 'other.ping'])
    assert dir(t) == ['demo', 'other'] and dir(t.demo) == ['echo', 'slow']
    raises(AttributeError, getattr, t, '__secret__')
    with fake_host({'call_tool': {'echoed': 1}}) as host:
        assert t.demo.echo({'a': 1}, b=2) == {'echoed': 1}
        t['not-configured'].anything()
    assert host.calls == [('call_tool', ['demo', 'echo', {'a': 1, 'b': 2}]), ('call_tool', ['not-configured', 'anything', {}])]
    assert t.demo.echo.__qualname__ == 'tools.demo.echo'


def test_response_reads_its_reply():
    r = Response({'status': 404, 'url': 'https://x.example/', 'headers': [['Content-Type', 'text/plain']], 'body': '{"a": 1}'})
    assert (r.ok, r.status, r.headers, r.json()) == (False, 404, {'content-type': 'text/plain'}, {'a': 1})
