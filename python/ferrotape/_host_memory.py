"""The size check before host (numpy) work: the Python side of ferrotape-core's
``buffer::check_alloc``.

An op that builds an array in numpy (an index array for ``repeat``, the sampling taps of
``image.resize``, a segment op's membership mask) asks ``check_host_size`` first, so a size
from the user that cannot fit raises ``ResourceExhaustedError`` naming the op, as the Rust
kernels do, instead of numpy overflowing (``np.repeat`` with a count near 2**62 crashes the
interpreter), raising its own ``MemoryError``, or the kernel killing the process once an
over-committed allocation is touched.

The limit is the same as the kernels': the least of the machine's memory, the address-space
limit (``RLIMIT_AS``) and the control group's memory limit, read once.

>>> check_host_size("repeat", [4, 3], "float32")
12
>>> check_host_size("repeat", [2**62, 4], "int64")
Traceback (most recent call last):
...
ferrotape.errors.ResourceExhaustedError: repeat: OOM when allocating tensor with shape \
[4611686018427387904, 4] and type int64
"""

import functools
import math
import os

import numpy as np

from .errors import ResourceExhaustedError


@functools.cache
def memory_limit():
    """The bytes one array may take at most (see the module doc)."""
    limits = [_physical_memory(), _address_space_limit(), _cgroup_limit()]
    return min((limit for limit in limits if limit), default=2**63 - 1)


def _physical_memory():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _address_space_limit():
    try:
        import resource
    except ImportError:  # not on this platform
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY or soft <= 0 else soft


def _cgroup_limit():
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as file:
                text = file.read().strip()
        except OSError:
            continue
        if text.isdigit():
            return int(text)
    return None


def check_host_size(op, shape, dtype="float32"):
    """The element count of an array of ``shape`` and ``dtype``, after checking that it fits.

    Args:
        op: The public op's name, for the message.
        shape: The array's dimensions (Python or numpy ints; computed exactly, never wrapped).
        dtype: Its dtype: a ferrotape DType, a numpy dtype or a name.

    Returns:
        The number of elements, a Python int.

    Raises:
        ResourceExhaustedError: when the array's bytes exceed what the process may use.
    """
    dims = [int(d) for d in shape]
    count = math.prod(dims)
    # A ferrotape DType knows its size (bfloat16 has no numpy type of its own); numpy's do too.
    size = dtype.size if hasattr(dtype, "as_numpy_dtype") else np.dtype(dtype).itemsize
    if count * size > memory_limit():
        name = getattr(dtype, "name", None) or np.dtype(dtype).name
        raise ResourceExhaustedError(
            f"{op}: OOM when allocating tensor with shape {dims} and type {name}"
        )
    return count
