"""Losses over a sample of the classes (TensorFlow's ``nn_impl.py``): ``nce_loss`` and
``sampled_softmax_loss`` score each example's true classes against ``num_sampled`` classes
drawn by a candidate sampler (``_candidate_sampling.py``), instead of all ``num_classes``.

Both build the same logits: ``inputs @ weights[c] + biases[c]`` for the true and the sampled
classes ``c``, minus ``log(expected count)`` of ``c`` under the sampler (so the loss estimates
the full one), with ``-FLT_MAX`` added where a sampled class is an example's true class when
``remove_accidental_hits``. The sampler's outputs carry no gradient; the weights, biases and
inputs get theirs through the tensor ops (dense, where TensorFlow returns ``IndexedSlices``).
"""

import numpy as np

from . import _core
from ._candidate_sampling import compute_accidental_hits, log_uniform_candidate_sampler
from .errors import InvalidArgumentError
from .nn import sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits


def _sampled_logits(
    op, weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values, seed
):
    """``(logits, labels)``: ``[batch, num_true + num_sampled]`` logits, true classes first,
    and the targets ``1 / num_true`` for the true columns, 0 for the sampled ones."""
    if isinstance(weights, (list, tuple)):
        # TensorFlow's "div" partitioning keeps the classes in order across the shards.
        weights = _core.concat([_core.convert_to_tensor(w) for w in weights], axis=0)
    weights, biases = _core.convert_to_tensor(weights), _core.convert_to_tensor(biases)
    inputs = _core.convert_to_tensor(inputs)
    labels = np.asarray(labels.numpy() if hasattr(labels, "numpy") else labels)
    if labels.ndim == 1:
        labels = labels[:, None]
    if (
        labels.ndim != 2
        or labels.shape[1] != num_true
        or inputs.ndim != 2
        or labels.shape[0] != inputs.shape[0]
    ):
        raise InvalidArgumentError(
            f"{op}: labels must be [batch_size, num_true={num_true}] and inputs "
            f"[batch_size, dim]; received labels {list(labels.shape)}, inputs "
            f"{list(inputs.shape)}"
        )
    labels = labels.astype(np.int64)
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(
            labels, num_true, num_sampled, True, num_classes, seed=seed
        )
    sampled, true_count, sampled_count = (
        _core.stop_gradient(_core.convert_to_tensor(s)) for s in sampled_values
    )
    sampled = _core.cast(sampled, "int64")
    ids = _core.concat([_core.constant(labels.reshape(-1)), sampled], axis=0)
    all_w = _core.cast(_core.gather(weights, ids), inputs.dtype)
    all_b = _core.cast(_core.gather(biases, ids), inputs.dtype)
    n_true = labels.size
    dim = weights.shape[1]
    true_w = _core.reshape(all_w[:n_true], [-1, num_true, dim])
    true_logits = _core.reduce_sum(_core.expand_dims(inputs, 1) * true_w, axis=2)
    true_logits = true_logits + _core.reshape(all_b[:n_true], [-1, num_true])
    sampled_logits = _core.linalg.matmul(inputs, all_w[n_true:], transpose_b=True)
    sampled_logits = sampled_logits + all_b[n_true:]
    return true_logits, sampled_logits, labels, sampled, true_count, sampled_count


def _finish(logits, labels, sampled, true_count, sampled_count, num_true, remove_hits):
    true_logits, sampled_logits = logits
    if remove_hits:
        rows, cols, offsets = (
            t.numpy() for t in compute_accidental_hits(labels, sampled, num_true)
        )
        mask = np.zeros(tuple(sampled_logits.shape), dtype=np.float64)
        mask[rows, cols] = offsets
        sampled_logits = sampled_logits + _core.constant(mask, dtype=sampled_logits.dtype)
    dtype = true_logits.dtype
    true_logits = true_logits - _core.log(_core.cast(true_count, dtype))
    sampled_logits = sampled_logits - _core.log(_core.cast(sampled_count, dtype))
    out_logits = _core.concat([true_logits, sampled_logits], axis=1)
    out_labels = _core.concat(
        [
            _core.ones_like(true_logits) / num_true,
            _core.zeros_like(sampled_logits),
        ],
        axis=1,
    )
    return out_logits, out_labels


