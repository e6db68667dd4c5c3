"""``Dense`` (Keras 3's ``keras.src.layers.core.dense``), and how the built-in layers compute.

Each built-in layer follows Keras's protocol through :class:`~ferrotape.keras.layers.Layer` (names,
``build`` on the first call, ``add_weight`` with initializers and regularizers) and, once built,
hands its variables to its native form, ``ferrotape._core.keras.NativeLayer`` (the
``ferrotape-keras`` crate), which computes the whole call in one Rust call. The layer passes
its settings (``activation``, ``rate``, ``momentum``...) on every call, so that changing one
after the build takes effect, as in Keras. The other layers (``Flatten``, pooling, merging,
the 1-D and 3-D convolutions, the recurrent and attention layers, ...) are written in
ferrotape ops, whose gradients they inherit.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.Dense(3, activation="relu")
>>> layer(ft.ones([2, 4])).shape
TensorShape([2, 3])
>>> [w.shape.as_list() for w in layer.weights]
[[4, 3], [3]]
"""

import reprlib

from ... import activations, initializers, regularizers
from ..layer_helpers import _is_int, _KernelLayer, _known_dim, _weight_settings


class Dense(_KernelLayer):
    """``activation(inputs @ kernel + bias)`` on the last axis of ``inputs``."""

    # Keras 3's attribute for the kernel, the name checkpoints give it (ferrotape.trackable).
    _checkpoint_names = {"kernel": "_kernel"}

    _supports_masking = True  # as Keras 3: the input's mask passes through

    _native_class = "Dense"

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not _is_int(units) or units < 1:
            raise ValueError(
                f"{type(self).__name__}: received an invalid value for `units`, expected a "
                f"positive integer. Received: units={reprlib.repr(units)}"
            )
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def build(self, input_shape):
        features = _known_dim(self, input_shape, -1, "last dimension")
        self._add_kernel_and_bias((features, self.units), self.units)

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            **_weight_settings(self, "kernel", "bias"),
        }
