"""``Attention`` (Keras 3's ``keras.src.layers.attention.attention``): Luong-style
dot-product attention.

>>> import ferrotape as ft
>>> query, value = ft.ones([2, 3, 4]), ft.ones([2, 5, 4])
>>> ft.keras.layers.Attention()([query, value]).shape
TensorShape([2, 3, 4])
"""

from .... import _core, linalg, nn
from ... import random as keras_random
from ..layer import Layer
from ..layer_helpers import _float_arg


def _causal_mask(tq, tv):
    """``[1, tq, tv]``: query step i may attend to value steps j <= i."""
    rows = _core.reshape(_core.range(tq), [tq, 1])
    cols = _core.reshape(_core.range(tv), [1, tv])
    return _core.expand_dims(_core.greater_equal(rows, cols), 0)


class Attention(Layer):
    """Dot-product attention over ``[query, value]`` or ``[query, value, key]`` (``key``
    defaults to ``value``), each ``[batch, steps, dim]``: ``scores = query @ key^T`` (times a
    learned scalar ``scale`` with ``use_scale``), or with ``score_mode="concat"``
    ``concat_score_weight * sum(tanh(scale * (query_i + key_j)))``; then
    ``softmax(scores) @ value``, ``[batch, Tq, dim]``. The call takes ``mask=[query_mask,
    value_mask]`` (``[batch, T]`` booleans; masked values get no weight, masked query steps
    output 0), ``use_causal_mask``, ``return_attention_scores`` and ``training`` (dropout of the
    attention weights)."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(
                "Invalid value for argument score_mode. Expected one of {'dot', 'concat'}. "
                f"Received: score_mode={score_mode}"
            )
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode
        self.dropout = _float_arg(type(self).__name__, "dropout", dropout)
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(
                f"{type(self).__name__}: dropout must be in [0, 1). Received: dropout={dropout}"
            )
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        self.scale = None
        self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(
                name="concat_score_weight", shape=(), initializer="ones"
            )

    def _calculate_scores(self, query, key):
        if self.score_mode == "dot":
            scores = linalg.matmul(query, key, transpose_b=True)
            return scores if self.scale is None else scores * self.scale
        pairs = _core.expand_dims(query, -2) + _core.expand_dims(key, -3)
        if self.scale is not None:
            pairs = pairs * self.scale
        return self.concat_score_weight * _core.reduce_sum(_core.tanh(pairs), [-1])

    def _apply_scores(self, scores, value, scores_mask, training):
        if scores_mask is not None:
            # Masked scores drop far below the rest, so softmax gives them ~0 weight.
            low = 65504.0 if scores.dtype.name == "float16" else 1.0e9
            if len(scores_mask.shape) == 2:
                scores_mask = _core.expand_dims(scores_mask, -2)
            scores = _core.select(scores_mask, scores, scores - low)
        weights = nn.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            weights = keras_random.dropout(weights, self.dropout, seed=self.seed_generator)
        return linalg.matmul(weights, value), weights

    def call(
        self,
        inputs,
        mask=None,
        training=False,
        return_attention_scores=False,
        use_causal_mask=False,
    ):
        self._validate_inputs(inputs, mask)
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        query_mask = value_mask = None
        if mask is not None:
            query_mask, value_mask = (
                None if m is None else _core.cast(m, "bool") for m in mask[:2]
            )
        scores = self._calculate_scores(query, key)
        scores_mask = value_mask
        if use_causal_mask:
            causal = _causal_mask(scores.shape[-2], scores.shape[-1])
            scores_mask = (
                causal
                if value_mask is None
                else _core.logical_and(_core.expand_dims(value_mask, -2), causal)
            )
        outputs, weights = self._apply_scores(scores, value, scores_mask, training)
        if query_mask is not None:
            outputs = _core.select(
                _core.expand_dims(query_mask, -1), outputs, _core.zeros_like(outputs)
            )
        return (outputs, weights) if return_attention_scores else outputs

    def compute_mask(self, inputs, mask=None):
        """The query mask, which the output keeps.

        Args:
            inputs: ``[query, value]`` or ``[query, value, key]``.
            mask: ``[query_mask, value_mask]`` or None.

        Returns:
            ``mask[0]`` as a tensor, or None.
        """
        self._validate_inputs(inputs, mask)
        if mask is None or mask[0] is None:
            return None
        return _core.convert_to_tensor(mask[0])

    def _validate_inputs(self, inputs, mask=None):
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(
                f"{name} layer must be called on a list of inputs, namely [query, value] or "
                f"[query, value, key]. Received: inputs={inputs}."
            )
        if not 2 <= len(inputs) <= 3:
            raise ValueError(
                f"{name} layer accepts inputs list of length 2 or 3, namely [query, value] "
                f"or [query, value, key]. Received length: {len(inputs)}."
            )
        if mask is not None and (not isinstance(mask, (list, tuple)) or not 2 <= len(mask) <= 3):
            raise ValueError(
                f"{name} layer mask must be a list of length 2 or 3, namely [query_mask, "
                f"value_mask]. Received: mask={mask}."
            )

    def get_config(self):
        return {
            **super().get_config(),
            "use_scale": self.use_scale,
            "score_mode": self.score_mode,
            "dropout": self.dropout,
            "seed": self.seed,
        }
