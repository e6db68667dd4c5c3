"""Shared by every framework's workloads: the inputs, the model's shape, the timing loop.

The inputs are seeded numpy arrays, identical for every framework, made here so that no
framework's own random generator decides what the others compute. Layer weights are left to
each framework's own initialisers (the Keras defaults in ferrotape and TensorFlow), except where
a workload is written functionally (PyTorch's torch.func, JAX), which takes them from here.
"""

import os
import time

import numpy as np

# Where the workloads run: "cpu", or "gpu" (compare.py --device gpu): each framework's first GPU.
DEVICE = os.environ.get("BENCH_DEVICE", "cpu")


class NoGpu(RuntimeError):
    """Raised by a framework's setup under --device gpu when it sees no GPU: it is skipped."""


SEED = 20240603
CLASSES = 10
IMAGE_SHAPE = (28, 28, 1)
# The seed CNN: (filters of each 3x3 conv "same" + relu + BN) per block, each block then 2x2
# max-pooled; then Dense(256)-relu-BN-Dropout(0.5) and Dense(10)-softmax.
CNN_BLOCKS = ((16,), (32, 32), (64, 64, 64))
CNN_DENSE = 256
DROPOUT_RATE = 0.5
LEARNING_RATE = 1e-3
# Seed 003's MLP: 784-128-10 with L2 0.01 * sum(w^2) over both kernels, clip_by_norm(1.0).
MLP_SIZES = (784, 128, 10)
L2_FACTOR = 0.01
CLIP_NORM = 1.0
# Seed 004's shapes: x is [7, 5]; Dense(10) for the jacobian; Dense(8)-Dense(6) for the others.
W6_INPUT = (7, 5)
W6_JACOBIAN_UNITS = 10
W6_HIDDEN_UNITS = (8, 6)


def _rng(tag):
    # One stream per input, so adding an input never changes another one's values.
    return np.random.default_rng([SEED, sum(map(ord, tag))])


def one_hot(labels):
    return np.eye(CLASSES, dtype=np.float32)[labels]


def images(batch, tag="images"):
    """`batch` NHWC float32 images in [0, 1) with their integer and one-hot labels."""
    rng = _rng(f"{tag}{batch}")
    x = rng.random((batch, *IMAGE_SHAPE), dtype=np.float32)
    labels = rng.integers(0, CLASSES, size=batch)
    return x, labels, one_hot(labels)


def inputs(family, params):
    """The numpy inputs of one workload family, as a dict of arrays."""
    if family == "sgemm":
        rng = _rng("sgemm")
        n = params["n"]
        return {
            "a": rng.random((n, n), dtype=np.float32),
            "b": rng.random((n, n), dtype=np.float32),
        }
    if family in ("cnn_train", "cnn_infer", "rss"):
        x, labels, y = images(params["batch"])
        return {"x": x, "labels": labels, "y": y}
    if family == "mlp_train":
        rng = _rng("mlp")
        batch, (n_in, n_hidden, n_out) = params["batch"], MLP_SIZES
        labels = rng.integers(0, CLASSES, size=batch)
        return {
            "x": rng.random((batch, n_in), dtype=np.float32),
            "labels": labels,
            "y": one_hot(labels),
            # Seed 003 draws its kernels from tf.random.normal (standard deviation 1).
            "w1": rng.standard_normal((n_in, n_hidden), dtype=np.float32),
            "w2": rng.standard_normal((n_hidden, n_out), dtype=np.float32),
        }
    if family in ("jacobian", "batch_jacobian", "hessian"):
        rng = _rng(family)
        units = (W6_JACOBIAN_UNITS,) if family == "jacobian" else W6_HIDDEN_UNITS
        arrays = {"x": rng.standard_normal(W6_INPUT, dtype=np.float32)}
        fan_in = W6_INPUT[1]
        for index, fan_out in enumerate(units, start=1):
            # Glorot uniform, as the Keras Dense layers of the other frameworks start.
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            arrays[f"kernel{index}"] = rng.uniform(-limit, limit, (fan_in, fan_out)).astype(
                np.float32
            )
            arrays[f"bias{index}"] = np.zeros(fan_out, np.float32)
            fan_in = fan_out
        return arrays
    raise ValueError(f"inputs: unknown workload family {family!r}")


def seconds_per_call(step, sync, number):
    """Wall time of `number` back-to-back calls of `step`, divided by `number`.

    `sync` runs once, on the last result, before the clock stops: it waits for frameworks that
    dispatch asynchronously (JAX), which may overlap one step's Python with the previous step's
    kernels, as they do in a training loop. Python's garbage collector stays on, as in real use.
    """
    start = time.perf_counter()
    result = None
    for _ in range(number):
        result = step()
    sync(result)
    return (time.perf_counter() - start) / number


def calibrate(step, sync, warmup, sample_seconds):
    """Runs `warmup` untimed calls (tracing, compilation, optimizer slots happen there), then
    times one call and returns how many calls make a sample of about `sample_seconds`."""
    for _ in range(max(warmup, 1)):
        sync(step())
    single = seconds_per_call(step, sync, 1)
    return max(1, int(round(sample_seconds / max(single, 1e-9)))), single


def current_rss_bytes():
    """This process's resident set size now (VmRSS), or None off Linux."""
    return _status_field("VmRSS")


def peak_rss_bytes():
    """This process's peak resident set size (VmHWM, ru_maxrss on other systems)."""
    peak = _status_field("VmHWM")
    if peak is None:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return peak


def _status_field(name):
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(name + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None
