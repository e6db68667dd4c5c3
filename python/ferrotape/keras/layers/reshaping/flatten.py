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
        shape = inputs.shape.as_list()
        if not shape:
            raise ValueError("Flatten: the input must have a batch axis, received a scalar")
        # math.prod, not numpy's: inside a training step numpy's reduction machinery is out of
        # the CPU caches, and np.prod of three numbers took 65-85 us there (3 us alone).
        return _core.reshape(inputs, [shape[0], math.prod(shape[1:])])
