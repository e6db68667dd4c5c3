"""``Flatten`` (Keras 3's ``keras.src.layers.reshaping.flatten``)."""

import math

from .... import _core
from ..layer import Layer
from ..layer_helpers import _channels_last


class Flatten(Layer):
    """``[n, d1, d2, ...] -> [n, d1 * d2 * ...]``."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)

    def call(self, inputs):
        if not inputs.ndim:
            raise ValueError("Flatten: the input must have a batch axis, received a scalar")
        # The batch size is not read (-1): a trace of the call then serves every batch size.
        # math.prod, not numpy's: inside a training step numpy's reduction machinery is out of
        # the CPU caches, and np.prod of three numbers took 65-85 us there (3 us alone).
        features = math.prod(_core.trace_dims(inputs, range(1, inputs.ndim)))
        if features == 0:
            return _core.reshape(inputs, [inputs.shape[0], 0])
        return _core.reshape(inputs, [-1, features])
