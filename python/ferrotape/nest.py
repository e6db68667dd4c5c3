"""Flattening and re-packing of nested structures (lists, tuples, namedtuples, dicts), the way
``tf.nest`` does it: dicts flatten in sorted key order, everything else is a leaf. ``sequences``
says which sequence types are structure (``tf.data`` treats lists as values)."""

SEQUENCES = (list, tuple)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def flatten(structure, sequences=SEQUENCES):
    """The leaves of ``structure`` in order."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k], sequences)]
    if isinstance(structure, sequences):
        return [leaf for item in structure for leaf in flatten(item, sequences)]
    return [structure]


def pack_sequence_as(structure, flat, sequences=SEQUENCES):
    """``structure`` with its leaves replaced, in order, by the items of ``flat``."""
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s)
        if _is_namedtuple(s):
            return type(s)(*(build(x) for x in s))
        if isinstance(s, sequences):
            return type(s)(build(x) for x in s)
        return next(it)

    return build(structure)


def map_structure(fn, structure, sequences=SEQUENCES):
    flat = [fn(x) for x in flatten(structure, sequences)]
    return pack_sequence_as(structure, flat, sequences)
