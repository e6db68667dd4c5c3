"""``MultiHeadAttention`` (Keras 3's
``keras.src.layers.attention.multi_head_attention``), for ``[batch, steps, features]`` inputs.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
>>> layer(ft.ones([2, 3, 8]), ft.ones([2, 5, 6])).shape
TensorShape([2, 3, 8])
>>> [w.name for w in layer.weights][:2]
['query/kernel:0', 'query/bias:0']
"""

import math
import string

from .... import _core, einsum
from ... import initializers, regularizers
from ... import random as keras_random
from ..activations.softmax import Softmax
from ..core.einsum_dense import EinsumDense
from ..layer import Layer
from ..layer_helpers import _float_arg, _is_int
from ..layer_masking import get_keras_mask, set_keras_mask


def _keep_mask(tq, tv, query_mask, value_mask, key_mask, attention_mask, causal):
    """Keras's combined ``[batch, Tq, Tv]`` keep mask of the attention layers, or None."""
    masks = []
    if query_mask is not None:
        masks.append(_core.expand_dims(_core.cast(query_mask, "bool"), -1))
    for m in (value_mask, key_mask):
        if m is not None:
            masks.append(_core.expand_dims(_core.cast(m, "bool"), -2))
    if causal:
        rows = _core.reshape(_core.range(tq), [1, tq, 1])
        masks.append(_core.greater_equal(rows, _core.reshape(_core.range(tv), [1, 1, tv])))
    if attention_mask is not None:
        masks.append(_core.cast(attention_mask, "bool"))
    if not masks:
        return None
    combined = masks[0]
    for m in masks[1:]:
        combined = _core.logical_and(combined, m)
    return combined


def _as_dot_product_attention(weights, mask):
    """Keras 3 computes attention without dropout or returned scores with
    ``ops.dot_product_attention``, where a query step with every key masked weighs all keys
    equally (its Softmax path, taken otherwise, gives it no weight)."""
    if mask is None:
        return weights
    empty = _core.logical_not(_core.reduce_any(mask, [-1], keepdims=True))
    uniform = _core.ones_like(weights) / float(weights.shape[-1])
    return _core.select(empty, uniform, weights)


class MultiHeadAttention(Layer):
    """Attention in ``num_heads`` heads (Vaswani et al. 2017): ``query``, ``key`` (default:
    ``value``) and ``value`` are projected to ``[batch, steps, num_heads, key_dim]`` (values to
    ``value_dim``) by the ``EinsumDense`` sublayers ``query``, ``key`` and ``value``; each head
    computes ``softmax(q k^T / sqrt(key_dim)) v`` (masked, with dropout on the weights in
    training), and ``attention_output`` projects the heads back to ``output_shape`` (the
    query's feature size by default). The call is ``layer(query, value, key=None,
    query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
    return_attention_scores=False, training=None, use_causal_mask=False)``; the scores are
    ``[batch, num_heads, Tq, Tv]``.

    As in Keras 3, the query's mask is the one its tensor carries (a ``query_mask`` argument is
    replaced by it; ``value_mask``/``key_mask`` default to the masks ``value``/``key`` carry):
    a masked query step attends to nothing and outputs the output projection's bias, and the
    output carries the query's mask."""

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
        num_heads,
        key_dim,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
        flash_attention=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        seed=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        for what, value in (("num_heads", num_heads), ("key_dim", key_dim)):
            if not _is_int(value) or value < 1:
                raise ValueError(
                    f"MultiHeadAttention: {what} must be a positive int. Received: {what}={value!r}"
                )
        if value_dim is not None and (not _is_int(value_dim) or value_dim < 1):
            raise ValueError(
                f"MultiHeadAttention: value_dim must be a positive int or None. Received: "
                f"value_dim={value_dim!r}"
            )
        if attention_axes not in (None, 1, -2, (1,), (-2,), [1], [-2]):
            raise ValueError(
                "MultiHeadAttention: only attention over the steps axis of [batch, steps, "
                f"features] inputs is supported. Received: attention_axes={attention_axes!r}"
            )
        if flash_attention:
            raise ValueError("MultiHeadAttention: flash_attention=True is not supported")
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = self.key_dim if value_dim is None else int(value_dim)
        self.dropout = _float_arg("MultiHeadAttention", "dropout", dropout)
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"MultiHeadAttention: dropout must be in [0, 1). Received: {dropout}")
        self.use_bias = bool(use_bias)
        if isinstance(output_shape, int):
            output_shape = (output_shape,)
        self._output_shape_arg = None if output_shape is None else tuple(output_shape)
        self.attention_axes = attention_axes
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
        # The projections need the value's and key's shapes too, which the first call has.
        if len(query_shape) != 3:
            raise ValueError(
                f"MultiHeadAttention: expected a query of rank 3 [batch, steps, features], "
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
        for what, t in (("value", value), ("key", key)):
            if len(t.shape) != 3:
                raise ValueError(
                    f"MultiHeadAttention: expected a {what} of rank 3 [batch, steps, "
                    f"features], received shape {tuple(t.shape)}"
                )
        heads = self.num_heads
        self.query_dense = self._dense("query", "abc,cde->abde", (None, heads, self.key_dim), "de")
        self.key_dense = self._dense("key", "abc,cde->abde", (None, heads, self.key_dim), "de")
        self.value_dense = self._dense(
            "value", "abc,cde->abde", (None, heads, self.value_dim), "de"
        )
        output = self._output_shape_arg or (query.shape[-1],)
        letters = string.ascii_lowercase[4 : 4 + len(output)]
        self.output_dense = self._dense(
            "attention_output", f"abcd,cd{letters}->ab{letters}", (None, *output), letters
        )
        self.query_dense.build(tuple(query.shape))
        self.key_dense.build(tuple(key.shape))
        self.value_dense.build(tuple(value.shape))
        self.output_dense.build((query.shape[0], query.shape[1], heads, self.value_dim))
        self._projections_built = True

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
        # Keras 3 handles the masks here, and takes them off the inputs so that the
        # projections do not see them.
        query_mask = get_keras_mask(query)
        for tensor in (query, value, key):
            set_keras_mask(tensor, None)
        if value.dtype != query.dtype:
            value, key = _core.cast(value, query.dtype), _core.cast(key, query.dtype)
        if not self._projections_built:
            self._build_projections(query, value, key)
        q = self.query_dense(query) * (1.0 / math.sqrt(self.key_dim))
        k = self.key_dense(key)
        v = self.value_dense(value)
        scores = einsum("aecd,abcd->acbe", k, q)  # [batch, heads, Tq, Tv]
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
            mask = _core.expand_dims(mask, -3)  # one mask for every head
        weights = self._softmax(scores, mask=mask)
        if self.dropout == 0 and not return_attention_scores:
            weights = _as_dot_product_attention(weights, mask)
        dropped = weights
        if training and self.dropout > 0:
            dropped = keras_random.dropout(weights, self.dropout, seed=self.seed_generator)
        heads = einsum("acbe,aecd->abcd", dropped, v)  # [batch, Tq, heads, value_dim]
        outputs = self.output_dense(heads)
        if query_mask is not None:
            set_keras_mask(outputs, query_mask)
        return (outputs, weights) if return_attention_scores else outputs

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "key_dim": self.key_dim,
            "value_dim": self.value_dim,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
            "output_shape": self._output_shape_arg,
            "attention_axes": self.attention_axes,
            "seed": self.seed,
        }
