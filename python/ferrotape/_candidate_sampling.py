"""Candidate samplers (``tf.random.*_candidate_sampler``, also in ``tf.nn``) and
``compute_accidental_hits``: the negative classes that ``nce_loss`` and ``sampled_softmax_loss``
score instead of every class.

Each sampler draws ``num_sampled`` classes from a fixed distribution over ``[0, range_max)``
and reports how often each true and sampled class is expected among the draws. With
``unique=True`` it draws until ``num_sampled`` distinct classes came up, in ``num_tries`` draws;
a class of probability ``p`` is then expected ``1 - (1 - p) ** num_tries`` times, and
``p * num_sampled`` times when no draw repeated (TensorFlow's shortcut, kept). The draws come
from numpy seeded by one native draw (``ft.random``'s seed contract), so they differ from
TensorFlow's; the distributions and expected counts are the same.
"""

import math

import numpy as np

from . import _core
from .errors import InvalidArgumentError

# TensorFlow's learned unigram sampler lives in its op kernel, which eager mode caches per
# attribute set: a call continues from the counts the last call with the same attributes left.
_LEARNED_COUNTS = {}


def _true_classes(op, true_classes, num_true, range_max=None):
    values = np.asarray(true_classes.numpy() if hasattr(true_classes, "numpy") else true_classes)
    if values.ndim != 2 or values.shape[1] != num_true or values.dtype.kind not in "iu":
        raise InvalidArgumentError(
            f"{op}: true_classes must be an int64 matrix [batch_size, num_true={num_true}]; "
            f"received shape {list(values.shape)} and dtype {values.dtype}"
        )
    outside = values[(values < 0) | (values >= (range_max or np.inf))]
    if range_max is not None and outside.size:
        raise InvalidArgumentError(
            f"{op}: `true_candidate` out of range [0, {range_max}), received {outside[0]}"
        )
    return values.astype(np.int64)


def _check(op, num_sampled, unique, range_max):
    if num_sampled < 1 or range_max < 1:
        raise InvalidArgumentError(
            f"{op}: num_sampled and range_max must be positive; received "
            f"num_sampled={num_sampled}, range_max={range_max}"
        )
    if unique and num_sampled > range_max:
        raise InvalidArgumentError(
            f"{op}: Sampler's range is too small: {num_sampled} unique samples requested from "
            f"range_max={range_max}"
        )


def _rng(seed):
    from .random import _op_rng  # ft.random imports this module: resolved at call time

    return _op_rng(seed)


def _sample(op, probs, true, num_sampled, unique, seed):
    """Draws by ``probs`` and returns TensorFlow's three outputs."""
    rng = _rng(seed)
    if unique:
        if num_sampled > np.count_nonzero(probs):
            raise InvalidArgumentError(
                f"{op}: only {np.count_nonzero(probs)} classes have a nonzero probability; "
                f"cannot draw {num_sampled} unique ones"
            )
        picked, seen, tries = [], set(), 0
        while len(picked) < num_sampled:
            # Draw in blocks (numpy's per-call cost dominates single draws), consumed in order.
            for value in rng.choice(len(probs), size=2 * num_sampled, p=probs).tolist():
                tries += 1
                if value not in seen:
                    seen.add(value)
                    picked.append(value)
                    if len(picked) == num_sampled:
                        break
        sampled = np.array(picked, dtype=np.int64)
    else:
        sampled = rng.choice(len(probs), size=num_sampled, p=probs).astype(np.int64)
        tries = num_sampled

    def expected(p):
        if tries == num_sampled:
            return p * num_sampled
        return -np.expm1(tries * np.log1p(-p))

    true_p = probs[true]
    return (
        _core.constant(sampled),
        _core.constant(expected(true_p).astype(np.float32)),
        _core.constant(expected(probs[sampled]).astype(np.float32)),
    )


