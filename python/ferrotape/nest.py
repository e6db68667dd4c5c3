"""Flattening and re-packing of nested structures (lists, tuples, namedtuples, dicts), the way
``tf.nest`` does it: dicts flatten in sorted key order, everything else is a leaf. ``sequences``
says which sequence types are structure (``tf.data`` treats lists as values)."""

SEQUENCES = (list, tuple)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


# No real structure comes near this depth (TensorFlow's tensors have at most 254 axes); a
# deeper one is refused with a clear error instead of exhausting Python's recursion limit or
# the native stack of the code that converts it.
MAX_DEPTH = 254


def _too_deep(function):
    return ValueError(
        f"{function}: the structure is nested more than {MAX_DEPTH} levels deep; nested lists, "
        "tuples and dicts that deep cannot be a structure of tensors"
    )


def flatten(structure, sequences=SEQUENCES):
    """The leaves of ``structure`` in order (dict values in sorted key order)."""
    leaves = []
    # An explicit stack of (value, depth), last item on top, so depth costs no recursion.
    stack = [(structure, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = [value[k] for k in sorted(value)]
        elif isinstance(value, sequences):
            children = list(value)
        else:
            leaves.append(value)
            continue
        if depth >= MAX_DEPTH:
            raise _too_deep("nest.flatten")
        stack.extend((child, depth + 1) for child in reversed(children))
    return leaves


def pack_sequence_as(structure, flat, sequences=SEQUENCES):
    """``structure`` with its leaves replaced, in order, by the items of ``flat``."""
    it = iter(flat)

    def build(s, depth):
        if depth > MAX_DEPTH and isinstance(s, (dict, *sequences)):
            raise _too_deep("nest.pack_sequence_as")
        if isinstance(s, dict):
            built = {k: build(s[k], depth + 1) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s)
        if _is_namedtuple(s):
            return type(s)(*(build(x, depth + 1) for x in s))
        if isinstance(s, sequences):
            return type(s)(build(x, depth + 1) for x in s)
        return next(it)

    return build(structure, 0)


def map_structure(fn, structure, sequences=SEQUENCES):
    flat = [fn(x) for x in flatten(structure, sequences)]
    return pack_sequence_as(structure, flat, sequences)
