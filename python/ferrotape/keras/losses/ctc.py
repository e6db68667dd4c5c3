"""Connectionist temporal classification (Graves et al., 2006): the negative log-likelihood of
a label sequence under per-step class scores, summed over every alignment, by the forward
(alpha) recursion in log space, shared with ``ft.nn.ctc_loss`` (``ferrotape/_nn_ctc.py``);
``losses.ctc``/``CTC`` and ``backend.ctc_batch_cost`` use it, and gradients come from
differentiating the recursion. Keras 3 keeps ``ctc`` in ``keras.src.losses.losses``.

>>> import numpy as np, ferrotape as ft
>>> logits = np.zeros((1, 2, 2), np.float32)  # two steps, classes {blank, a}, uniform
>>> round(float(ft.keras.losses.ctc([[1]], logits)[0]), 4)  # paths "a-", "-a", "aa": 3/4
0.2877
"""

import numpy as np

import ferrotape as ft
from ferrotape._nn_ctc import ctc_negative_log_likelihood

from .loss import Loss
from .losses import LossFunctionWrapper


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
