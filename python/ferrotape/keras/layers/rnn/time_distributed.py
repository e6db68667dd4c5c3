"""``TimeDistributed`` (Keras 3's ``keras.src.layers.rnn.time_distributed``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.TimeDistributed(ft.keras.layers.Dense(8))
>>> layer(ft.ones([32, 10, 16])).shape
TensorShape([32, 10, 8])
"""

from .... import _core
from ..core.wrapper import Wrapper
from ..layer_masking import _parameter_names


class TimeDistributed(Wrapper):
    """Applies ``layer`` to every step of ``[batch, steps, ...]`` inputs, with the same
    weights: the steps are folded into the batch (``[batch * steps, ...]``), the layer runs
    once, and the result is unfolded to ``[batch, steps, ...]``. A ``[batch, steps]`` mask
    passes through to the output (and to ``layer`` if its call takes one)."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def build(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError(
                "`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                f"dimensions, received: {tuple(input_shape)}"
            )
        super().build((input_shape[0], *input_shape[2:]))

    def call(self, inputs, training=None, mask=None):
        shape = inputs.shape.as_list()
        batch, steps = shape[0], shape[1]
        folded = _core.reshape(inputs, [batch * steps, *shape[2:]])
        kwargs = {} if training is None else {"training": training}
        if mask is not None and "mask" in _parameter_names(type(self.layer).call):
            # Each step's mask goes with that step's inputs (the output keeps `mask`).
            mask = _core.convert_to_tensor(mask)
            kwargs["mask"] = _core.reshape(mask, [batch * steps, *mask.shape.as_list()[2:]])
        outputs = self.layer(folded, **kwargs)
        return _core.reshape(outputs, [batch, steps, *outputs.shape.as_list()[1:]])
