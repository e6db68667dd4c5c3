"""``Masking`` (Keras 3's ``keras.src.layers.core.masking``).

>>> import ferrotape as ft
>>> x = ft.constant([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]])
>>> layer = ft.keras.layers.Masking(mask_value=0.0)
>>> layer(x)[0].numpy().tolist()
[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]
>>> layer.compute_mask(x).numpy().tolist()
[[True, False, True]]
"""

from .... import _core
from ..layer import Layer
from ..layer_helpers import _float_arg
from ..layer_masking import set_keras_mask


class Masking(Layer):
    """Marks the timesteps of ``[batch, steps, features]`` inputs whose features all equal
    ``mask_value`` as padding: the output is 0 there and the inputs elsewhere, and
    ``compute_mask(inputs)`` gives the ``[batch, steps]`` keep mask, which rides on the output
    to the layers after it (RNNs, pooling, attention)."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.mask_value = _float_arg("Masking", "mask_value", mask_value)

    def compute_mask(self, inputs, mask=None):
        """The keep mask: true where some feature differs from ``mask_value``.

        Args:
            inputs: The layer's input, ``[batch, steps, features]``.
            mask: Ignored (the mask of the previous layer).

        Returns:
            A boolean tensor ``[batch, steps]``.
        """
        del mask
        inputs = _core.convert_to_tensor(inputs)
        return _core.reduce_any(_core.not_equal(inputs, self.mask_value), [-1])

    def call(self, inputs):
        keep = _core.reduce_any(_core.not_equal(inputs, self.mask_value), [-1], keepdims=True)
        outputs = inputs * _core.cast(keep, inputs.dtype)
        set_keras_mask(outputs, _core.squeeze(keep, [-1]))
        return outputs

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
