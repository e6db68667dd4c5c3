"""Flattening and re-packing of nested structures (lists, tuples, namedtuples, dicts), the way
``tf.nest`` does it: dicts flatten in sorted key order, everything else is a leaf. ``sequences``
says which sequence types are structure (``tf.data`` treats lists as values).

User structures can be arbitrarily deep (``x = [x]`` in a loop), so nothing here recurses: the
walks keep their own stack, and a structure nested more than ``MAX_DEPTH`` (100) levels is
refused with a ValueError naming the function. TensorFlow raises RecursionError there and numpy
a ValueError (more than 64 dimensions). No real structure comes near 100 levels, and the bound
is what keeps the recursive helpers that run after a nest has been checked (Keras's shape
walks, repr) well inside Python's recursion limit of 1,000 frames.

>>> flatten({"b": [1, (2, 3)], "a": 0})
[0, 1, 2, 3]
>>> map_structure(lambda x, y: x + y, (1, [2]), (10, [20]))
(11, [22])
"""

import reprlib

SEQUENCES = (list, tuple)
MAX_DEPTH = 100

_END = object()


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_nested(x):
    """Whether ``x`` is a structure (a list, tuple or dict) rather than a leaf.

    Args:
        x: Any Python value.

    Returns:
        A bool.

    >>> is_nested([1, 2]), is_nested({"a": 1}), is_nested(3)
    (True, True, False)
    """
    return isinstance(x, (list, tuple, dict))


def _sorted_keys(mapping, who):
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError(
            f"{who}: dict keys must be sortable (they flatten in sorted order), received keys "
            f"{reprlib.repr(list(mapping))}"
        ) from None


def _children(node, sequences, who):
    """The children of a structure node in flattening order, or None for a leaf."""
    if isinstance(node, dict):
        return [node[k] for k in _sorted_keys(node, who)]
    if isinstance(node, sequences):
        return node
    return None


def _too_deep(who):
    return ValueError(
        f"{who}: the structure is nested more than {MAX_DEPTH} levels deep (a list or tuple "
        f"that contains itself, or a nest built in a loop?)"
    )


def _walk(structure, sequences, who):
    """Yields ``(True, node)`` for each structure node and ``(False, leaf)`` for each leaf, in
    flattening (pre-)order, with an explicit stack."""
    stack = [iter((structure,))]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            continue
        children = _children(item, sequences, who)
        if children is None:
            yield False, item
            continue
        if len(stack) > MAX_DEPTH:
            raise _too_deep(who)
        yield True, item
        stack.append(iter(children))


def flatten(structure, sequences=SEQUENCES):
    """The leaves of ``structure``, in order (dicts in sorted key order).

    Args:
        structure: A nest of lists, tuples, namedtuples and dicts, or a single leaf.
        sequences: The sequence types that count as structure (``(list, tuple)``).

    Returns:
        A list of leaves; ``[structure]`` for a leaf.

    Raises:
        ValueError: for a structure nested more than ``MAX_DEPTH`` levels.
        TypeError: for a dict whose keys cannot be sorted.

    >>> flatten({"b": [1, (2, 3)], "a": 0})
    [0, 1, 2, 3]
    """
    return flatten_for(structure, sequences, "nest.flatten")


def flatten_for(structure, sequences, who):
    """``flatten`` whose errors name ``who`` (the public function that flattens)."""
    if not isinstance(structure, (dict, sequences)):
        return [structure]
    return [x for is_node, x in _walk(structure, sequences, who) if not is_node]


def _rebuild(node, built):
    """A node of ``node``'s type holding the ``built`` children (in flattening order)."""
    if isinstance(node, dict):
        by_key = dict(zip(sorted(node), built, strict=True))
        return type(node)((k, by_key[k]) for k in node)
    if _is_namedtuple(node):
        return type(node)(*built)
    return type(node)(built)


def pack_sequence_as(structure, flat, sequences=SEQUENCES):
    """``structure`` with its leaves replaced, in order, by the items of ``flat``.

    Args:
        structure: A nest, whose shape the result takes.
        flat: A sequence of as many items as ``structure`` has leaves.
        sequences: The sequence types that count as structure (``(list, tuple)``).

    Returns:
        A nest of ``structure``'s types holding the items of ``flat``.

    Raises:
        ValueError: if ``flat`` has more or fewer items than ``structure`` has leaves.

    >>> pack_sequence_as({"b": [None, None], "a": None}, [0, 1, 2])
    {'b': [1, 2], 'a': 0}
    """
    return pack_for(structure, flat, sequences, "nest.pack_sequence_as")


