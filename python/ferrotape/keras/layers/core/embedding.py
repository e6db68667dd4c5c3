"""``Embedding`` (Keras 3's ``keras.src.layers.core.embedding``)."""

import reprlib

from .... import _core
from ... import initializers, regularizers
from ..layer import Layer
from ..layer_helpers import _is_int, _weight_settings


class Embedding(Layer):
    """Maps integer ids in ``[0, input_dim)`` to rows of an ``[input_dim, output_dim]`` table.
    With ``mask_zero=True`` the id 0 is padding: the output's mask (``compute_mask``) is
    ``ids != 0``, which the layers after it (RNNs, pooling, attention) honour."""

    # Keras 3's attribute for the table, the name checkpoints give it (ferrotape.trackable).
    _checkpoint_names = {"embeddings": "_embeddings"}

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        **kwargs,
    ):
        kwargs.pop("input_length", None)  # Keras 2's argument: the shape comes from the call
        super().__init__(**kwargs)
        if not (_is_int(input_dim) and _is_int(output_dim) and input_dim > 0 and output_dim > 0):
            raise ValueError(
                "Embedding: both `input_dim` and `output_dim` should be positive integers. "
                f"Received: input_dim={reprlib.repr(input_dim)} and "
                f"output_dim={reprlib.repr(output_dim)}"
            )
        self.input_dim = int(input_dim)
        self.output_dim = int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        self._autocast = False  # ids stay integers

    def build(self, input_shape):
        del input_shape
        self.embeddings = self.add_weight(
            shape=(self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint,
            # Looked up in float32 and the rows cast (see `call`), never read as float16: the
            # lookup's gradient then sums repeated ids in float32, as TensorFlow's does.
            autocast=False,
            name="embeddings",
        )
        self._make_native()

    def _make_native(self):
        self._native = _core.keras.NativeLayer("Embedding", {"embeddings": self.embeddings})

    def call(self, inputs):
        # The rows in the compute dtype, as Keras's (under "mixed_float16", float16 rows of
        # the float32 table).
        return _core.cast(self._native(inputs), self._compute_dtype_object)

    def compute_mask(self, inputs, mask=None):
        """The padding mask: ``inputs != 0`` with ``mask_zero``, else None.

        Args:
            inputs: The integer ids.
            mask: Ignored (an input mask is replaced).

        Returns:
            A boolean tensor of the ids' shape, or None.
        """
        del mask
        if not self.mask_zero:
            return None
        return _core.not_equal(inputs, 0)

    def get_config(self):
        return {
            **super().get_config(),
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
            "mask_zero": self.mask_zero,
            **_weight_settings(self, "embeddings"),
        }
