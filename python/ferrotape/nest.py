"""Flattening and re-packing of nested structures (lists, tuples, namedtuples, dicts), the way
``tf.nest`` does it: dicts flatten in sorted key order, everything else is a leaf."""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def flatten(structure):
    """The leaves of ``structure`` in order."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure, flat):
    """``structure`` with its leaves replaced, in order, by the items of ``flat``."""
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s)
        if _is_namedtuple(s):
            return type(s)(*(build(x) for x in s))
        if isinstance(s, (list, tuple)):
            return type(s)(build(x) for x in s)
        return next(it)

    return build(structure)


def map_structure(fn, structure):
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])