def nce_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=False,
    name="nce_loss",
):
    """Noise-contrastive estimation: a logistic loss telling each example's true classes
    (target ``1 / num_true``) from ``num_sampled`` sampled ones (target 0).

    Per example, the sum over the true and sampled columns of
    ``sigmoid_cross_entropy_with_logits`` of ``inputs @ weights[c] + biases[c] - log Q(c)``,
    ``Q(c)`` being the sampler's expected count of class ``c``.

    Args:
        weights: float ``[num_classes, dim]`` class embeddings, or a list of row shards.
        biases: float ``[num_classes]`` class biases.
        labels: int64 ``[batch_size, num_true]`` target classes.
        inputs: float ``[batch_size, dim]`` activations.
        num_sampled: How many classes to sample per batch.
        num_classes: The number of classes.
        num_true: The number of target classes per example.
        sampled_values: A sampler's ``(sampled_candidates, true_expected_count,
            sampled_expected_count)``; default ``log_uniform_candidate_sampler`` with
            ``unique=True``.
        remove_accidental_hits: Whether to drop sampled classes that are the example's own.
        name: Ignored (TensorFlow's op name).

    Returns:
        A ``[batch_size]`` tensor of losses.

    Gradient: through the logits (the sampled values and expected counts get none).

    >>> import ferrotape as ft
    >>> sampled = ([1], [[1.0]], [1.0])  # class 1 drawn once, all expected counts 1
    >>> loss = ft.nn.nce_loss(ft.zeros([3, 2]), ft.zeros([3]), [[0]], ft.ones([1, 2]), 1, 3,
    ...                       sampled_values=sampled)
    >>> round(float(loss[0]), 4)  # two logits of 0: 2 * log(2)
    1.3863
    """
    del name
    parts = _sampled_logits(
        "nce_loss",
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true,
        sampled_values,
        None,
    )
    logits, targets = _finish(parts[:2], *parts[2:], num_true, remove_accidental_hits)
    return _core.reduce_sum(
        sigmoid_cross_entropy_with_logits(labels=targets, logits=logits), axis=1
    )


def sampled_softmax_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=True,
    seed=None,
    name="sampled_softmax_loss",
):
    """A softmax cross-entropy over each example's true classes and ``num_sampled`` sampled
    ones, an estimate of the full softmax loss for training with many classes.

    The logits are ``inputs @ weights[c] + biases[c] - log Q(c)`` over the true then the
    sampled classes ``c`` (``Q`` the sampler's expected count); the targets put
    ``1 / num_true`` on each true class.

    Args:
        weights: float ``[num_classes, dim]`` class embeddings, or a list of row shards.
        biases: float ``[num_classes]`` class biases.
        labels: int64 ``[batch_size, num_true]`` target classes.
        inputs: float ``[batch_size, dim]`` activations.
        num_sampled: How many classes to sample per batch.
        num_classes: The number of classes.
        num_true: The number of target classes per example.
        sampled_values: A sampler's ``(sampled_candidates, true_expected_count,
            sampled_expected_count)``; default ``log_uniform_candidate_sampler`` with
            ``unique=True``.
        remove_accidental_hits: Whether to drop sampled classes that are the example's own
            (default True, unlike ``nce_loss``).
        seed: The sampler's op seed when ``sampled_values`` is not given.
        name: Ignored (TensorFlow's op name).

    Returns:
        A ``[batch_size]`` tensor of losses.

    Gradient: through the logits (the sampled values and expected counts get none).

    >>> import ferrotape as ft
    >>> sampled = ([1, 2], [[1.0]], [1.0, 1.0])
    >>> loss = ft.nn.sampled_softmax_loss(ft.zeros([3, 2]), ft.zeros([3]), [[0]],
    ...                                   ft.ones([1, 2]), 2, 3, sampled_values=sampled)
    >>> round(float(loss[0]), 4)  # three equal logits: log(3)
    1.0986
    """
    del name
    parts = _sampled_logits(
        "sampled_softmax_loss",
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true,
        sampled_values,
        seed,
    )
    logits, targets = _finish(parts[:2], *parts[2:], num_true, remove_accidental_hits)
    return softmax_cross_entropy_with_logits(labels=_core.stop_gradient(targets), logits=logits)
