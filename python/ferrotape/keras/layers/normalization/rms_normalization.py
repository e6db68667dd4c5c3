"""``RMSNormalization`` (Keras 3's ``keras.src.layers.normalization.rms_normalization``).

>>> import ferrotape as ft
>>> y = ft.keras.layers.RMSNormalization()(ft.constant([[3.0, 4.0]]))
>>> y.numpy().astype(float).round(3).tolist()
[[0.849, 1.131]]
"""

from .... import _core
from ..layer import Layer
from ..layer_helpers import _float_arg, _known_dim


class RMSNormalization(Layer):
    """``x * rsqrt(mean(x^2, axis) + epsilon) * scale``: each sample divided by its root mean
    square along ``axis`` and multiplied by a learned ``scale`` (shape: the sizes of ``axis``,
    initialised to ones)."""

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis = [int(a) for a in axis] if isinstance(axis, (list, tuple)) else int(axis)
        self.epsilon = _float_arg("RMSNormalization", "epsilon", epsilon)

    def build(self, input_shape):
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -len(input_shape) <= a < len(input_shape):
                raise ValueError(
                    f"RMSNormalization: axis {a} is out of range for input shape "
                    f"{tuple(input_shape)}"
                )
        shape = tuple(_known_dim(self, input_shape, a, f"axis {a}") for a in axes)
        self.scale = self.add_weight(name="scale", shape=shape, initializer="ones")

    def call(self, inputs):
        rank = len(inputs.shape)
        axes = sorted(a % rank for a in (self.axis if isinstance(self.axis, list) else [self.axis]))
        mean_square = _core.reduce_mean(_core.square(inputs), axes, keepdims=True)
        scale = _core.reshape(
            self.scale, [inputs.shape[d] if d in axes else 1 for d in range(rank)]
        )
        return inputs * _core.rsqrt(mean_square + self.epsilon) * scale

    def get_config(self):
        axis = self.axis if isinstance(self.axis, list) else [self.axis]
        return {**super().get_config(), "axis": axis, "epsilon": self.epsilon}
