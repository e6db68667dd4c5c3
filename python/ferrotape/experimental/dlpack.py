"""``ft.experimental.dlpack``: tensors to and from other libraries through DLPack capsules.

Both directions share memory without a copy where the layout allows (a contiguous tensor of a
dtype both sides have), as TensorFlow's do: an imported tensor reads the producer's memory, so
a later in-place write by the producer (``torch_tensor.add_(1)``) shows through it. ferrotape
itself never writes into imported memory: assigning to a variable made from one copies first.

>>> import numpy as np
>>> import ferrotape as ft
>>> capsule = ft.experimental.dlpack.to_dlpack(ft.constant([1.0, 2.0]))
>>> ft.experimental.dlpack.from_dlpack(capsule).numpy().tolist()
[1.0, 2.0]
>>> ft.experimental.dlpack.from_dlpack(np.arange(3)).numpy().tolist()
[0, 1, 2]
"""

import numpy as np

from .. import _core


class _Capsule:
    """A bare DLPack capsule dressed as the producer ``np.from_dlpack`` expects."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        del kwargs  # the capsule is already made: one version, one device
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: ferrotape and numpy read CPU memory only


def to_dlpack(tf_tensor):
    """A DLPack capsule of ``tf_tensor``'s memory, shared without a copy where the layout allows.

    Args:
        tf_tensor: a ``Tensor`` or ``Variable`` (a variable's current value).

    Returns:
        A ``PyCapsule`` named ``"dltensor"``, consumed once by a library's ``from_dlpack``.
    """
    if not isinstance(tf_tensor, (_core.Tensor, _core.Variable)):
        tf_tensor = _core.convert_to_tensor(tf_tensor)
    return tf_tensor.__dlpack__()


def from_dlpack(dlcapsule):
    """A ferrotape tensor holding the values of a DLPack capsule or of any object with
    ``__dlpack__`` (a numpy array, a torch tensor on the CPU, ...).

    Args:
        dlcapsule: a ``PyCapsule`` from a ``to_dlpack``, or an object with ``__dlpack__``.

    Returns:
        A ``Tensor`` with the same shape, dtype and values, sharing the producer's memory when
        it is C-contiguous, aligned and of a dtype ferrotape holds as it is (float16/32/64,
        bfloat16, int8 ... int64, uint8 ... uint64); otherwise a copy (bool, strided layouts).

    Raises:
        TypeError: the producer's dtype has no DLPack import in numpy (bfloat16, complex).
    """
    producer = dlcapsule if hasattr(dlcapsule, "__dlpack__") else _Capsule(dlcapsule)
    try:
        array = np.from_dlpack(producer)
    except RuntimeError as e:
        if "dtype" not in str(e):
            raise
        raise TypeError(
            f"from_dlpack: numpy, which reads DLPack for ferrotape, cannot import this dtype "
            f"({e}); bfloat16 and complex tensors are among these: convert them on the "
            "producer's side first (for a torch tensor: t.float())"
        ) from e
    shared = _core.share_numpy(array)
    return shared if shared is not None else _core.convert_to_tensor(array)


__all__ = ["from_dlpack", "to_dlpack"]