def pack_for(structure, flat, sequences, who):
    """``pack_sequence_as`` whose errors name ``who``."""
    flat = list(flat)
    leaves = iter(flat)
    used = 0
    root = []
    stack = [(None, iter((structure,)), root)]  # (node, its children left, children built)
    while stack:
        node, children, built = stack[-1]
        child = next(children, _END)
        if child is _END:
            stack.pop()
            if stack:
                stack[-1][2].append(_rebuild(node, built))
            continue
        grandchildren = _children(child, sequences, who)
        if grandchildren is None:
            built.append(next(leaves, None))
            used += 1
        elif len(stack) > MAX_DEPTH:
            raise _too_deep(who)
        else:
            stack.append((child, iter(grandchildren), []))
    if used != len(flat):
        raise ValueError(
            f"{who}: could not pack the sequence: the structure has {used} leaves but the flat "
            f"sequence has {len(flat)} items"
        )
    return root[0]


def _shape_of_node(node, check_types):
    if isinstance(node, dict):
        return ("dict", tuple(sorted(node, key=repr)))
    kind = type(node) if check_types else "sequence"
    return (kind, len(node))


def assert_same_structure(nest1, nest2, check_types=True):
    """Checks that two nests have the same nesting, sequence lengths and dict keys.

    Args:
        nest1: A nest.
        nest2: A nest.
        check_types: If true, the sequence types must match too (a list is not a tuple).

    Raises:
        ValueError: if the nestings, lengths or keys differ.
        TypeError: if ``check_types`` and two sequence types differ.

    >>> assert_same_structure([1, (2, 3)], ["a", ("b", "c")])
    >>> try:
    ...     assert_same_structure([1, 2], (1, 2))
    ... except TypeError:
    ...     print("raised")
    raised
    """
    _assert_same(nest1, nest2, check_types, SEQUENCES, "nest.assert_same_structure")


def assert_same_for(nest1, nest2, check_types, who):
    """``assert_same_structure`` whose errors name ``who`` (the public function that checks)."""
    _assert_same(nest1, nest2, check_types, SEQUENCES, who)


def _assert_same(nest1, nest2, check_types, sequences, who):
    walks = (_walk(nest1, sequences, who), _walk(nest2, sequences, who))
    for a, b in _zip_longest(*walks):
        if a is None or b is None or a[0] != b[0]:
            raise ValueError(
                f"{who}: the two structures don't have the same nested structure. First "
                f"structure: {_short(nest1)}, second structure: {_short(nest2)}"
            )
        if not a[0]:
            continue
        sa, sb = _shape_of_node(a[1], check_types), _shape_of_node(b[1], check_types)
        if sa == sb:
            continue
        if sa[0] != sb[0] and not isinstance(sa[0], str) and not isinstance(sb[0], str):
            raise TypeError(
                f"{who}: the two structures don't have the same sequence type: "
                f"{sa[0].__name__} and {sb[0].__name__}"
            )
        raise ValueError(
            f"{who}: the two structures don't have the same nested structure. First "
            f"structure: {_short(nest1)}, second structure: {_short(nest2)}"
        )


def _zip_longest(a, b):
    while True:
        x, y = next(a, None), next(b, None)
        if x is None and y is None:
            return
        yield x, y


def _short(structure):
    return reprlib.repr(structure)


def map_structure(fn, *structures, sequences=SEQUENCES, check_types=True):
    """Applies ``fn`` to the leaves of the structures, packed in the structure of the first.

    Args:
        fn: A callable taking one argument per structure.
        *structures: One or more nests of the same structure.
        sequences: The sequence types that count as structure (``(list, tuple)``).
        check_types: If true, the structures' sequence types must match.

    Returns:
        A nest of the first structure's shape holding ``fn``'s results.

    Raises:
        TypeError: if ``fn`` is not callable.
        ValueError: if the structures differ.

    >>> map_structure(lambda x, y: x + y, (1, [2]), (10, [20]))
    (11, [22])
    """
    return map_for(fn, structures, sequences, check_types, "nest.map_structure")


def map_for(fn, structures, sequences, check_types, who):
    """``map_structure`` whose errors name ``who``."""
    if not callable(fn):
        raise TypeError(f"{who}: fn must be callable, received {reprlib.repr(fn)}")
    if not structures:
        raise ValueError(f"{who}: expected at least one structure")
    for other in structures[1:]:
        _assert_same(structures[0], other, check_types, sequences, who)
    flats = [flatten_for(s, sequences, who) for s in structures]
    results = [fn(*leaves) for leaves in zip(*flats, strict=True)]
    return pack_for(structures[0], results, sequences, who)


__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]
