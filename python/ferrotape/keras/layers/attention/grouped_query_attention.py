"""``GroupedQueryAttention``, also exported as ``GroupQueryAttention`` (Keras 3's
``keras.src.layers.attention.grouped_query_attention``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.GroupedQueryAttention(4, num_query_heads=4, num_key_value_heads=2)
>>> layer(ft.ones([2, 3, 8]), ft.ones([2, 5, 6])).shape
TensorShape([2, 3, 8])
"""

import math

from .... import _core, einsum
from ... import initializers, regularizers
from ... import random as keras_random
from ..activations.softmax import Softmax
from ..core.einsum_dense import EinsumDense
from ..layer import Layer
from ..layer_helpers import _float_arg, _is_int
from .multi_head_attention import _as_dot_product_attention, _keep_mask


class GroupedQueryAttention(Layer):
    """Attention with fewer key/value heads than query heads (Ainslie et al. 2023):
    ``query`` is projected to ``num_query_heads`` heads of ``head_dim``, ``key`` and
    ``value`` (default: ``value``) to ``num_key_value_heads``, each of which serves
    ``num_query_heads / num_key_value_heads`` consecutive query heads; then
    ``softmax(q k^T / sqrt(head_dim)) v`` per head (masked as ``MultiHeadAttention``, with
    dropout on the weights in training) and the ``attention_output`` projection back to the
    query's feature size. The weights are the ``EinsumDense`` sublayers ``query``, ``key``,
    ``value`` and ``attention_output``, Keras's."""

    # Keras 3's attributes for the projections, the names checkpoints give them
    # (ferrotape.trackable).
    _checkpoint_names = {
        "query_dense": "_query_dense",
        "key_dense": "_key_dense",
        "value_dense": "_value_dense",
        "output_dense": "_output_dense",
    }

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(
        self,
        head_dim,
        num_query_heads,
        num_key_value_heads,
        dropout=0.0,
        use_bias=True,
        sliding_window=None,
        flash_attention=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        use_gate=False,
        seed=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        for what, value in (
            ("head_dim", head_dim),
            ("num_query_heads", num_query_heads),
            ("num_key_value_heads", num_key_value_heads),
        ):
            if not _is_int(value) or value < 1:
                raise ValueError(
                    f"GroupedQueryAttention: {what} must be a positive int. Received: "
                    f"{what}={value!r}"
                )
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError(
                "`num_query_heads` must be divisible by `num_key_value_heads`. Received: "
                f"num_query_heads={num_query_heads}, num_key_value_heads={num_key_value_heads}"
            )
        for what, value in (("sliding_window", sliding_window), ("use_gate", use_gate)):
            if value:
                raise ValueError(f"GroupedQueryAttention: {what} is not supported yet")
        if flash_attention:
            raise ValueError("GroupedQueryAttention: flash_attention=True is not supported")
        self.head_dim = int(head_dim)
        self.num_query_heads = int(num_query_heads)
        self.num_key_value_heads = int(num_key_value_heads)
        self.num_repeats = self.num_query_heads // self.num_key_value_heads
        self.dropout = _float_arg("GroupedQueryAttention", "dropout", dropout)
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(
                f"GroupedQueryAttention: dropout must be in [0, 1). Received: {dropout}"
            )
        self.use_bias = bool(use_bias)
        self.use_gate = False
        self.sliding_window = None
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)
        self._softmax = Softmax(axis=-1, dtype=self.dtype_policy.name)
        self._projections_built = False

    def build(self, query_shape):
        if len(query_shape) != 3:
            raise ValueError(
                "GroupedQueryAttention: expected a query of rank 3 [batch, steps, features], "
                f"received shape {tuple(query_shape)}"
            )

    def _dense(self, name, equation, output_shape, bias_axes):
        return EinsumDense(
            equation,
            output_shape=output_shape,
            bias_axes=bias_axes if self.use_bias else None,
            kernel_initializer=self.kernel_initializer,
            bias_initializer=self.bias_initializer,
            kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            kernel_constraint=self.kernel_constraint,
            bias_constraint=self.bias_constraint,
            dtype=self.dtype_policy.name,
            name=name,
        )

    def _build_projections(self, query, value, key):
        heads, kv, dim = self.num_query_heads, self.num_key_value_heads, self.head_dim
        self.query_dense = self._dense("query", "bqm,muh->bquh", (None, heads, dim), "uh")
        self.key_dense = self._dense("key", "bkm,mvh->bkvh", (None, kv, dim), "vh")
        self.value_dense = self._dense("value", "bkm,mvh->bkvh", (None, kv, dim), "vh")
        features = query.shape[-1]
        self.output_dense = self._dense("attention_output", "bquh,uhm->bqm", (None, features), "m")
        self.query_dense.build(tuple(query.shape))
        self.key_dense.build(tuple(key.shape))
        self.value_dense.build(tuple(value.shape))
        self.output_dense.build((query.shape[0], query.shape[1], heads, dim))
        self._projections_built = True

    def _repeat_heads(self, x):
        """``[b, s, kv, h] -> [b, s, kv * repeats, h]``, each head repeated in place."""
        b, s, kv, h = x.shape
        x = _core.broadcast_to(_core.expand_dims(x, 3), [b, s, kv, self.num_repeats, h])
        return _core.reshape(x, [b, s, kv * self.num_repeats, h])

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
    ):
        value = _core.convert_to_tensor(value)
        key = value if key is None else _core.convert_to_tensor(key)
        if value.dtype != query.dtype:
            value, key = _core.cast(value, query.dtype), _core.cast(key, query.dtype)
        for what, t in (("value", value), ("key", key)):
            if len(t.shape) != 3:
                raise ValueError(
                    f"GroupedQueryAttention: expected a {what} of rank 3 [batch, steps, "
                    f"features], received shape {tuple(t.shape)}"
                )
        if not self._projections_built:
            self._build_projections(query, value, key)
        q = self.query_dense(query) * (1.0 / math.sqrt(self.head_dim))
        k = self._repeat_heads(self.key_dense(key))
        v = self._repeat_heads(self.value_dense(value))
        scores = einsum("bquh,bkuh->buqk", q, k)
        mask = _keep_mask(
            query.shape[1],
            value.shape[1],
            query_mask,
            value_mask,
            key_mask,
            attention_mask,
            use_causal_mask,
        )
        if mask is not None:
            mask = _core.expand_dims(mask, -3)
        weights = self._softmax(scores, mask=mask)
        if self.dropout == 0 and not return_attention_scores:
            weights = _as_dot_product_attention(weights, mask)
        dropped = weights
        if training and self.dropout > 0:
            dropped = keras_random.dropout(weights, self.dropout, seed=self.seed_generator)
        outputs = self.output_dense(einsum("buqk,bkuh->bquh", dropped, v))
        return (outputs, weights) if return_attention_scores else outputs

    def get_config(self):
        return {
            **super().get_config(),
            "head_dim": self.head_dim,
            "num_query_heads": self.num_query_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "use_bias": self.use_bias,
            "use_gate": self.use_gate,
            "sliding_window": self.sliding_window,
            "dropout": self.dropout,
            "seed": self.seed,
        }


GroupQueryAttention = GroupedQueryAttention
