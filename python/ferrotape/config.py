"""``ft.config``: TensorFlow's device and execution settings, for the programs that query them.

ferrotape computes on the CPU (``/physical_device:CPU:0``) and, in a build with the ``gpu``
feature, on the GPUs wgpu finds (``/physical_device:GPU:<i>``; a software adapter such as Mesa's
lavapipe only with ``FERROTAPE_GPU_ALLOW_SOFTWARE=1``). This module is also the home of
``ft.device``'s placement scope. Without a GPU, a program's usual start, listing its GPUs and
setting memory growth on each, finds none and goes on:

>>> import ferrotape as ft
>>> ft.config.list_physical_devices("GPU")
[]
>>> ft.config.list_physical_devices()
[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
>>> for gpu in ft.config.list_physical_devices("GPU"):
...     ft.config.experimental.set_memory_growth(gpu, True)
"""

import collections
import functools
import types
import warnings

from . import _core
from .errors import InvalidArgumentError

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_LOGICAL_CPU = LogicalDevice("/device:CPU:0", "CPU")
_DEVICE_TYPES = ("CPU", "GPU", "TPU")
_state = {"visible": None, "run_functions_eagerly": False, "soft_placement": True}


@functools.cache
def _gpus():
    """The GPUs of this build, found once: ``(index, name, api, software)`` tuples."""
    return tuple(_core.gpu_devices())


def _physical():
    return [_CPU] + [PhysicalDevice(f"/physical_device:GPU:{g[0]}", "GPU") for g in _gpus()]


def _visible():
    if _state["visible"] is None:
        _state["visible"] = _physical()
    return _state["visible"]


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
        A list of ``PhysicalDevice(name, device_type)``: the CPU, then the GPUs (none without
        the ``gpu`` build feature or an adapter); never a TPU.

    Raises:
        ValueError: for an unknown device type.

    >>> import ferrotape as ft
    >>> ft.config.list_physical_devices("CPU")
    [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    """
    kind = _checked_type(device_type, "list_physical_devices")
    return [d for d in _physical() if kind is None or d.device_type == kind]


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
    visible = [
        LogicalDevice(d.name.replace("/physical_device:", "/device:"), d.device_type)
        for d in _visible()
    ]
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
    return [d for d in _visible() if kind is None or d.device_type == kind]


def set_visible_devices(devices, device_type=None):
    """Restricts the visible devices of ``device_type`` to ``devices``.

    Args:
        devices: A ``PhysicalDevice`` or a list of them (from ``list_physical_devices``).
        device_type: ``"CPU"``, ``"GPU"`` or ``"TPU"`` (any case), or ``None`` for all.

    Raises:
        ValueError: for an unknown device, or a list that would hide the CPU.

    >>> import ferrotape as ft
    >>> ft.config.set_visible_devices(ft.config.list_physical_devices("CPU"))
    """
    _checked_type(device_type, "set_visible_devices")
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    unknown = [d for d in devices if d not in list_physical_devices()]
    if unknown:
        raise ValueError(f"set_visible_devices: unknown devices {unknown}")
    kind = None if device_type is None else str(device_type).upper()
    if kind in (None, "CPU") and _CPU not in devices:
        raise ValueError("set_visible_devices: the CPU must stay visible")
    # The devices of other types stay as they were; those of `kind` become `devices`.
    kept = [d for d in _visible() if kind is not None and d.device_type != kind]
    _state["visible"] = [d for d in _physical() if d in kept or d in devices]


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


def set_soft_device_placement(enabled):
    """Sets whether an op placed on a device that cannot run it runs on the CPU instead.

    On (the default, as in TensorFlow's eager mode), ``ft.device("/GPU:0")`` without that GPU
    places ops on the CPU, and ops with no GPU kernel run on the CPU; off, naming a device that
    does not exist raises ``InvalidArgumentError`` when its scope is entered.

    Args:
        enabled: A bool.

    >>> import ferrotape as ft
    >>> ft.config.set_soft_device_placement(True)
    """
    _state["soft_placement"] = bool(enabled)


def get_soft_device_placement():
    """Whether soft device placement is on (see ``set_soft_device_placement``).

    Returns:
        A bool, ``True`` until ``set_soft_device_placement(False)``.

    >>> import ferrotape as ft
    >>> ft.config.get_soft_device_placement()
    True
    """
    return _state["soft_placement"]


_SPEC_FIELDS = ("job", "replica", "task")


def _parse_device(spec):
    """``(device_type, index)`` of a TensorFlow device name; ``(None, None)`` when it names no
    device (``""``, ``"/job:localhost"``). Raises ValueError as TensorFlow's parser does."""
    text = spec if isinstance(spec, str) else getattr(spec, "name", None)
    if not isinstance(text, str):
        raise TypeError(f"device: expected a device name string, received {spec!r}")
    kind = index = None
    for part in text.split("/"):
        fields = part.split(":")
        if len(fields) == 2 and fields[0] in _SPEC_FIELDS:
            continue
        if len(fields) in (1, 2) and fields[0].upper() in _DEVICE_TYPES:
            kind, index = fields[0].upper(), fields[1] if len(fields) == 2 else "*"
        elif len(fields) == 3 and fields[0] == "device":
            kind, index = fields[1].upper(), fields[2]
        elif fields[0]:
            raise ValueError(
                f"Unknown attribute '{fields[0]}' is encountered while parsing the device "
                f"spec: '{text}'."
            )
    if kind is None:
        return None, None
    if kind not in _DEVICE_TYPES:
        raise ValueError(f"device: unknown device type {kind!r} in {text!r}")
    if index == "*":
        return kind, 0
    if not index.isdigit():
        raise ValueError(f"device: the device index must be a number or '*', received {text!r}")
    return kind, int(index)


def _placement(spec):
    """The native placement (``"CPU:0"``, ``"GPU:<i>"``) for a device name, or None to keep the
    enclosing scope's; a device that does not exist is the CPU under soft placement, else an
    error."""
    kind, index = _parse_device(spec)
    if kind is None:
        return None
    gpus = [int(d.name.rsplit(":", 1)[1]) for d in _visible() if d.device_type == "GPU"]
    if kind == "CPU" and index == 0:
        return "CPU:0"
    if kind == "GPU" and index in gpus:
        return f"GPU:{index}"
    if _state["soft_placement"]:
        return "CPU:0"
    available = ", ".join(
        d.name.replace("/device:", "/job:localhost/replica:0/task:0/device:")
        for d in list_logical_devices()
    )
    raise InvalidArgumentError(
        f"Could not satisfy device specification '/job:localhost/replica:0/task:0/device:"
        f"{kind}:{index}'. enable_soft_placement=0. Supported device types "
        f"[{', '.join(sorted({d.device_type for d in _visible()}))}]. All available devices "
        f"[{available}]."
    )


class _DeviceScope:
    """``ft.device``'s context manager: sets this thread's placement, restores it on exit."""

    def __init__(self, spec):
        self._spec = spec
        self._previous = []

    def __enter__(self):
        placement = _placement(self._spec)
        current = _core.current_placement()
        self._previous.append(current)
        _core.set_placement(placement if placement is not None else current)
        return self

    def __exit__(self, *exc_info):
        _core.set_placement(self._previous.pop())
        return False


def _set_memory_growth(device, enable):
    """Memory growth is a GPU setting: TensorFlow refuses it for the CPU, and so does this
    (a GPU's pool grows on demand either way)."""
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
    "get_soft_device_placement",
    "run_functions_eagerly",
    "set_soft_device_placement",
    "set_visible_devices",
]
