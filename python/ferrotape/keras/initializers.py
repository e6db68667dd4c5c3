"""``ft.keras.initializers``: how layers fill their weights (Keras 3 names, defaults and formulas).

An initializer is called as ``init(shape, dtype=None)`` and returns a ferrotape tensor.

Seeds: an unseeded random initializer draws from ``ft.random``, so a program that calls
``ft.random.set_seed`` gets the same weights on every run and each call gives fresh values. An
initializer given an integer ``seed`` is deterministic on its own: every call returns the same
values (as in Keras 3), whatever the global seed.

>>> import ferrotape as ft
>>> init = ft.keras.initializers.get("glorot_uniform")
>>> w = init((784, 64))
>>> w.shape.as_list(), bool(abs(w.numpy()).max() <= (6 / (784 + 64)) ** 0.5)
([784, 64], True)
"""

import math
import operator
import re
import reprlib

import numpy as np

from .. import _core
from . import initializers_stft

# Keras's truncated normal keeps |z| <= 2, which shrinks the standard deviation by this factor;
# VarianceScaling divides by it so the weights keep the intended variance.
_TRUNCATED_NORMAL_STDDEV = 0.87962566103423978


def _snake_case(name):
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _dtype(dtype, who):
    """The requested dtype (float32 by default), checked to be floating for random draws."""
    resolved = _as_dtype("float32" if dtype is None else dtype)
    if who is not None and not resolved.is_floating:
        raise ValueError(f"{who}: expected a floating dtype, received dtype={resolved.name}")
    return resolved


def _as_dtype(dtype):
    from .backend_dtypes import as_dtype

    return as_dtype(dtype)


def _shape(shape, who):
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"{who}: expected a shape (a sequence of ints), received {reprlib.repr(shape)}"
        ) from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{who}: dimensions must be non-negative, received shape={dims}")
    return dims


