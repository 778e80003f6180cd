# bridge.py: any value becomes JSON data without raising; host replies decode or raise the named error.
import dataclasses, datetime, decimal, enum, math


def data(value, budget=1 << 20):
    return to_json_data(value, [budget])


def test_plain_values_pass_through():
    assert data({'a': [1, 2.5, 'x', None, True]}) == {'a': [1, 2.5, 'x', None, True]}


def test_non_finite_floats_become_null():
    assert data([math.nan, math.inf, -math.inf]) == [None, None, None]


def test_ints_beyond_javascript_precision_become_text():
    assert data(2 ** 53) == 2 ** 53
    assert data(2 ** 53 + 1) == str(2 ** 53 + 1)


def test_cycles_are_marked_not_followed():
    a = []
    a.append(a)
    assert data(a) == ['[Circular]']
    d = {}
    d['self'] = d
    assert data(d) == {'self': '[Circular]'}


def test_shared_values_that_are_not_cycles_repeat():
    shared = [1]
    assert data([shared, shared]) == [[1], [1]]


def test_nesting_stops_at_max_depth():
    v = []
    for _ in range(MAX_DEPTH + 5):
        v = [v]
    out = data(v)
    for _ in range(MAX_DEPTH):
        out = out[0]
    assert out == '[too deep]'


def test_dates_decimals_bytes_enums_dataclasses():
    class Color(enum.Enum):
        RED = 'red'

    @dataclasses.dataclass
    class Point:
        x: int
        y: int

    assert data(datetime.date(2026, 11, 26)) == '2026-11-26'
    assert data(datetime.timedelta(minutes=1)) == 60.0
    assert data(decimal.Decimal('1.5')) == 1.5
    assert data(decimal.Decimal('NaN')) == 'NaN'
    assert data(b'abc') == '<3 bytes>'
    assert data(Color.RED) == 'red'
    assert data(Point(1, 2)) == {'x': 1, 'y': 2}
    assert data(1 + 2j) == '(1+2j)'
    assert data({1: 'a', None: 'b', (1, 2): 'c'}) == {'1': 'a', 'null': 'b', '(1, 2)': 'c'}


def test_errors_become_name_and_message():
    assert data(ValueError('bad')) == {'name': 'ValueError', 'message': 'bad'}


def test_objects_whose_repr_raises_are_described_by_type():
    class Hostile:
        def __repr__(self):
            raise RuntimeError('no')

    assert data(Hostile()) == '<Hostile>'


def test_long_text_is_cut_to_the_budget():
    out = data('x' * 100, budget=12)
    assert out.startswith('x' * 10) and out.endswith('...[truncated 90 chars]')


def test_long_lists_say_how_many_items_were_left_out():
    out = data(list(range(1000)), budget=100)
    assert out[-1].startswith('[... ') and out[-1].endswith(' more items]')


def test_reply_text_json_and_errors():
    assert _reply_value('shello') == 'hello'
    assert _reply_value('j{"a": [1]}') == {'a': [1]}
    e = raises(FileNotFoundError, _reply_value, 'e{"name": "FileNotFoundError", "message": "no such file: a.txt"}')
    assert str(e) == 'no such file: a.txt'
    e = raises(RuntimeError, _reply_value, 'e{"name": "SomethingElse", "message": "odd"}')
    assert str(e) == 'odd'
    assert str(raises(RuntimeError, _reply_value, 'e{}')) == 'host call failed'


def test_host_sync_sends_json_arguments():
    with fake_host({'read_file': 'body'}) as host:
        assert host_sync('read_file', 'a.txt') == 'body'
    assert host.calls == [('read_file', ['a.txt'])]


def test_sleep_is_interruptible_and_named_like_time_sleep():
    import time
    assert time.sleep is interruptible_sleep
    assert (interruptible_sleep.__name__, interruptible_sleep.__module__) == ('sleep', 'time')
    raises(ValueError, interruptible_sleep, -1)
    interruptible_sleep(0)


def test_host_call_follow_blocks_outside_async_code():
    assert not in_async_code()
    with fake_host({'call_tool': {'ok': 1}}) as host:
        assert host_call_follow('call_tool', 'demo', 'echo', {}) == {'ok': 1}
    assert host.calls == [('call_tool', ['demo', 'echo', {}])]


def test_exact_values_in_containers_convert_as_alone():
    # Strings and ints inside dicts and lists take a shorter path: the same values and budget.
    big = 2 ** 53 + 1

    class Text(str):
        def __str__(self):
            return 'told'

    value = {'s': 'abc', 'n': 5, 'big': big, 'list': ['x', 7, big, True, None, 1.5, Text('t')], 't': Text('t')}
    assert data(value) == {'s': 'abc', 'n': 5, 'big': str(big), 'list': ['x', 7, str(big), True, None, 1.5, 'told'], 't': 'told'}
    # Cut at the budget exactly where a lone string would be.
    for budget in range(1, 40):
        whole = data({'k': 'y' * 30}, budget=budget)
        alone = data('y' * 30, budget=budget - 5)
        assert whole == ({'k': alone} if budget > 5 else {'k': '[truncated]'}), budget
        assert data(['y' * 30], budget=budget) == [data('y' * 30, budget=budget - 1)], budget


def test_the_same_object_twice_side_by_side_is_not_a_cycle():
    @dataclasses.dataclass
    class Point:
        x: int

    p, row = Point(1), {'a': 1}
    assert data([p, p, row, row]) == [{'x': 1}, {'x': 1}, {'a': 1}, {'a': 1}]


def test_host_call_arguments_cross_as_ascii_json():
    with fake_host({'write_file': 'ok'}) as host:
        host_sync('write_file', 'a.txt', 'é中😀')
    assert host.calls == [('write_file', ['a.txt', 'é中😀'])]
    assert _encode_args(['é中😀', '\ud800']).isascii()
