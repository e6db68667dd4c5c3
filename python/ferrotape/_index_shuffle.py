"""``tf.random_index_shuffle``: a stateless random permutation of ``[0, max_index]`` evaluated
one index at a time, TensorFlow's way: a reduced Simon block cipher (Beaulieu et al., 2013)
keyed by the seed, on a block of ``max(16, ceil(log2(max_index)))`` bits rounded up to even,
applied again until the result falls in range ("cycle walking", Black and Rogaway, 2002). Not
a cryptographic cipher: it only has to mix well.
"""

import math

import numpy as np

from . import _core
from .errors import InvalidArgumentError

_C = 0xFFFFFFFC
_Z = 0x7369F885192C0EF5


def _rotl(x, r, w):
    return ((x << np.uint64(r)) | (x >> np.uint64(w - r))) & np.uint64((1 << w) - 1)


def _rotr(x, r, w):
    return ((x >> np.uint64(r)) | (x << np.uint64(w - r))) & np.uint64((1 << w) - 1)


def _round_keys(key, rounds, w):
    """Simon's key schedule on ``w``-bit words (constants truncated to ``w`` bits), for a
    ``[3, n]`` array of keys: ``rounds`` arrays of ``n`` round keys."""
    mask = (1 << w) - 1
    c, z = np.uint64(_C & mask), _Z & mask
    keys = [k & np.uint64(mask) for k in key]
    for i in range(3, rounds):
        keys.append(
            c ^ np.uint64(z & 1) ^ keys[i - 3] ^ _rotr(keys[i - 1], 3, w) ^ _rotr(keys[i - 1], 4, w)
        )
        z >>= 1
    return keys


def _encrypt(values, keys, w):
    """Simon's rounds on ``2 w``-bit blocks (left word high), two per pair of keys."""
    mask = np.uint64((1 << w) - 1)

    def f(x):
        return (_rotl(x, 1, w) & _rotl(x, 8, w)) ^ _rotl(x, 2, w)

    left, right = (values >> np.uint64(w)) & mask, values & mask
    for k1, k2 in zip(keys[0::2], keys[1::2], strict=True):
        left = left ^ f(right) ^ k1
        right = right ^ f(left) ^ k2
    return (left << np.uint64(w)) | right


def _shuffle(indices, keys, tops, rounds):
    """The shuffled ``indices`` (uint64 arrays, ``keys`` ``[3, n]``), grouped by block size."""
    out = np.zeros_like(indices)
    bits = np.array([0 if m == 0 else math.ceil(math.log2(int(m))) for m in tops.tolist()])
    bits = np.minimum(np.maximum(bits + bits % 2, 16), 64)
    for size in np.unique(bits[tops > 0]).tolist():
        where = np.flatnonzero((bits == size) & (tops > 0))
        round_keys = _round_keys(keys[:, where], rounds, size // 2)
        values, pending = indices[where], np.arange(len(where))
        # Cycle walking: encrypt again whatever landed above max_index.
        while len(pending):
            values[pending] = _encrypt(values[pending], [k[pending] for k in round_keys], size // 2)
            pending = pending[values[pending] > tops[where][pending]]
        out[where] = values
    return out


def random_index_shuffle(index, seed, max_index, rounds=4, name=None):
    """The position of ``index`` in a random permutation of ``[0, max_index]`` fixed by
    ``seed``: for one seed, distinct indices map to distinct positions.

    Args:
        index: An int scalar or vector (int32, int64, uint32 or uint64).
        seed: 3 ints, or one row of 3 per index; each is taken modulo 2**32.
        max_index: The largest index (a scalar, or one per index), of ``index``'s dtype.
        rounds: The cipher's rounds: even, at least 4.
        name: Ignored (TensorFlow's op name).

    Returns:
        The shuffled indices, of ``index``'s dtype; a scalar when all inputs are single.

    Raises:
        ValueError: for shapes that do not match, a bad ``rounds``, or a float ``index``.

    >>> import ferrotape as ft
    >>> sorted(ft.random_index_shuffle(ft.range(5), [1, 2, 3], 4).numpy().tolist())
    [0, 1, 2, 3, 4]
    """
    del name
    op = "random_index_shuffle"
    index = _core.convert_to_tensor(index)
    if index.dtype.name not in ("int32", "int64", "uint32", "uint64"):
        raise InvalidArgumentError(
            f"{op}: index must be int32, int64, uint32 or uint64; received {index.dtype.name}"
        )
    if rounds < 4 or rounds % 2:
        raise InvalidArgumentError(f"{op}: rounds must be even and >= 4; received {rounds}")
    indices = index.numpy()
    seeds = np.asarray(seed.numpy() if hasattr(seed, "numpy") else seed)
    tops = np.asarray(max_index.numpy() if hasattr(max_index, "numpy") else max_index)
    count = max(indices.size, tops.size, seeds.size // 3)
    if (
        indices.ndim > 1
        or (indices.ndim == 1 and indices.size != count)
        or tops.ndim > 1
        or (tops.ndim == 1 and tops.size != count)
        or seeds.shape not in ((3,), (count, 3))
        or seeds.dtype.kind not in "iu"
    ):
        raise InvalidArgumentError(
            f"{op}: index and max_index must be scalars or vectors of one length and seed [3] "
            f"or [n, 3] integers; received {list(indices.shape)}, {list(tops.shape)} and "
            f"{list(seeds.shape)}"
        )
    rows = np.broadcast_to(seeds.reshape(-1, 3), (count, 3)).astype(np.uint64) & 0xFFFFFFFF
    out = _shuffle(
        np.broadcast_to(indices, (count,)).astype(np.uint64),
        np.ascontiguousarray(rows.T),
        np.broadcast_to(tops, (count,)).astype(np.uint64),
        rounds,
    )
    result = out.astype(index.dtype.name)
    scalar = indices.ndim == 0 and tops.ndim == 0 and seeds.ndim == 1
    return _core.constant(result.reshape(()) if scalar else result)
