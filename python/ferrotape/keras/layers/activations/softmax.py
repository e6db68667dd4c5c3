"""``Softmax`` (Keras 3's ``keras.src.layers.activations.softmax``)."""

from .... import nn
from ..layer import Layer


class Softmax(Layer):
    """softmax along ``axis``."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs):
        return nn.softmax(inputs, axis=self.axis)
