"""``BatchNormalization`` (Keras 3's
``keras.src.layers.normalization.batch_normalization``).
"""

from .... import _core
from ... import initializers, regularizers
from ..layer import Layer
from ..layer_helpers import _float_arg, _is_int, _known_dim, _weight_settings


class _Normalization(Layer):
    """What the normalization layers share: the optional scale ``gamma`` and offset ``beta``,
    created in that order (Keras's), and Keras's mixed precision: statistics in at least
    float32 (half-precision ones overflow), with float32 weights read as stored (created with
    ``autocast=False``), and outputs in the compute dtype."""

    @staticmethod
    def _in_float32(inputs):
        """The inputs in at least float32 (Keras's ``result_type(inputs.dtype, "float32")``):
        float64 ones as they are, any other as float32."""
        return (
            inputs if inputs.dtype.name in ("float32", "float64") else _core.cast(inputs, "float32")
        )

    def _in_compute_dtype(self, outputs):
        return _core.cast(outputs, self._compute_dtype_object)

    def _add_scale_and_offset(self, shape):
        self.gamma = None
        self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                shape=shape,
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
                autocast=False,
                name="gamma",
            )
        if self.center:
            self.beta = self.add_weight(
                shape=shape,
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
                autocast=False,
                name="beta",
            )


class BatchNormalization(_Normalization):
    """Normalises each feature along ``axis``: with the batch's mean and (biased) variance when
    ``training=True``, updating the moving averages as ``moving * momentum + batch * (1 -
    momentum)``; with the moving averages otherwise (Keras 3: calls without ``training`` run in
    inference mode)."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        synchronized=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise ValueError(
                    f"BatchNormalization: only one axis is supported. Received: axis={axis!r}"
                )
            axis = axis[0]
        if not _is_int(axis):
            raise ValueError(f"BatchNormalization: axis must be an int. Received: axis={axis!r}")
        self.axis = int(axis)
        self.momentum = _float_arg("BatchNormalization", "momentum", momentum)
        self.epsilon = _float_arg("BatchNormalization", "epsilon", epsilon)
        if not 0.0 <= self.momentum <= 1.0:
            raise ValueError(
                f"BatchNormalization: momentum must be in [0, 1]. Received: momentum={momentum!r}"
            )
        if not self.epsilon > 0:  # NaN too
            raise ValueError(
                f"BatchNormalization: epsilon must be positive. Received: epsilon={epsilon!r}"
            )
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        del synchronized  # one device: nothing to synchronise

    def build(self, input_shape):
        rank = len(input_shape)
        if not -rank <= self.axis < rank:
            raise ValueError(
                f"BatchNormalization: axis {self.axis} is out of range for input shape "
                f"{tuple(input_shape)}"
            )
        features = _known_dim(self, input_shape, self.axis, f"axis {self.axis}")
        shape = (features,)
        self._add_scale_and_offset(shape)
        self.moving_mean = self.add_weight(
            shape=shape,
            initializer=self.moving_mean_initializer,
            trainable=False,
            autocast=False,
            name="moving_mean",
        )
        self.moving_variance = self.add_weight(
            shape=shape,
            initializer=self.moving_variance_initializer,
            trainable=False,
            autocast=False,
            name="moving_variance",
        )
        self._make_native()

    def _make_native(self):
        self._native = _core.keras.NativeLayer(
            "BatchNormalization",
            {
                "gamma": self.gamma,
                "beta": self.beta,
                "moving_mean": self.moving_mean,
                "moving_variance": self.moving_variance,
            },
        )

    def call(self, inputs, training=False):
        # A frozen layer (trainable=False) always runs in inference mode, as in Keras.
        outputs = self._native(
            self._in_float32(inputs),
            training=bool(training) and self.trainable,
            axis=self.axis,
            momentum=self.momentum,
            epsilon=self.epsilon,
        )
        return self._in_compute_dtype(outputs)

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            **_weight_settings(self, "beta", "gamma", "moving_mean", "moving_variance"),
        }
