"""Connectionist temporal classification (Graves et al., 2006): the negative log-likelihood of
a label sequence under per-step class scores, summed over every alignment, by the forward
(alpha) recursion in log space. ``losses.ctc``/``CTC`` and ``backend.ctc_batch_cost`` use it;
gradients come from differentiating the recursion. Keras 3 keeps ``ctc`` in
``keras.src.losses.losses``; the recursion is TF's ``tf.nn.ctc_loss``.

>>> import numpy as np, ferrotape as ft
>>> logits = np.zeros((1, 2, 2), np.float32)  # two steps, classes {blank, a}, uniform
>>> round(float(ft.keras.losses.ctc([[1]], logits)[0]), 4)  # paths "a-", "-a", "aa": 3/4
0.2877
"""

import numpy as np

import ferrotape as ft

from .loss import Loss
from .losses import LossFunctionWrapper

# Stands in for log(0): exp() of it underflows to 0 and, unlike -inf, it keeps every
# gradient finite through the log-sum-exps.
_LOG_ZERO = -1e30


def _logsumexp(*terms):
    peak = ft.stop_gradient(ft.reduce_max(ft.stack(terms), axis=0))
    total = ft.add_n([ft.exp(t - peak) for t in terms])
    return peak + ft.math.log(total)


def ctc_negative_log_likelihood(labels, label_length, log_probs, input_length, blank):
    """``-log p(labels | log_probs)`` per sample.

    Args:
        labels: int array ``(batch, max_label_length)``; entries past ``label_length``
            are ignored.
        label_length: int array ``(batch,)``.
        log_probs: ``(batch, time, classes)`` log-probabilities (a tensor).
        input_length: int array ``(batch,)``: the steps of each sample that count.
        blank: the blank class index.

    Returns:
        A ``(batch,)`` tensor.
    """
    labels = np.asarray(labels, dtype=np.int64)
    label_length = np.asarray(label_length, dtype=np.int64).reshape(-1)
    input_length = np.asarray(input_length, dtype=np.int64).reshape(-1)
    batch, steps, classes = log_probs.shape
    width = labels.shape[1] if labels.ndim == 2 else 0
    # The extended sequence: blank, l1, blank, l2, ..., blank (2L + 1 states).
    states = 2 * width + 1
    extended = np.full((batch, states), blank, dtype=np.int64)
    for b in range(batch):
        extended[b, 1 : 2 * label_length[b] : 2] = labels[b, : label_length[b]]
    # A state may be entered from two back when it is a label unlike the one two back.
    skip = np.zeros((batch, states), dtype=bool)
    skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    valid = np.arange(states)[None, :] < (2 * label_length + 1)[:, None]
    dtype = log_probs.dtype
    # emissions[b, t, s] = log_probs[b, t, extended[b, s]]
    one_hot = ft.constant(np.eye(classes)[extended], dtype=dtype)  # (batch, states, classes)
    emissions = ft.matmul(log_probs, one_hot, transpose_b=True)
    log_zero = ft.constant(_LOG_ZERO, dtype=dtype)
    valid_t = ft.constant(valid)
    skip_t = ft.constant(skip)
    start = np.zeros((batch, states), dtype=bool)
    start[:, :2] = True
    alpha = ft.where(
        ft.constant(start & valid), emissions[:, 0, :], ft.fill([batch, states], log_zero)
    )
    pad = ft.fill([batch, 1], log_zero)
    alphas = [alpha]
    for t in range(1, steps):
        from_one = ft.concat([pad, alpha[:, :-1]], axis=1)
        from_two = ft.concat([pad, pad, alpha[:, :-2]], axis=1)
        from_two = ft.where(skip_t, from_two, ft.fill([batch, states], log_zero))
        alpha = _logsumexp(alpha, from_one, from_two) + emissions[:, t, :]
        alpha = ft.where(valid_t, alpha, ft.fill([batch, states], log_zero))
        alphas.append(alpha)
    # Each sample ends at its own last step, in the last or the second-to-last state.
    at_end = ft.reduce_sum(
        ft.stack(alphas, axis=1)
        * ft.constant(np.eye(steps)[input_length - 1][:, :, None], dtype=dtype),
        axis=1,
    )
    last = 2 * label_length
    final = np.zeros((batch, states))
    final[np.arange(batch), last] = 1.0
    second = np.zeros((batch, states))
    second[np.arange(batch), np.maximum(last - 1, 0)] = 1.0
    end_last = ft.reduce_sum(at_end * ft.constant(final, dtype=dtype), axis=1)
    end_second = ft.reduce_sum(at_end * ft.constant(second, dtype=dtype), axis=1)
    # An empty label sequence has one final state only.
    end_second = ft.where(ft.constant(label_length > 0), end_second, ft.fill([batch], log_zero))
    return -_logsumexp(end_last, end_second)


def ctc(y_true, y_pred):
    """The CTC loss of integer label sequences against per-step logits, one value per
    sample. Class 0 is the blank and also pads ``y_true``: a sample's labels are its nonzero
    entries' count from the start, and every step of ``y_pred`` counts.

    Args:
        y_true: int labels ``(batch, max_label_length)``, padded with 0.
        y_pred: logits ``(batch, time, classes)`` (a log-softmax is applied).

    Returns:
        A ``(batch,)`` tensor.
    """
    y_pred = ft.convert_to_tensor(y_pred)
    labels = np.asarray(y_true.numpy() if hasattr(y_true, "numpy") else y_true)
    if labels.ndim != 2:
        raise ValueError(
            f"ctc: targets are expected to be a 2D tensor. Received: y_true.shape={labels.shape}"
        )
    if len(y_pred.shape) != 3:
        raise ValueError(
            "ctc: predictions are expected to be a 3D tensor. Received: "
            f"y_pred.shape={tuple(y_pred.shape)}"
        )
    labels = labels.astype(np.int64)
    batch, steps = y_pred.shape[0], y_pred.shape[1]
    return ctc_negative_log_likelihood(
        labels,
        (labels != 0).sum(axis=-1),
        ft.nn.log_softmax(y_pred, axis=-1),
        np.full(batch, steps),
        blank=0,
    )


class CTC(LossFunctionWrapper):
    """``ctc`` as a loss class."""

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(ctc, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)
