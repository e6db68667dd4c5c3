"""``LayerNormalization`` (Keras 3's
``keras.src.layers.normalization.layer_normalization``).
"""

from .... import _core
from ... import initializers, regularizers
from ..layer_helpers import _known_dim, _weight_settings
from .batch_normalization import _Normalization


class LayerNormalization(_Normalization):
    """Normalises each sample over ``axis`` (the last by default) with its own statistics,
    then scales by ``gamma`` and shifts by ``beta``."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(
        self,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        rms_scaling=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if rms_scaling:
            raise ValueError("LayerNormalization: rms_scaling=True is not supported")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else [int(axis)]
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.autocast = False  # Keras 3's: inputs keep their dtype, computed in float32

    def build(self, input_shape):
        rank = len(input_shape)
        for a in self.axis:
            if not -rank <= a < rank:
                raise ValueError(
                    f"LayerNormalization: axis {a} is out of range for input shape "
                    f"{tuple(input_shape)}"
                )
        shape = tuple(
            _known_dim(self, input_shape, a, f"axis {a}")
            for a in sorted(a % rank for a in self.axis)
        )
        self._add_scale_and_offset(shape)
        self._make_native()

    def _make_native(self):
        self._native = _core.keras.NativeLayer(
            "LayerNormalization", {"gamma": self.gamma, "beta": self.beta}
        )

    def call(self, inputs):
        outputs = self._native(self._in_float32(inputs), axis=self.axis, epsilon=self.epsilon)
        return self._in_compute_dtype(outputs)

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            **_weight_settings(self, "beta", "gamma"),
        }
