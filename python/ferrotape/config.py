"""``ft.config``: TensorFlow's device and execution settings, for the programs that query them.

ferrotape computes on the CPU (one device, ``/physical_device:CPU:0``), so a program's usual
start, listing its GPUs and setting memory growth on each, finds none and goes on:

>>> import ferrotape as ft
>>> ft.config.list_physical_devices("GPU")
[]
>>> ft.config.list_physical_devices()
[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
>>> for gpu in ft.config.list_physical_devices("GPU"):
...     ft.config.experimental.set_memory_growth(gpu, True)
"""

import collections
import types
import warnings

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_LOGICAL_CPU = LogicalDevice("/device:CPU:0", "CPU")
_DEVICE_TYPES = ("CPU", "GPU", "TPU")
_state = {"visible": [_CPU], "run_functions_eagerly": False}


def _checked_type(device_type, function):
    if device_type is None:
        return None
    kind = str(device_type).upper()
    if kind not in _DEVICE_TYPES:
        raise ValueError(
            f"{function}: device_type must be one of {', '.join(_DEVICE_TYPES)} or None. "
            f"Received: device_type={device_type!r}"
        )
    return kind


def list_physical_devices(device_type=None):
    """The physical devices ferrotape can compute on, optionally of one type.

    Args:
        device_type: ``"CPU"``, ``"GPU"`` or ``"TPU"`` (any case), or ``None`` for all.

    Returns:
        A list of ``PhysicalDevice(name, device_type)``: the CPU, or nothing for GPU and TPU.

    Raises:
        ValueError: for an unknown device type.

    >>> import ferrotape as ft
    >>> ft.config.list_physical_devices("CPU")
    [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    """
    kind = _checked_type(device_type, "list_physical_devices")
    return [d for d in [_CPU] if kind is None or d.device_type == kind]


def list_logical_devices(device_type=None):
    """The visible devices, named as ``tf.device`` names them.

    Args:
        device_type: ``"CPU"``, ``"GPU"`` or ``"TPU"`` (any case), or ``None`` for all.

    Returns:
        A list of ``LogicalDevice(name, device_type)``.

    Raises:
        ValueError: for an unknown device type.

    >>> import ferrotape as ft
    >>> ft.config.list_logical_devices("CPU")
    [LogicalDevice(name='/device:CPU:0', device_type='CPU')]
    """
    kind = _checked_type(device_type, "list_logical_devices")
    visible = [_LOGICAL_CPU] if _CPU in _state["visible"] else []
    return [d for d in visible if kind is None or d.device_type == kind]


def get_visible_devices(device_type=None):
    """The physical devices ops may run on (all of them unless ``set_visible_devices`` hid some).

    Args:
        device_type: ``"CPU"``, ``"GPU"`` or ``"TPU"`` (any case), or ``None`` for all.

    Returns:
        A list of ``PhysicalDevice``.

    Raises:
        ValueError: for an unknown device type.

    >>> import ferrotape as ft
    >>> ft.config.get_visible_devices("GPU")
    []
    """
    kind = _checked_type(device_type, "get_visible_devices")
    return [d for d in _state["visible"] if kind is None or d.device_type == kind]


def set_visible_devices(devices, device_type=None):
    """Restricts the visible devices of ``device_type`` to ``devices``.

    Args:
        devices: A ``PhysicalDevice`` or a list of them (from ``list_physical_devices``).
        device_type: ``"CPU"``, ``"GPU"`` or ``"TPU"`` (any case), or ``None`` for all.

    Raises:
        ValueError: for an unknown device, or a list that would hide the CPU (ferrotape's only
            device).

    >>> import ferrotape as ft
    >>> ft.config.set_visible_devices(ft.config.list_physical_devices("CPU"))
    """
    _checked_type(device_type, "set_visible_devices")
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    unknown = [d for d in devices if d not in list_physical_devices()]
    if unknown:
        raise ValueError(f"set_visible_devices: unknown devices {unknown}")
    if device_type is not None and str(device_type).upper() == "CPU" and _CPU not in devices:
        raise ValueError("set_visible_devices: the CPU must stay visible")


def run_functions_eagerly(run_eagerly):
    """Sets whether ``ft.function`` runs its Python function eagerly instead of tracing it.

    Args:
        run_eagerly: A bool, reported back by ``functions_run_eagerly``.

    >>> import ferrotape as ft
    >>> ft.config.run_functions_eagerly(False)
    """
    _state["run_functions_eagerly"] = bool(run_eagerly)


def functions_run_eagerly():
    """The last value given to ``run_functions_eagerly`` (``False`` until then).

    Returns:
        A bool.

    >>> import ferrotape as ft
    >>> ft.config.functions_run_eagerly()
    False
    """
    return _state["run_functions_eagerly"]


def _set_memory_growth(device, enable):
    """Memory growth is a GPU setting: TensorFlow refuses it for the CPU, and so does this."""
    del enable
    if not isinstance(device, PhysicalDevice) or device.device_type != "GPU":
        raise ValueError(
            f"set_memory_growth: cannot set memory growth on {device!r}: only GPUs have it"
        )


def _get_memory_growth(device):
    _set_memory_growth(device, None)
    return False


def _enable_op_determinism():
    """Accepted with a warning: with several threads, a few reductions (batch-norm statistics,
    convolution filter gradients) add per-thread partial sums in an order the thread pool
    chooses, so results can differ in the last bits from run to run. One thread
    (``RAYON_NUM_THREADS=1`` before the first op) makes every op deterministic."""
    warnings.warn(
        "enable_op_determinism: ferrotape does not make multi-threaded reductions bit-identical "
        "across runs; set RAYON_NUM_THREADS=1 before the first op for that",
        stacklevel=2,
    )


experimental = types.SimpleNamespace(
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    get_visible_devices=get_visible_devices,
    set_visible_devices=set_visible_devices,
    set_memory_growth=_set_memory_growth,
    get_memory_growth=_get_memory_growth,
    enable_op_determinism=_enable_op_determinism,
)

__all__ = [
    "LogicalDevice",
    "PhysicalDevice",
    "experimental",
    "functions_run_eagerly",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "run_functions_eagerly",
    "set_visible_devices",
]