def uniform_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Samples classes uniformly from ``[0, range_max)``: each has probability ``1 / range_max``.

    Args:
        true_classes: int64 ``[batch_size, num_true]``: the target classes.
        num_true: The number of target classes per example.
        num_sampled: How many classes to draw.
        unique: Whether the drawn classes must be distinct (drawn until they are).
        range_max: The number of classes.
        seed: An op seed (with the global seed, as for ``ft.random.uniform``).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(sampled_candidates, true_expected_count, sampled_expected_count)``: int64
        ``[num_sampled]``, float32 ``[batch_size, num_true]`` and float32 ``[num_sampled]``.

    >>> import ferrotape as ft
    >>> sampled, true_count, _ = ft.random.uniform_candidate_sampler(
    ...     [[1], [2]], 1, 3, False, range_max=10, seed=1)
    >>> sampled.shape, true_count.numpy().ravel()  # each class: 3 draws * 1/10
    (TensorShape([3]), array([0.3, 0.3], dtype=float32))
    """
    del name
    op = "uniform_candidate_sampler"
    true = _true_classes(op, true_classes, num_true, range_max)
    _check(op, num_sampled, unique, range_max)
    return _sample(op, np.full(range_max, 1.0 / range_max), true, num_sampled, unique, seed)


def log_uniform_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Samples classes from the log-uniform (Zipfian) distribution over ``[0, range_max)``:
    ``P(class) = log((class + 2) / (class + 1)) / log(range_max + 1)``, for classes sorted by
    decreasing frequency.

    Args:
        true_classes: int64 ``[batch_size, num_true]``: the target classes.
        num_true: The number of target classes per example.
        num_sampled: How many classes to draw.
        unique: Whether the drawn classes must be distinct (drawn until they are).
        range_max: The number of classes.
        seed: An op seed (with the global seed, as for ``ft.random.uniform``).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(sampled_candidates, true_expected_count, sampled_expected_count)``: int64
        ``[num_sampled]``, float32 ``[batch_size, num_true]`` and float32 ``[num_sampled]``.

    >>> import ferrotape as ft
    >>> _, true_count, _ = ft.random.log_uniform_candidate_sampler(
    ...     [[0]], 1, 1, False, range_max=3, seed=1)
    >>> true_count.numpy()  # log(2) / log(4)
    array([[0.5]], dtype=float32)
    """
    del name
    op = "log_uniform_candidate_sampler"
    true = _true_classes(op, true_classes, num_true, range_max)
    _check(op, num_sampled, unique, range_max)
    classes = np.arange(range_max, dtype=np.float64)
    probs = (np.log(classes + 2) - np.log(classes + 1)) / math.log(range_max + 1)
    return _sample(op, probs / probs.sum(), true, num_sampled, unique, seed)


def learned_unigram_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Samples classes by the unigram distribution of the true classes seen so far.

    Every class starts with a count of 1; after drawing, each entry of ``true_classes`` adds
    1 to its class's count. As in TensorFlow's eager mode, the counts carry over between calls
    with the same ``num_true``, ``num_sampled``, ``unique``, ``range_max`` and ``seed``.

    Args:
        true_classes: int64 ``[batch_size, num_true]``: the target classes.
        num_true: The number of target classes per example.
        num_sampled: How many classes to draw.
        unique: Whether the drawn classes must be distinct (drawn until they are).
        range_max: The number of classes.
        seed: An op seed (with the global seed, as for ``ft.random.uniform``).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(sampled_candidates, true_expected_count, sampled_expected_count)``: int64
        ``[num_sampled]``, float32 ``[batch_size, num_true]`` and float32 ``[num_sampled]``.

    >>> import ferrotape as ft
    >>> for _ in range(2):
    ...     _, true_count, _ = ft.random.learned_unigram_candidate_sampler(
    ...         [[1], [1]], 1, 2, False, range_max=4, seed=1234)
    >>> true_count.numpy().ravel()  # class 1 counted 1 + 2 of 4 + 2: 2 draws * 3/6
    array([1., 1.], dtype=float32)
    """
    del name
    op = "learned_unigram_candidate_sampler"
    true = _true_classes(op, true_classes, num_true, range_max)
    _check(op, num_sampled, unique, range_max)
    counts = _LEARNED_COUNTS.setdefault(
        (num_true, num_sampled, bool(unique), range_max, seed), np.ones(range_max)
    )
    result = _sample(op, counts / counts.sum(), true, num_sampled, unique, seed)
    np.add.at(counts, true, 1.0)
    return result


def _vocab_counts(op, vocab_file):
    """The last comma-separated field of each line: TensorFlow's vocabulary file format."""
    try:
        with open(vocab_file, encoding="utf-8") as f:
            return [float(line.rsplit(",", 1)[-1]) for line in f if line.strip()]
    except (OSError, ValueError) as err:
        raise InvalidArgumentError(f"{op}: cannot read counts from {vocab_file!r}: {err}") from err


