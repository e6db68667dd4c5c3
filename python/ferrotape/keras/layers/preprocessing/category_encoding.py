"""``CategoryEncoding`` (Keras 3's ``keras.src.layers.preprocessing.category_encoding``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.CategoryEncoding(num_tokens=4, output_mode="multi_hot")
>>> layer(ft.constant([[0, 1], [0, 0], [1, 2], [3, 1]])).numpy().tolist()
[[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
"""

from .... import _core
from ..layer import Layer
from ..layer_helpers import _is_int

_MODES = ("one_hot", "multi_hot", "count")


def _encode(inputs, depth, mode, dtype, count_weights=None):
    """Keras's encoding of integer ``inputs`` as ``depth``-wide vectors. ``one_hot``: one
    vector per entry (a trailing axis of size 1 is dropped); ``multi_hot``/``count``: one per
    sample (the last axis is the sample's tokens; a rank-1 input is one sample), 1 where a
    token occurs or its (weighted) count. Tokens outside ``[0, depth)`` add nothing."""
    inputs = _core.convert_to_tensor(inputs)
    rank = len(inputs.shape)
    if rank > 2:
        raise ValueError(
            f"When output_mode is not `'int'`, maximum supported output rank is 2. Received "
            f"output_mode {mode} and input shape {tuple(inputs.shape)}"
        )
    if mode == "one_hot":
        if rank == 0:
            inputs = _core.reshape(inputs, [1])
        elif rank == 2 and inputs.shape[-1] == 1:
            inputs = _core.squeeze(inputs, [-1])
        return _core.one_hot(_core.cast(inputs, "int32"), depth, dtype=dtype)
    if rank == 0:
        inputs = _core.reshape(inputs, [1])
    hot = _core.one_hot(_core.cast(inputs, "int32"), depth, dtype=dtype)  # [..., k, depth]
    if mode == "multi_hot":
        return _core.reduce_max(hot, [-2])
    if count_weights is not None:
        weights = _core.cast(_core.convert_to_tensor(count_weights), dtype)
        hot = hot * _core.expand_dims(weights, -1)
    return _core.reduce_sum(hot, [-2])


def _output_mode(layer, mode, allowed):
    if mode not in allowed:
        raise ValueError(
            f"{type(layer).__name__}: unknown output_mode. Expected one of {allowed}. "
            f"Received: output_mode={mode!r}"
        )
    return mode


class CategoryEncoding(Layer):
    """Integer category indices to ``num_tokens``-wide vectors: ``one_hot`` (one per index),
    ``multi_hot`` (1 for each index present in a sample) or ``count`` (how many times, or the
    sum of ``count_weights`` passed to the call). The output is in the layer's dtype and has
    no gradient."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if not _is_int(num_tokens) or num_tokens < 1:
            raise ValueError(
                f"`num_tokens` must be set to a positive int. Received: num_tokens={num_tokens!r}"
            )
        if sparse:
            raise ValueError("CategoryEncoding: sparse=True is not supported (tensors are dense)")
        self.num_tokens = int(num_tokens)
        self.output_mode = _output_mode(self, output_mode, _MODES)
        self.sparse = False

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError(
                "`count_weights` is not used when `output_mode` is not `'count'`. "
                f"Received `count_weights={count_weights}`."
            )
        return _encode(inputs, self.num_tokens, self.output_mode, self.compute_dtype, count_weights)

    def get_config(self):
        return {
            **super().get_config(),
            "num_tokens": self.num_tokens,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }
