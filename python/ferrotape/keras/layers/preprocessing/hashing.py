"""``Hashing`` (Keras 3's ``keras.src.layers.preprocessing.hashing``).

>>> import numpy as np, ferrotape as ft
>>> layer = ft.keras.layers.Hashing(num_bins=5)
>>> layer(np.array([[0], [1], [17], [9999]])).numpy().ravel().tolist()
[0, 4, 3, 4]
"""

import numpy as np

from .... import _core
from ...._farmhash import fingerprint64
from ....polymorphic_function import host_computed
from ..layer import Layer
from ..layer_helpers import _is_int
from .category_encoding import _encode, _output_mode


def _key(value):
    """The bytes Keras hashes for one value: a string's UTF-8, an integer's decimal text (what
    ``tf.strings.as_string`` writes)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return str(int(value)).encode()


class Hashing(Layer):
    """Hashes integer or string categories into ``num_bins`` bins: bin
    ``Fingerprint64(key) % num_bins`` (FarmHash, as ``tf.strings.to_hash_bucket_fast``), where an
    integer's key is its decimal text. With ``mask_value``, that value goes to bin 0 and the rest
    to ``1 + Fingerprint64(key) % (num_bins - 1)``. ``output_mode="int"`` returns the bins
    (int64); ``one_hot``/``multi_hot``/``count`` encode them as ``CategoryEncoding`` does."""

    def __init__(
        self,
        num_bins,
        mask_value=None,
        salt=None,
        output_mode="int",
        sparse=False,
        **kwargs,
    ):
        output_mode = _output_mode(self, output_mode, ("int", "one_hot", "multi_hot", "count"))
        # As in Keras, the layer's dtype is its output's: int64 bins, or float encodings.
        kwargs.setdefault("dtype", "int64" if output_mode == "int" else "float32")
        super().__init__(**kwargs)
        if not _is_int(num_bins) or num_bins < 1:
            raise ValueError(
                "The `num_bins` for `Hashing` cannot be `None` or non-positive values. "
                f"Received: num_bins={num_bins}."
            )
        if salt is not None:
            # Keras hashes with keyed SipHash (to_hash_bucket_strong) when salted.
            raise ValueError(f"Hashing: salt is not supported; received salt={salt!r}")
        if sparse:
            raise ValueError("Hashing: sparse=True is not supported (tensors are dense)")
        self.num_bins = int(num_bins)
        self.mask_value = mask_value
        self.salt = None
        self.output_mode = output_mode
        self.sparse = False

    def _bins(self, values):
        bins = self.num_bins
        masked = None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = self.mask_value
            if isinstance(mask, str):
                mask = mask.encode()
            masked = np.array([_key(v) == _key(mask) for v in values.ravel()], dtype=bool)
        out = np.array([fingerprint64(_key(v)) % bins for v in values.ravel()], dtype=np.int64)
        if masked is not None:
            out = np.where(masked, 0, out + 1)
        return out.reshape(values.shape)

    def _converted_inputs(self, value):
        # ferrotape has no string tensors: string categories reach `call` as a numpy array.
        if isinstance(value, (np.ndarray, list, tuple, str, bytes)):
            array = np.asarray(value)
            if array.dtype.kind in "SUO":
                return array
        return super()._converted_inputs(value)

    def call(self, inputs):
        def hashed(values):
            values = np.asarray(values)
            if values.dtype.kind not in "iuSUO":
                raise TypeError(
                    f"Hashing: expected integer or string inputs, received dtype {values.dtype}"
                )
            return _core.constant(self._bins(values), dtype="int64")

        if _core.is_tensor(inputs):
            # Hashed on the host; inside ft.function, again on every call with its inputs.
            (bins,) = host_computed(lambda t: [hashed(t.numpy())], [inputs])
        else:
            bins = hashed(inputs)
        if self.output_mode == "int":
            return bins
        return _encode(bins, self.num_bins, self.output_mode, self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "num_bins": self.num_bins,
            "salt": self.salt,
            "mask_value": self.mask_value,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }
