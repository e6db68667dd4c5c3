"""``Softmax`` (Keras 3's ``keras.src.layers.activations.softmax``).

>>> import ferrotape as ft
>>> x = ft.constant([[1.0, 2.0, 3.0]])
>>> ft.keras.layers.Softmax()(x, mask=ft.constant([[True, True, False]])).numpy().round(4)
array([[0.2689, 0.7311, 0.    ]], dtype=float32)
"""

from .... import _core, nn
from ..layer import Layer


def _large_negative_number(dtype):
    # What masked logits are set to: far below any real logit, yet finite in the dtype.
    return -3e4 if dtype.name == "float16" else -1e9


class Softmax(Layer):
    """``exp(x) / sum(exp(x))`` along ``axis`` (an int or a tuple of axes). With a ``mask``
    (broadcastable to the inputs; true or > 0.5 keeps), masked positions are left out of the
    normalisation and output 0."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = tuple(int(a) for a in axis) if isinstance(axis, (tuple, list)) else int(axis)

    def call(self, inputs, mask=None):
        if mask is not None:
            mask = _core.convert_to_tensor(mask)
            if len(mask.shape) > len(inputs.shape) or any(
                m != 1 and m != i
                for m, i in zip(mask.shape[::-1], inputs.shape[::-1], strict=False)
            ):
                raise ValueError(
                    "The `mask` must be broadcastable to `inputs`. Received: "
                    f"inputs.shape={tuple(inputs.shape)}, mask.shape={tuple(mask.shape)}"
                )
            if mask.dtype != "bool":
                mask = mask > 0.5
            low = _core.constant(_large_negative_number(inputs.dtype), dtype=inputs.dtype)
            inputs = _core.select(mask, inputs, low)
        if isinstance(self.axis, tuple):
            axes = list(self.axis)
            outputs = _core.exp(inputs - _core.reduce_logsumexp(inputs, axes, keepdims=True))
        else:
            outputs = nn.softmax(inputs, axis=self.axis)
        if mask is not None:
            # A fully masked row would otherwise come out uniform.
            outputs = _core.select(mask, outputs, _core.zeros_like(outputs))
        return outputs

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
