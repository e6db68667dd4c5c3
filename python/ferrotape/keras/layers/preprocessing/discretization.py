"""``Discretization`` (Keras 3's ``keras.src.layers.preprocessing.discretization``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
>>> layer(ft.constant([[-1.5, 1.0, 3.4, 0.5]])).numpy().tolist()
[[0, 2, 3, 1]]
"""

import numpy as np

from .... import _core
from ..layer import Layer
from ..layer_helpers import _float_arg, _is_int
from .category_encoding import _encode, _output_mode
from .normalization import _as_array


class Discretization(Layer):
    """Buckets each value by ``bin_boundaries``: bucket ``i`` holds
    ``boundaries[i - 1] <= x < boundaries[i]`` (bucket 0 everything below the first, the last
    everything from the last boundary up). ``output_mode="int"`` returns the bucket indices
    (int32); ``one_hot``/``multi_hot``/``count`` encode them as ``CategoryEncoding`` does.
    Instead of boundaries, ``num_bins`` and ``adapt(data)`` place them at the data's
    quantiles ``j / num_bins`` (interpolating linearly in the sorted data, where the i-th
    smallest of n values sits at ``i / n``; computed exactly, where Keras summarises large
    data to within ``epsilon``)."""

    def __init__(
        self,
        bin_boundaries=None,
        num_bins=None,
        epsilon=0.01,
        output_mode="int",
        sparse=False,
        dtype=None,
        name=None,
    ):
        super().__init__(name=name, dtype=dtype)
        if sparse:
            raise ValueError("Discretization: sparse=True is not supported (tensors are dense)")
        if (bin_boundaries is None) == (num_bins is None):
            raise ValueError(
                "Discretization: exactly one of `num_bins` and `bin_boundaries` must be set. "
                f"Received: num_bins={num_bins} and bin_boundaries={bin_boundaries}"
            )
        if num_bins is not None and (not _is_int(num_bins) or num_bins < 1):
            raise ValueError(
                f"Discretization: num_bins must be a positive int. Received: {num_bins}"
            )
        if bin_boundaries is not None:
            bin_boundaries = [float(b) for b in bin_boundaries]
            if any(b > c for b, c in zip(bin_boundaries, bin_boundaries[1:], strict=False)):
                raise ValueError(
                    f"Discretization: bin_boundaries must be sorted. Received: {bin_boundaries}"
                )
        self.bin_boundaries = bin_boundaries
        self.num_bins = None if num_bins is None else int(num_bins)
        self.epsilon = _float_arg("Discretization", "epsilon", epsilon)
        self.output_mode = _output_mode(self, output_mode, ("int", "one_hot", "multi_hot", "count"))
        self.sparse = False

    def adapt(self, data):
        """Sets ``bin_boundaries`` to the quantiles ``1/num_bins, ..., (num_bins-1)/num_bins``
        of ``data``.

        Args:
            data: A NumPy array, a tensor, a ``Dataset`` or an iterable of batches.
        """
        if self.num_bins is None:
            raise ValueError(
                "Cannot adapt a Discretization layer that has been initialized with "
                "`bin_boundaries`, use `num_bins` instead."
            )
        values = np.sort(_as_array(data).ravel())
        if values.size == 0:
            raise ValueError("Discretization.adapt: no data to adapt to")
        ranks = np.arange(1, values.size + 1) / values.size
        targets = np.arange(1, self.num_bins) / self.num_bins
        self.bin_boundaries = np.interp(targets, ranks, values).tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError(
                "Discretization: the layer has no bin boundaries; call adapt(data) first"
            )
        inputs = _core.convert_to_tensor(inputs)
        # The bucket index is the number of boundaries at or below the value.
        indices = _core.zeros(inputs.shape.as_list(), dtype="int32")
        for boundary in self.bin_boundaries:
            indices = indices + _core.cast(inputs >= boundary, "int32")
        if self.output_mode == "int":
            return indices
        depth = len(self.bin_boundaries) + 1
        return _encode(indices, depth, self.output_mode, self.compute_dtype)

    def get_config(self):
        base = super().get_config()
        return {
            "bin_boundaries": self.bin_boundaries,
            "num_bins": self.num_bins,
            "epsilon": self.epsilon,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
            "name": base["name"],
            "dtype": base["dtype"],
        }
