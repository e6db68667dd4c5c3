"""``ReversibleEmbedding`` (Keras 3's ``keras.src.layers.core.reversible_embedding``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.ReversibleEmbedding(10, 4)
>>> hidden = layer(ft.constant([[1, 2, 3]]))
>>> layer(hidden, reverse=True).shape
TensorShape([1, 3, 10])
"""

from .... import _core, linalg
from ..layer_helpers import _float_arg
from .embedding import Embedding


class ReversibleEmbedding(Embedding):
    """An ``Embedding`` that also projects back, as language models tie their input and output
    embeddings: ``layer(ids)`` looks the ids up; ``layer(hidden, reverse=True)`` gives logits
    ``hidden @ embeddings^T`` (or ``@ reverse_embeddings``, a separate
    ``[output_dim, input_dim]`` weight, with ``tie_weights=False``), soft-capped to
    ``logit_soft_cap * tanh(logits / logit_soft_cap)`` when that is set."""

    def __init__(
        self,
        input_dim,
        output_dim,
        tie_weights=True,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        reverse_dtype=None,
        logit_soft_cap=None,
        **kwargs,
    ):
        super().__init__(
            input_dim,
            output_dim,
            embeddings_initializer=embeddings_initializer,
            embeddings_regularizer=embeddings_regularizer,
            embeddings_constraint=embeddings_constraint,
            mask_zero=mask_zero,
            **kwargs,
        )
        self.tie_weights = bool(tie_weights)
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = (
            None
            if logit_soft_cap is None
            else _float_arg("ReversibleEmbedding", "logit_soft_cap", logit_soft_cap)
        )

    def build(self, input_shape=None):
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight(
                shape=(self.output_dim, self.input_dim),
                initializer=self.embeddings_initializer,
                name="reverse_embeddings",
            )

    def call(self, inputs, reverse=False):
        if not reverse:
            return super().call(inputs)
        kernel = (
            _core.transpose(self.embeddings, [1, 0])
            if self.tie_weights
            else self.reverse_embeddings
        )
        inputs = _core.convert_to_tensor(inputs)
        dtype = self.reverse_dtype or self.compute_dtype
        logits = linalg.matmul(_core.cast(inputs, dtype), _core.cast(kernel, dtype))
        if self.logit_soft_cap is not None:
            logits = _core.tanh(logits / self.logit_soft_cap) * self.logit_soft_cap
        return logits

    def get_config(self):
        return {
            **super().get_config(),
            "tie_weights": self.tie_weights,
            "reverse_dtype": self.reverse_dtype,
            "logit_soft_cap": self.logit_soft_cap,
        }