def compute_fans(shape):
    """Keras's (fan_in, fan_out): a kernel's last two axes are (input, output) channels and the
    leading axes (a convolution's window) multiply both."""
    shape = tuple(shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return int(shape[0]), int(shape[0])
    if len(shape) == 2:
        return int(shape[0]), int(shape[1])
    receptive_field = math.prod(shape[:-2])
    return int(shape[-2] * receptive_field), int(shape[-1] * receptive_field)


class _Sampler:
    """Draws from ``ft.random`` (unseeded) or from a numpy generator re-created from the seed at
    each call, which makes a seeded initializer return the same values every time."""

    def __init__(self, seed, who):
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(f"{who}: seed must be an int or None, received seed={seed!r}")
        self.seed = None if seed is None else int(seed)

    def _rng(self):
        return np.random.default_rng(self.seed)

    def _finish(self, values, dtype):
        if dtype.name in ("float16", "float32", "float64"):
            return _core.constant(values.astype(dtype.name))
        return _core.cast(_core.constant(values.astype(np.float32)), dtype)

    def uniform(self, shape, minval, maxval, dtype):
        if self.seed is None:
            return _core.random.uniform(shape, minval=minval, maxval=maxval, dtype=dtype)
        return self._finish(self._rng().uniform(minval, maxval, size=shape), dtype)

    def normal(self, shape, mean, stddev, dtype):
        if self.seed is None:
            return _core.random.normal(shape, mean=mean, stddev=stddev, dtype=dtype)
        return self._finish(self._rng().normal(mean, stddev, size=shape), dtype)

    def truncated_normal(self, shape, mean, stddev, dtype):
        """Normal values redrawn until they lie within two standard deviations of the mean."""
        if self.seed is None:
            return _core.random.truncated_normal(shape, mean=mean, stddev=stddev, dtype=dtype)
        rng = self._rng()
        z = rng.standard_normal(size=shape)
        outside = np.abs(z) > 2.0
        while outside.any():
            z[outside] = rng.standard_normal(size=int(outside.sum()))
            outside = np.abs(z) > 2.0
        return self._finish(mean + stddev * z, dtype)


class Initializer:
    """Base class: subclasses implement ``__call__(shape, dtype=None)`` returning a tensor."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(shape, dtype)")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def clone(self):
        return self.__class__.from_config(self.get_config())

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


class Zeros(Initializer):
    """All zeros."""

    def __call__(self, shape, dtype=None):
        return _core.zeros(_shape(shape, "Zeros"), dtype=_dtype(dtype, None))


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape, dtype=None):
        return _core.ones(_shape(shape, "Ones"), dtype=_dtype(dtype, None))


class Constant(Initializer):
    """Every entry equal to ``value`` (a scalar, or an array broadcast to the shape)."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        dims = _shape(shape, "Constant")
        dtype = _dtype(dtype, None)
        value = np.asarray(self.value)
        try:
            filled = np.broadcast_to(value, dims)
        except ValueError:
            raise ValueError(
                f"Constant: value of shape {value.shape} cannot fill shape {dims}"
            ) from None
        return _core.cast(_core.constant(np.ascontiguousarray(filled)), dtype)

    def get_config(self):
        value = self.value
        return {"value": value.tolist() if isinstance(value, np.ndarray) else value}


class RandomNormal(Initializer):
    """Normal distribution with ``mean`` and ``stddev``."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean = mean
        self.stddev = stddev
        self._sampler = _Sampler(seed, "RandomNormal")
        self.seed = seed

    def __call__(self, shape, dtype=None):
        dims, dtype = _shape(shape, "RandomNormal"), _dtype(dtype, "RandomNormal")
        return self._sampler.normal(dims, self.mean, self.stddev, dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(Initializer):
    """Uniform distribution on [``minval``, ``maxval``)."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval = minval
        self.maxval = maxval
        self._sampler = _Sampler(seed, "RandomUniform")
        self.seed = seed

    def __call__(self, shape, dtype=None):
        dims, dtype = _shape(shape, "RandomUniform"), _dtype(dtype, "RandomUniform")
        return self._sampler.uniform(dims, self.minval, self.maxval, dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class TruncatedNormal(Initializer):
    """Normal distribution with ``mean`` and ``stddev``, redrawn beyond two ``stddev``."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean = mean
        self.stddev = stddev
        self._sampler = _Sampler(seed, "TruncatedNormal")
        self.seed = seed

    def __call__(self, shape, dtype=None):
        dims, dtype = _shape(shape, "TruncatedNormal"), _dtype(dtype, "TruncatedNormal")
        return self._sampler.truncated_normal(dims, self.mean, self.stddev, dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")


class VarianceScaling(Initializer):
    """Samples with variance ``scale / n``, where ``n`` is fan_in, fan_out or their average.

    ``truncated_normal``: stddev = sqrt(scale / n) / 0.8796 (corrects the truncation);
    ``untruncated_normal``: stddev = sqrt(scale / n); ``uniform``: limit = sqrt(3 * scale / n).
    ``"normal"`` means ``"truncated_normal"``, as in Keras.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if not scale > 0.0:
            raise ValueError(
                f"VarianceScaling: argument `scale` must be a positive float, received: "
                f"scale={scale}"
            )
        if mode not in _MODES:
            raise ValueError(
                f"VarianceScaling: invalid `mode` argument; expected one of {list(_MODES)}, "
                f"received: mode={mode!r}"
            )
        distribution = str(distribution).lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in _DISTRIBUTIONS:
            raise ValueError(
                f"VarianceScaling: invalid `distribution` argument; expected one of "
                f"{list(_DISTRIBUTIONS)}, received: distribution={distribution!r}"
            )
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self._sampler = _Sampler(seed, type(self).__name__)
        self.seed = seed

    def __call__(self, shape, dtype=None):
        who = type(self).__name__
        dims, dtype = _shape(shape, who), _dtype(dtype, who)
        fan_in, fan_out = compute_fans(dims)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        scale = self.scale / max(1.0, fan[self.mode])
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(scale) / _TRUNCATED_NORMAL_STDDEV
            return self._sampler.truncated_normal(dims, 0.0, stddev, dtype)
        if self.distribution == "untruncated_normal":
            return self._sampler.normal(dims, 0.0, math.sqrt(scale), dtype)
        limit = math.sqrt(3.0 * scale)
        return self._sampler.uniform(dims, -limit, limit, dtype)

    def get_config(self):
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
        }


class _FixedVarianceScaling(VarianceScaling):
    """A named VarianceScaling whose only argument is the seed."""

    _settings = (1.0, "fan_in", "truncated_normal")

    def __init__(self, seed=None):
        scale, mode, distribution = self._settings
        super().__init__(scale=scale, mode=mode, distribution=distribution, seed=seed)

    def get_config(self):
        return {"seed": self.seed}


class GlorotUniform(_FixedVarianceScaling):
    """Uniform on [-limit, limit] with limit = sqrt(6 / (fan_in + fan_out))."""

    _settings = (1.0, "fan_avg", "uniform")


class GlorotNormal(_FixedVarianceScaling):
    """Truncated normal with stddev = sqrt(2 / (fan_in + fan_out))."""

    _settings = (1.0, "fan_avg", "truncated_normal")


class HeNormal(_FixedVarianceScaling):
    """Truncated normal with stddev = sqrt(2 / fan_in)."""

    _settings = (2.0, "fan_in", "truncated_normal")


class HeUniform(_FixedVarianceScaling):
    """Uniform on [-limit, limit] with limit = sqrt(6 / fan_in)."""

    _settings = (2.0, "fan_in", "uniform")


class LecunNormal(_FixedVarianceScaling):
    """Truncated normal with stddev = sqrt(1 / fan_in)."""

    _settings = (1.0, "fan_in", "truncated_normal")


class LecunUniform(_FixedVarianceScaling):
    """Uniform on [-limit, limit] with limit = sqrt(3 / fan_in)."""

    _settings = (1.0, "fan_in", "uniform")


class Orthogonal(Initializer):
    """An orthogonal matrix (from the QR decomposition of a normal sample) times ``gain``; a
    kernel of rank > 2 is orthogonal as a (prod(shape[:-1]), shape[-1]) matrix."""

    def __init__(self, gain=1.0, seed=None):
        self.gain = gain
        self._sampler = _Sampler(seed, "Orthogonal")
        self.seed = seed

    def __call__(self, shape, dtype=None):
        dims, dtype = _shape(shape, "Orthogonal"), _dtype(dtype, "Orthogonal")
        if len(dims) < 2:
            raise ValueError(
                f"Orthogonal: the tensor to initialize must be at least two-dimensional, "
                f"received: shape={dims}"
            )
        rows, cols = math.prod(dims[:-1]), dims[-1]
        flat = (max(rows, cols), min(rows, cols))
        sample = self._sampler.normal(flat, 0.0, 1.0, _as_dtype("float32")).numpy()
        q, r = np.linalg.qr(sample.astype(np.float64))
        # The sign fix makes Q uniformly distributed over orthogonal matrices.
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        values = (self.gain * q).reshape(dims).astype(np.float32)
        return _core.cast(_core.constant(values), dtype)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        dims, dtype = _shape(shape, "Identity"), _dtype(dtype, None)
        if len(dims) != 2:
            raise ValueError(
                f"Identity: the identity initializer can only be used for 2D matrices, "
                f"received: shape={dims}"
            )
        return _core.cast(_core.constant(self.gain * np.eye(*dims, dtype=np.float32)), dtype)

    def get_config(self):
        return {"gain": self.gain}


class STFT(Initializer):
    """Kernels of a short-time Fourier transform for a ``(frame_length, 1, fft_length // 2 +
    1)`` convolution: the real (``cos``) or imaginary (``sin``) part of the DFT, windowed and
    scaled (``STFTSpectrogram``'s weights; the math is in ``initializers_stft.py``).

    Args:
        side: ``"real"`` or ``"imag"``.
        window: a window name (``"hann"``, ``"hamming"``, ``"blackman"``, ``"bartlett"``,
            ``"boxcar"``), an array of ``frame_length`` values, or ``None``.
        scaling: ``"density"`` (divide by the window's L2 norm), ``"spectrum"`` (L1), or None.
        periodic: use the periodic form of a named window (SciPy's ``fftbins``).
    """

    def __init__(self, side="real", window="hann", scaling="density", periodic=False):
        if side not in ("real", "imag"):
            raise ValueError(f"side should be 'real' or 'imag', not {side}")
        initializers_stft.check_window(window)
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(
                "Scaling is invalid, it must be `None`, 'density' or 'spectrum'. Received "
                f"scaling={scaling}"
            )
        self.side, self.window, self.scaling, self.periodic = side, window, scaling, periodic

    def __call__(self, shape, dtype=None):
        kernel = initializers_stft.stft_kernel(
            _shape(shape, "STFT"), self.side, self.window, self.scaling, self.periodic
        )
        return _core.cast(_core.constant(kernel), _dtype(dtype, None))

    def get_config(self):
        window = self.window.tolist() if isinstance(self.window, np.ndarray) else self.window
        return {
            "side": self.side,
            "window": window,
            "periodic": self.periodic,
            "scaling": self.scaling,
        }


OrthogonalInitializer = Orthogonal
IdentityInitializer = Identity
STFTInitializer = STFT

_CLASSES = (
    Zeros,
    Ones,
    Constant,
    RandomNormal,
    RandomUniform,
    TruncatedNormal,
    VarianceScaling,
    GlorotUniform,
    GlorotNormal,
    HeNormal,
    HeUniform,
    LecunNormal,
    LecunUniform,
    Orthogonal,
    Identity,
    STFT,
)

_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({_snake_case(cls.__name__): cls for cls in _CLASSES})
_BY_NAME.update(
    {
        "uniform": RandomUniform,
        "normal": RandomNormal,
        "one": Ones,
        "zero": Zeros,
        "OrthogonalInitializer": Orthogonal,
        "IdentityInitializer": Identity,
        "STFTInitializer": STFT,
    }
)

# Keras also exports lower-case names for the classes (keras.initializers.glorot_uniform).
zeros = Zeros
ones = Ones
constant = Constant
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
he_normal = HeNormal
he_uniform = HeUniform
lecun_normal = LecunNormal
lecun_uniform = LecunUniform
orthogonal = Orthogonal
identity = Identity
stft = STFT


def serialize(initializer):
    """``{"class_name": ..., "config": ...}`` for an initializer instance."""
    if not isinstance(initializer, Initializer):
        raise ValueError(
            f"initializers.serialize: expected an Initializer, received {initializer!r}"
        )
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


def deserialize(config):
    """The initializer described by a ``serialize`` dict or a name."""
    if isinstance(config, str):
        return get(config)
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            f"initializers.deserialize: expected a dict with 'class_name' and 'config', "
            f"received {config!r}"
        )
    cls = _BY_NAME.get(config["class_name"])
    if cls is None:
        raise ValueError(f"initializers.deserialize: unknown initializer {config['class_name']!r}")
    from .object_registration import _without_keras_only_defaults

    return cls.from_config(_without_keras_only_defaults(cls, config.get("config") or {}))


def get(identifier):
    """An initializer from a name ("glorot_uniform", "HeNormal", ...), a ``serialize`` dict, an
    Initializer instance or any callable ``fn(shape, dtype=None)``; ``None`` gives ``None``."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(
                f"Could not interpret initializer identifier: {identifier!r} "
                f"(known names include 'glorot_uniform', 'he_normal', 'zeros', 'ones')"
            )
        return cls()
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")


__all__ = [
    "Constant",
    "GlorotNormal",
    "GlorotUniform",
    "HeNormal",
    "HeUniform",
    "Identity",
    "IdentityInitializer",
    "Initializer",
    "LecunNormal",
    "LecunUniform",
    "Ones",
    "Orthogonal",
    "OrthogonalInitializer",
    "RandomNormal",
    "RandomUniform",
    "STFT",
    "STFTInitializer",
    "TruncatedNormal",
    "VarianceScaling",
    "Zeros",
    "compute_fans",
    "constant",
    "deserialize",
    "get",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "identity",
    "lecun_normal",
    "lecun_uniform",
    "ones",
    "orthogonal",
    "random_normal",
    "random_uniform",
    "serialize",
    "stft",
    "truncated_normal",
    "variance_scaling",
    "zeros",
]
