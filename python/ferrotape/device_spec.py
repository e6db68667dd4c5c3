"""``ft.DeviceSpec``: TensorFlow's immutable device name, parsed into its parts
(``/job:<name>/replica:<n>/task:<n>/device:<type>:<index>``), merged and printed back.

Only the device type and index matter to ferrotape's placement (``ft.device`` accepts a
``DeviceSpec``); the job, replica and task are kept as given, as TensorFlow keeps them for its
distributed runtime.
"""

_DEVICE_TYPES = frozenset({"CPU", "GPU", "TPU", "CUSTOM", "EPU"})


def _int_or_none(value):
    return None if value is None else int(value)


class DeviceSpec:
    """A device specification: job, replica, task, device type and device index, each optional.

    Args:
        job: The job name (a string), or None.
        replica: The replica index, or None.
        task: The task index, or None.
        device_type: ``"CPU"``, ``"GPU"``, ... (``"cpu"``/``"gpu"`` are upper-cased), or None.
        device_index: The device index, or None for any (``*``).

    >>> import ferrotape as ft
    >>> spec = ft.DeviceSpec.from_string("/job:worker/task:1/GPU:0")
    >>> spec.to_string()
    '/job:worker/task:1/device:GPU:0'
    >>> spec.replace(device_type="CPU", device_index=None).to_string()
    '/job:worker/task:1/device:CPU:*'
    """

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index", "_string")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        """Makes a spec from its parts, each optional.

        Args:
            job: The job name (a string), or None.
            replica: The replica index, or None.
            task: The task index, or None.
            device_type: ``"CPU"``, ``"GPU"``, ... (``"cpu"``/``"gpu"`` are upper-cased).
            device_index: The device index, or None for any (``*``).
        """
        self._job = None if job is None else str(job)
        self._replica = _int_or_none(replica)
        self._task = _int_or_none(task)
        if device_type in ("cpu", "gpu"):
            device_type = device_type.upper()
        self._device_type = None if device_type is None else str(device_type)
        self._device_index = _int_or_none(device_index)
        parts = []
        if self._job is not None:
            parts.append(f"/job:{self._job}")
        if self._replica is not None:
            parts.append(f"/replica:{self._replica}")
        if self._task is not None:
            parts.append(f"/task:{self._task}")
        if self._device_type is not None:
            index = "*" if self._device_index is None else self._device_index
            parts.append(f"/device:{self._device_type}:{index}")
        self._string = "".join(parts)

    @classmethod
    def from_string(cls, spec):
        """Parses a device name such as ``"/job:ps/replica:0/task:0/device:CPU:0"`` or
        ``"/GPU:1"``; fields not named are None.

        Args:
            spec: The device name (``None`` or ``""`` give an empty spec).

        Returns:
            A ``DeviceSpec``.

        Raises:
            ValueError: for an unknown field or two device types.

        >>> import ferrotape as ft
        >>> ft.DeviceSpec.from_string("/replica:2/cpu:*").replica
        2
        """
        fields = {"job": None, "replica": None, "task": None}
        device_type = device_index = None
        for part in (spec or "").split("/"):
            items = part.split(":")
            if len(items) == 2 and items[0] in fields:
                fields[items[0]] = items[1]
            elif (
                len(items) in (1, 2)
                and items[0].upper() in _DEVICE_TYPES
                or (len(items) == 3 and items[0] == "device")
            ):
                if device_type is not None:
                    raise ValueError(
                        "Multiple device types are not allowed while parsing the device spec: "
                        f"{spec}."
                    )
                named = len(items) == 3
                device_type = items[1] if named else items[0].upper()
                index = items[2] if named else (items[1] if len(items) == 2 else "*")
                device_index = None if index == "*" else int(index)
            elif items[0]:
                raise ValueError(
                    f"Unknown attribute '{items[0]}' is encountered while parsing the device "
                    f"spec: '{spec}'."
                )
        return cls(device_type=device_type, device_index=device_index, **fields)

    def parse_from_string(self, spec):
        """``from_string(spec)``: a new spec (this one, being immutable, is unchanged).

        Args:
            spec: The device name.

        Returns:
            A ``DeviceSpec``.
        """
        return self.from_string(spec)

    def to_string(self):
        """The device name, ``/job:<j>/replica:<r>/task:<t>/device:<type>:<index>`` with the
        fields that are set.

        Returns:
            A string.
        """
        return self._string

    def make_merged_spec(self, dev):
        """A new spec with ``dev``'s fields where they are set and this spec's elsewhere.

        Args:
            dev: A ``DeviceSpec``.

        Returns:
            A ``DeviceSpec``.

        >>> import ferrotape as ft
        >>> base = ft.DeviceSpec(job="worker", device_type="CPU", device_index=0)
        >>> base.make_merged_spec(ft.DeviceSpec(device_type="GPU")).to_string()
        '/job:worker/device:GPU:0'
        """
        own = (self.job, self.replica, self.task, self.device_type, self.device_index)
        other = (dev.job, dev.replica, dev.task, dev.device_type, dev.device_index)
        return type(self)(*(b if b is not None else a for a, b in zip(own, other, strict=True)))

    def replace(self, **kwargs):
        """A new spec with the given fields replaced (``None`` clears one).

        Args:
            **kwargs: Any of ``job``, ``replica``, ``task``, ``device_type``, ``device_index``.

        Returns:
            A ``DeviceSpec``.
        """
        fields = {
            "job": self.job,
            "replica": self.replica,
            "task": self.task,
            "device_type": self.device_type,
            "device_index": self.device_index,
        }
        fields.update(kwargs)
        return type(self)(**fields)

    @property
    def job(self):
        """The job name, or None."""
        return self._job

    @property
    def replica(self):
        """The replica index, or None."""
        return self._replica

    @property
    def task(self):
        """The task index, or None."""
        return self._task

    @property
    def device_type(self):
        """The device type (``"CPU"``, ``"GPU"``, ...), or None."""
        return self._device_type

    @property
    def device_index(self):
        """The device index, or None for any."""
        return self._device_index

    def __eq__(self, other):
        return isinstance(other, type(self)) and self._string == other._string

    def __hash__(self):
        return hash(self._string)

    def __repr__(self):
        return (
            f"<DeviceSpec(job={self.job}, replica={self.replica}, task={self.task}, "
            f"device_type={self.device_type}, device_index={self.device_index})>"
        )
