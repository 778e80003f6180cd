# state.py: the quick sweep's one-pass check says "unchanged" only when every record holds exactly
# what was recorded, and the sweep still repairs what a call changed.


def records_of(d, cls, lst, st, cell):
    return {
        'dict': [(d, tuple(d), tuple(d.values()))],
        'class': [(cls, tuple(cls.__dict__), tuple(cls.__dict__.values()))],
        'list': [(lst, tuple(lst))],
        'set': [(st, tuple(st), frozenset(map(id, st)))],
        'cell': [(cell, cell.cell_contents)],
    }


def world():
    value = object()

    def holder():
        return value

    class C:
        x = 1

    return {'a': 1, 'b': 'two'}, C, [1, 2], {'p', 'q'}, holder.__closure__[0]


def test_unchanged_until_any_record_changes():
    d, C, lst, st, cell = world()
    unchanged = make_unchanged(records_of(d, C, lst, st, cell))
    assert unchanged()
    changes = [
        (lambda: d.__setitem__('a', 2), lambda: d.__setitem__('a', 1)),
        (lambda: setattr(C, 'x', 2), lambda: setattr(C, 'x', 1)),
        (lambda: setattr(C, 'y', 2), lambda: delattr(C, 'y')),
        (lambda: lst.__setitem__(0, 9), lambda: lst.__setitem__(0, 1)),
    ]
    for change, undo in changes:
        change()
        assert not unchanged()
        undo()
        assert unchanged()
    old = cell.cell_contents
    cell.cell_contents = object()
    assert not unchanged()
    cell.cell_contents = old
    del cell.cell_contents
    assert not unchanged()
    cell.cell_contents = old
    assert unchanged()
    # A set swapped back may iterate in another order (string hashes differ per process): then the
    # check says "look closer" (False), never "unchanged" while it differs.
    st.discard('q')
    st.add('r')
    assert not unchanged()
    st.discard('r')
    st.add('q')


def test_a_renamed_key_with_the_same_value_is_a_change():
    d = {'a': 1, 'last': 'v'}
    unchanged = make_unchanged({'dict': [(d, tuple(d), tuple(d.values()))], 'class': [], 'list': [], 'set': [], 'cell': []})
    del d['last']
    d['other'] = 'v'
    assert not unchanged()


def test_an_item_moved_between_two_records_is_a_change():
    a, b = {'k': 1}, {'j': 2}
    recs = {'dict': [(a, tuple(a), tuple(a.values())), (b, tuple(b), tuple(b.values()))], 'class': [], 'list': [], 'set': [], 'cell': []}
    unchanged = make_unchanged(recs)
    del b['j']
    a['j'] = 2
    assert not unchanged()


def test_the_sweep_repairs_what_the_one_pass_check_flagged():
    d, C, lst, st, cell = world()
    recs = records_of(d, C, lst, st, cell)
    import sys
    sweep = make_sweep((tuple(sys.modules), tuple(sys.modules.values())), recs, None, {})
    assert sweep() == 0
    d['a'] = 5
    C.x = 7
    lst.append(3)
    assert sweep() == 3
    assert sweep() == 0
    assert d == {'a': 1, 'b': 'two'} and C.x == 1 and lst == [1, 2]
