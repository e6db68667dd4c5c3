"""``AdditiveAttention`` (Keras 3's ``keras.src.layers.attention.additive_attention``):
Bahdanau-style attention.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.AdditiveAttention()
>>> layer([ft.ones([2, 3, 4]), ft.ones([2, 5, 4])]).shape
TensorShape([2, 3, 4])
>>> layer.scale.shape
TensorShape([4])
"""

from .... import _core
from ..layer_helpers import _known_dim
from .attention import Attention


class AdditiveAttention(Attention):
    """``Attention`` with the scores ``sum(scale * tanh(query_i + key_j))`` over the feature
    axis, ``scale`` a learned vector ``[dim]`` (glorot-uniform initialised; 1 without
    ``use_scale``). The call's masks, causal mask, dropout and ``return_attention_scores`` are
    ``Attention``'s."""

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        self.scale = None
        self.concat_score_weight = None
        if self.use_scale:
            dim = _known_dim(self, input_shape[0], -1, "feature dimension of the query")
            self.scale = self.add_weight(name="scale", shape=(dim,), initializer="glorot_uniform")

    def _calculate_scores(self, query, key):
        pairs = _core.tanh(_core.expand_dims(query, -2) + _core.expand_dims(key, -3))
        if self.scale is not None:
            pairs = pairs * self.scale
        return _core.reduce_sum(pairs, [-1])

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config