def fixed_unigram_candidate_sampler(
    true_classes,
    num_true,
    num_sampled,
    unique,
    range_max,
    vocab_file="",
    distortion=1.0,
    num_reserved_ids=0,
    num_shards=1,
    shard=0,
    unigrams=(),
    seed=None,
    name=None,
):
    """Samples classes by given unigram counts: ``P(class)`` is proportional to
    ``count ** distortion``.

    The first ``num_reserved_ids`` classes have probability 0, and the counts follow them.
    With ``num_shards > 1`` only the ids with ``id % num_shards == shard`` are kept, numbered
    from 0 in order, TensorFlow's way (the unigram ids restart at the number of reserved ids
    kept, as TensorFlow's kernel numbers them).

    Args:
        true_classes: int64 ``[batch_size, num_true]``: the target classes.
        num_true: The number of target classes per example.
        num_sampled: How many classes to draw.
        unique: Whether the drawn classes must be distinct (drawn until they are).
        range_max: The number of classes; must equal the number of weights kept.
        vocab_file: A file whose lines end in ``,count``; used instead of ``unigrams``.
        distortion: The power the counts are raised to (1 keeps them, 0 makes them uniform).
        num_reserved_ids: Leading classes never sampled.
        num_shards: How many shards the ids are split into.
        shard: Which shard to sample from.
        unigrams: The counts, one per class after the reserved ones.
        seed: An op seed (with the global seed, as for ``ft.random.uniform``).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(sampled_candidates, true_expected_count, sampled_expected_count)``: int64
        ``[num_sampled]``, float32 ``[batch_size, num_true]`` and float32 ``[num_sampled]``.

    Raises:
        ValueError: if ``range_max`` differs from the number of weights kept, or both or
            neither of ``vocab_file`` and ``unigrams`` are given.

    >>> import ferrotape as ft
    >>> _, true_count, _ = ft.random.fixed_unigram_candidate_sampler(
    ...     [[1]], 1, 1, False, range_max=3, unigrams=[1.0, 3.0], num_reserved_ids=1, seed=1)
    >>> true_count.numpy()  # class 1 has count 1 of 4; class 0 is reserved
    array([[0.25]], dtype=float32)
    """
    del name
    op = "fixed_unigram_candidate_sampler"
    true = _true_classes(op, true_classes, num_true, range_max)
    _check(op, num_sampled, unique, range_max)
    if bool(vocab_file) == bool(len(unigrams)):
        raise InvalidArgumentError(f"{op}: give exactly one of vocab_file and unigrams")
    if not 0 <= shard < num_shards:
        raise InvalidArgumentError(
            f"{op}: shard must lie in [0, num_shards={num_shards}); received shard={shard}"
        )
    counts = _vocab_counts(op, vocab_file) if vocab_file else [float(u) for u in unigrams]
    weights = [0.0 for i in range(num_reserved_ids) if i % num_shards == shard]
    first = len(weights)
    weights += [c**distortion for i, c in enumerate(counts, start=first) if i % num_shards == shard]
    if len(weights) != range_max:
        raise InvalidArgumentError(
            f"{op}: range is {range_max} must be equal to weights size {len(weights)}"
        )
    weights = np.asarray(weights, dtype=np.float64)
    return _sample(op, weights / weights.sum(), true, num_sampled, unique, seed)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """ "Samples" every class: returns ``[0, num_sampled)`` with expected counts of 1 (a test
    helper in TensorFlow; ``unique`` and ``seed`` change nothing).

    Args:
        true_classes: int64 ``[batch_size, num_true]``: the target classes.
        num_true: The number of target classes per example.
        num_sampled: The number of classes.
        unique: Ignored.
        seed: Ignored.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(sampled_candidates, true_expected_count, sampled_expected_count)``: int64
        ``[num_sampled]``, float32 ones ``[batch_size, num_true]`` and ``[num_sampled]``.

    >>> import ferrotape as ft
    >>> ft.random.all_candidate_sampler([[0]], 1, 3, True)[0].numpy()
    array([0, 1, 2])
    """
    del unique, seed, name
    true = _true_classes("all_candidate_sampler", true_classes, num_true, num_sampled)
    return (
        _core.constant(np.arange(num_sampled, dtype=np.int64)),
        _core.constant(np.ones(true.shape, dtype=np.float32)),
        _core.constant(np.ones(num_sampled, dtype=np.float32)),
    )


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """Where a sampled class is one of an example's true classes (an "accidental hit").

    Args:
        true_classes: int64 ``[batch_size, num_true]``: the target classes.
        sampled_candidates: int64 ``[num_sampled]``: a sampler's draws.
        num_true: The number of target classes per example.
        seed: Ignored (TensorFlow's op takes one but draws nothing).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(indices, ids, weights)``: for each hit, the example's row (int32), the position in
        ``sampled_candidates`` (int64; the last one where a class was sampled twice), and
        ``-FLT_MAX`` (float32), the logit offset that removes it. Hits are listed by row, then
        by the true class's position.

    >>> import ferrotape as ft
    >>> indices, ids, _ = ft.nn.compute_accidental_hits([[0, 1], [2, 3]], [1, 5, 2, 1], 2)
    >>> indices.numpy(), ids.numpy()
    (array([0, 1], dtype=int32), array([3, 2]))
    """
    del seed, name
    op = "compute_accidental_hits"
    true = _true_classes(op, true_classes, num_true)
    sampled = np.asarray(
        sampled_candidates.numpy() if hasattr(sampled_candidates, "numpy") else sampled_candidates
    )
    if sampled.ndim != 1:
        raise InvalidArgumentError(
            f"{op}: sampled_candidates must be a vector; received shape {list(sampled.shape)}"
        )
    position = {int(v): j for j, v in enumerate(sampled.tolist())}
    hits = [(i, position[v]) for i, row in enumerate(true.tolist()) for v in row if v in position]
    rows = np.array([i for i, _ in hits], dtype=np.int32)
    ids = np.array([j for _, j in hits], dtype=np.int64)
    weights = np.full(len(hits), -np.finfo(np.float32).max, dtype=np.float32)
    return _core.constant(rows), _core.constant(ids), _core.constant(weights)
