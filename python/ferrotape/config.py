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
_state = {
    "visible": None,
    "run_functions_eagerly": False,
    "soft_placement": True,
    # PhysicalDevice -> its list of LogicalDeviceConfiguration, as set.
    "logical": {},
    # TensorFlow fixes its logical devices when its runtime starts; ferrotape's "start" is the
    # first call that hands out logical devices (list_logical_devices, a device scope).
    "initialized": False,
}


class LogicalDeviceConfiguration(
    collections.namedtuple(
        "LogicalDeviceConfiguration",
        ["memory_limit", "experimental_priority", "experimental_device_ordinal"],
    )
):
    """How one logical device carved from a physical device is set up.

    Attributes:
        memory_limit: The device's memory in MB (GPUs only; ferrotape's GPU pool grows on
            demand, so the limit is recorded, not enforced).
        experimental_priority: The device's stream priority (recorded).
        experimental_device_ordinal: The order among logical devices (recorded).

    >>> import ferrotape as ft
    >>> ft.config.LogicalDeviceConfiguration()
    LogicalDeviceConfiguration(memory_limit=None, experimental_priority=None, \
experimental_device_ordinal=None)
    """

    def __new__(
        cls, memory_limit=None, experimental_priority=None, experimental_device_ordinal=None
    ):
        return super().__new__(
            cls, memory_limit, experimental_priority, experimental_device_ordinal
        )


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
    _state["initialized"] = True
    visible = []
    for d in _visible():
        name = d.name.replace("/physical_device:", "/device:")
        # The logical CPUs set by set_logical_device_configuration all name the one CPU.
        count = len(_state["logical"].get(d, ())) if d.device_type == "CPU" else 0
        names = [name] if count < 2 else [f"/device:CPU:{i}" for i in range(count)]
        visible += [LogicalDevice(n, d.device_type) for n in names]
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


def experimental_run_functions_eagerly(run_eagerly):
    """The deprecated name of ``run_functions_eagerly``.

    Args:
        run_eagerly: A bool.
    """
    run_functions_eagerly(run_eagerly)


def experimental_functions_run_eagerly():
    """The deprecated name of ``functions_run_eagerly``.

    Returns:
        A bool.
    """
    return functions_run_eagerly()


def set_logical_device_configuration(device, logical_devices):
    """Splits a physical device into logical devices, before the devices are first used.

    On the CPU, ``n`` configurations make ``list_logical_devices("CPU")`` report ``/device:CPU:0``
    to ``/device:CPU:{n-1}`` (for code that wants several devices, such as a distribution
    strategy's tests); all of them compute on the one CPU, and ``ft.device`` accepts each. A
    GPU keeps one logical device (ferrotape does not split one), whose ``memory_limit`` is
    recorded. ``None`` clears the setting.

    Args:
        device: A ``PhysicalDevice`` from ``list_physical_devices``.
        logical_devices: A list of ``LogicalDeviceConfiguration``, or None.

    Raises:
        ValueError: for an unknown device, a CPU memory limit, or several logical GPUs.
        RuntimeError: for a change after the logical devices were listed or a device scope
            entered (setting the same configuration again is allowed, as in TensorFlow).

    >>> import ferrotape as ft
    >>> cpu = ft.config.list_physical_devices("CPU")[0]
    >>> ft.config.get_logical_device_configuration(cpu) is None
    True
    """
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")
    configs = None if logical_devices is None else list(logical_devices)
    if configs is not None:
        if any(not isinstance(c, LogicalDeviceConfiguration) for c in configs):
            raise ValueError(
                "set_logical_device_configuration: logical_devices must be a list of "
                f"LogicalDeviceConfiguration, received {logical_devices!r}"
            )
        if device.device_type == "CPU" and any(c.memory_limit is not None for c in configs):
            raise ValueError(
                "Setting memory limit on CPU virtual devices is currently not supported"
            )
        if device.device_type == "GPU" and len(configs) > 1:
            raise ValueError(
                "set_logical_device_configuration: ferrotape does not split a GPU into several "
                f"logical devices; received {len(configs)} configurations for {device.name}"
            )
    if configs == _state["logical"].get(device):
        return
    if _state["initialized"]:
        raise RuntimeError("Virtual devices cannot be modified after being initialized")
    if configs is None:
        _state["logical"].pop(device, None)
    else:
        _state["logical"][device] = configs


def get_logical_device_configuration(device):
    """The logical device configuration set for ``device``, or None if none was.

    Args:
        device: A ``PhysicalDevice`` from ``list_physical_devices``.

    Returns:
        A list of ``LogicalDeviceConfiguration``, or None.

    Raises:
        ValueError: for an unknown device.
    """
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")
    configs = _state["logical"].get(device)
    return None if configs is None else list(configs)


_SPEC_FIELDS = ("job", "replica", "task")


def _parse_device(spec):
    """``(device_type, index)`` of a TensorFlow device name; ``(None, None)`` when it names no
    device (``""``, ``"/job:localhost"``). Raises ValueError as TensorFlow's parser does."""
    if hasattr(spec, "to_string"):  # a DeviceSpec
        spec = spec.to_string()
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
    if kind == "CPU" and index < max(1, len(_state["logical"].get(_CPU, ()))):
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
        _state["initialized"] = True
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
    (``RAYON_NUM_THREADS=1`` before ferrotape is imported) makes every op deterministic."""
    warnings.warn(
        "enable_op_determinism: ferrotape does not make multi-threaded reductions bit-identical "
        "across runs; set RAYON_NUM_THREADS=1 before importing ferrotape for that",
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
    VirtualDeviceConfiguration=LogicalDeviceConfiguration,
    set_virtual_device_configuration=set_logical_device_configuration,
    get_virtual_device_configuration=get_logical_device_configuration,
)

__all__ = [
    "LogicalDevice",
    "LogicalDeviceConfiguration",
    "PhysicalDevice",
    "experimental",
    "experimental_functions_run_eagerly",
    "experimental_run_functions_eagerly",
    "functions_run_eagerly",
    "get_logical_device_configuration",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "get_soft_device_placement",
    "run_functions_eagerly",
    "set_logical_device_configuration",
    "set_soft_device_placement",
    "set_visible_devices",
]
