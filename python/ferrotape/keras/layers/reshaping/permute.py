"""``Permute`` (Keras 3's ``keras.src.layers.reshaping.permute``).

>>> import ferrotape as ft
>>> ft.keras.layers.Permute((2, 1))(ft.ones([4, 10, 64])).shape
TensorShape([4, 64, 10])
"""

from .... import _core
from ..layer import Layer


class Permute(Layer):
    """Reorders the non-batch axes of each sample: output axis ``i`` (1-based) is input axis
    ``dims[i - 1]``."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        dims = tuple(dims) if isinstance(dims, (tuple, list)) else None
        if dims is None or sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(
                "Permute: invalid permutation argument `dims`. `dims` should be a permutation "
                f"of 1, 2, ..., (the sample rank). Received: dims={dims!r}"
            )
        self.dims = tuple(int(d) for d in dims)

    def call(self, inputs):
        if len(inputs.shape) != len(self.dims) + 1:
            raise ValueError(
                f"Permute: dims={self.dims} permute {len(self.dims)} axes but the input of "
                f"shape {tuple(inputs.shape)} has {len(inputs.shape) - 1} besides the batch"
            )
        return _core.transpose(inputs, [0, *self.dims])

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}
