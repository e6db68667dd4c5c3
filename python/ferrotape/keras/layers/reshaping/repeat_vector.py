"""``RepeatVector`` (Keras 3's ``keras.src.layers.reshaping.repeat_vector``).

>>> import ferrotape as ft
>>> ft.keras.layers.RepeatVector(3)(ft.ones([2, 5])).shape
TensorShape([2, 3, 5])
"""

from .... import _core
from ..layer import Layer
from ..layer_helpers import _expect_rank, _is_int


class RepeatVector(Layer):
    """Repeats each input vector ``n`` times: ``[batch, features] -> [batch, n, features]``."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not _is_int(n) or n < 1:
            raise ValueError(
                f"RepeatVector: expected an integer value for `n` of at least 1. Received: n={n!r}"
            )
        self.n = int(n)

    def call(self, inputs):
        _expect_rank(self, inputs.shape, 2)
        batch, features = inputs.shape
        return _core.broadcast_to(_core.expand_dims(inputs, 1), [batch, self.n, features])

    def get_config(self):
        return {**super().get_config(), "n": self.n}
