"""``ft.keras.ops``: Keras 3's backend-independent ops, over ferrotape's.

Each works on tensors and, on KerasTensors, adds a step to a functional model (``Input``
arithmetic, indexing and activations go through them):

>>> import ferrotape as ft
>>> ft.keras.ops.mean(ft.constant([[1.0, 3.0]]), axis=1).numpy().tolist()
[2.0]
>>> x = ft.keras.Input((4,))
>>> ft.keras.ops.mean(x * 2.0, axis=1, keepdims=True).shape
(None, 1)
"""

from .core import *  # noqa: F403 - the namespace is the union of Keras's op modules
from .core import __all__ as _core_all
from .nn import *  # noqa: F403
from .nn import __all__ as _nn_all
from .numpy import *  # noqa: F403
from .numpy import __all__ as _numpy_all
from .operation import Operation

__all__ = sorted(set(_core_all) | set(_nn_all) | set(_numpy_all)) + ["Operation"]
