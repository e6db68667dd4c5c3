"""``ft.signal``: TensorFlow's discrete Fourier transforms and ``fftshift``/``ifftshift``.

The complex transforms (``fft``/``ifft`` over 1 to 3 innermost axes) are computed on the host
by numpy's pocketfft, as ``ft.linalg``'s decompositions are (see ``_linalg_decomp``): the
wheel carries no FFT of its own. Their derivatives are TensorFlow's (``fft_ops.py``'s
``_FFTGrad``): the gradient of ``fft`` is ``ifft(g) * n`` and of ``ifft`` ``fft(g) / n``, written
with these same recorded ops, so an outer tape records them too. The real transforms are
compositions of the complex ones with ferrotape's ops (padding, slicing, ``complex``, ``real``),
so their gradients follow from those, in TensorFlow's convention for complex gradients.
"""

import numpy as _np

from . import _core
from ._linalg_decomp import _host_value, _record
from .array_ops import reverse as _reverse
from .array_ops import roll as _roll
from .errors import InvalidArgumentError

__all__ = [
    "fft",
    "fft2d",
    "fft3d",
    "fftshift",
    "ifft",
    "ifft2d",
    "ifft3d",
    "ifftshift",
    "irfft",
    "irfft2d",
    "rfft",
    "rfft2d",
]


def _complex_input(who, x, rank):
    x = _core.convert_to_tensor(x)
    if not x.dtype.is_complex:
        raise InvalidArgumentError(
            f"{who}: expected a complex64 or complex128 input, received {x.dtype.name}"
        )
    if len(x.shape) < rank:
        raise InvalidArgumentError(
            f"{who}: input must have rank at least {rank}, received shape {x.shape}"
        )
    return x


def _transform(who, x, rank, inverse):
    """The complex DFT (or its inverse, scaled by 1/n as TensorFlow's) over the ``rank``
    innermost axes, host-computed and recorded with TensorFlow's gradient."""
    x = _complex_input(who, x, rank)
    axes = tuple(range(-rank, 0))
    size = int(_np.prod(x.shape[-rank:])) if rank else 1
    value = _host_value(x)
    out = _np.fft.ifftn(value, axes=axes) if inverse else _np.fft.fftn(value, axes=axes)
    out = out.astype(x.dtype.name)

    def backward(outputs, grad):
        del outputs
        # d fft = ifft(g)·n and d ifft = fft(g)/n: the DFT matrix is symmetric, and TF's
        # convention conjugates it.
        scale = _core.constant(_np.array(1.0 / size if inverse else size, x.dtype.name))
        return _transform(who, grad, rank, not inverse) * scale

    return _record([x], [out], backward)[0]


def fft(input, name=None):  # noqa: A002
    """The discrete Fourier transform over the innermost axis.

    Args:
        input: A complex64 or complex128 tensor of rank >= 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Gradient: ``ifft(g) * n``, as TensorFlow's.

    >>> import ferrotape as ft
    >>> ft.signal.fft(ft.constant([1 + 0j, 0j, 0j, 0j])).numpy()
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    del name
    return _transform("fft", input, 1, False)


def ifft(input, name=None):  # noqa: A002
    """The inverse discrete Fourier transform over the innermost axis (scaled by ``1/n``).

    Args:
        input: A complex64 or complex128 tensor of rank >= 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Gradient: ``fft(g) / n``, as TensorFlow's.

    >>> import ferrotape as ft
    >>> ft.signal.ifft(ft.constant([4 + 0j, 0j, 0j, 0j])).numpy()
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    del name
    return _transform("ifft", input, 1, True)


def fft2d(input, name=None):  # noqa: A002
    """The 2-D discrete Fourier transform over the two innermost axes.

    Args:
        input: A complex64 or complex128 tensor of rank >= 2.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Gradient: ``ifft2d(g) * n`` (``n`` the elements of one 2-D slice).

    >>> import ferrotape as ft
    >>> ft.signal.fft2d(ft.constant([[1 + 0j, 1], [1, 1]])).numpy()
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    del name
    return _transform("fft2d", input, 2, False)


def ifft2d(input, name=None):  # noqa: A002
    """The inverse 2-D discrete Fourier transform over the two innermost axes.

    Args:
        input: A complex64 or complex128 tensor of rank >= 2.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Gradient: ``fft2d(g) / n``.

    >>> import ferrotape as ft
    >>> ft.signal.ifft2d(ft.constant([[4 + 0j, 0], [0, 0]])).numpy()
    array([[1.+0.j, 1.+0.j],
           [1.+0.j, 1.+0.j]])
    """
    del name
    return _transform("ifft2d", input, 2, True)


def fft3d(input, name=None):  # noqa: A002
    """The 3-D discrete Fourier transform over the three innermost axes.

    Args:
        input: A complex64 or complex128 tensor of rank >= 3.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Gradient: ``ifft3d(g) * n``.

    >>> import ferrotape as ft
    >>> ft.signal.fft3d(ft.ones([1, 1, 2], ft.complex64)).numpy()
    array([[[2.+0.j, 0.+0.j]]], dtype=complex64)
    """
    del name
    return _transform("fft3d", input, 3, False)


def ifft3d(input, name=None):  # noqa: A002
    """The inverse 3-D discrete Fourier transform over the three innermost axes.

    Args:
        input: A complex64 or complex128 tensor of rank >= 3.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Gradient: ``fft3d(g) / n``.

    >>> import ferrotape as ft
    >>> ft.signal.ifft3d(ft.ones([1, 1, 2], ft.complex64)).numpy()
    array([[[1.+0.j, 0.+0.j]]], dtype=complex64)
    """
    del name
    return _transform("ifft3d", input, 3, True)


def _lengths(who, x, rank, fft_length):
    """``fft_length`` as ``rank`` ints (the input's innermost sizes when ``None``)."""
    if fft_length is None:
        return [int(d) for d in x.shape[len(x.shape) - rank :]]
    lengths = [int(n) for n in _np.asarray(_host_value(_core.convert_to_tensor(fft_length)))]
    if len(lengths) != rank or any(n < 0 for n in lengths):
        raise InvalidArgumentError(
            f"{who}: fft_length must hold {rank} non-negative lengths, received {lengths}"
        )
    return lengths


def _fit(x, sizes):
    """``x`` cropped or zero-padded at the end of its innermost axes to ``sizes``, as
    TensorFlow's real transforms fit their input to ``fft_length``."""
    rank = len(sizes)
    shape = [int(d) for d in x.shape]
    lead = len(shape) - rank
    begin = [0] * len(shape)
    size = shape[:lead] + [min(s, n) for s, n in zip(shape[lead:], sizes, strict=True)]
    x = _core.slice(x, begin, size)
    pads = [[0, 0]] * lead + [[0, n - s] for s, n in zip(size[lead:], sizes, strict=True)]
    return _core.pad(x, pads)


def _real_input(who, x, rank):
    x = _core.convert_to_tensor(x)
    if x.dtype.name not in ("float32", "float64"):
        raise InvalidArgumentError(
            f"{who}: expected a float32 or float64 input, received {x.dtype.name}"
        )
    if len(x.shape) < rank:
        raise InvalidArgumentError(
            f"{who}: input must have rank at least {rank}, received shape {x.shape}"
        )
    return x


def _rfft(who, x, rank, fft_length):
    x = _real_input(who, x, rank)
    lengths = _lengths(who, x, rank, fft_length)
    x = _fit(x, lengths)
    z = _core.complex(x, _core.zeros_like(x))
    full = _transform(who, z, rank, False)
    # Only the innermost axis is halved: the rest of the spectrum is its conjugate mirror.
    shape = [int(d) for d in full.shape]
    shape[-1] = lengths[-1] // 2 + 1
    return _core.slice(full, [0] * len(shape), shape)


def _irfft(who, y, rank, fft_length):
    y = _complex_input(who, y, rank)
    if fft_length is None:
        lengths = [int(d) for d in y.shape[len(y.shape) - rank :]]
        lengths[-1] = 2 * (lengths[-1] - 1)
    else:
        lengths = _lengths(who, y, rank, fft_length)
    n = lengths[-1]
    half = n // 2 + 1
    y = _fit(y, lengths[:-1] + [half])
    # The full spectrum of a real signal: Y[k] for k <= n/2 and conj(Y[n-k]) above, the
    # mirrored entries also mirrored along the outer transformed axes (index -k mod their size).
    mirror = _reverse(y[..., 1 : n - half + 1], [-1])
    for axis in range(-rank, -1):
        mirror = _roll(_reverse(mirror, [axis]), 1, axis)
    full = _core.concat([y, _core.conj(mirror)], -1)
    return _core.real(_transform(who, full, rank, True))


def rfft(input_tensor, fft_length=None, name=None):
    """The discrete Fourier transform of a real signal over the innermost axis: the
    ``fft_length // 2 + 1`` non-negative frequencies.

    Args:
        input_tensor: A float32 or float64 tensor of rank >= 1.
        fft_length: The transform length (a 1-element tensor); the input's innermost axis is
            cropped or zero-padded to it. Defaults to that axis's size.
        name: Ignored (TensorFlow's op name).

    Returns:
        A complex64 (float32 input) or complex128 tensor, innermost size ``fft_length // 2 + 1``.

    Gradient: through the complex ``fft`` of the fitted input.

    >>> import ferrotape as ft
    >>> ft.signal.rfft(ft.constant([1.0, 1.0, 1.0, 1.0])).numpy()
    array([4.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
    """
    del name
    return _rfft("rfft", input_tensor, 1, fft_length)


def irfft(input_tensor, fft_length=None, name=None):
    """The inverse of ``rfft``: a real signal of length ``fft_length`` from its non-negative
    frequencies (the imaginary parts of the zero and Nyquist frequencies are ignored).

    Args:
        input_tensor: A complex64 or complex128 tensor of rank >= 1.
        fft_length: The output length (a 1-element tensor); defaults to ``2 * (m - 1)`` for an
            innermost size ``m``. The input is cropped or zero-padded to ``fft_length // 2 + 1``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A float32 (complex64 input) or float64 tensor, innermost size ``fft_length``.

    Gradient: through the complex ``ifft`` of the Hermitian-completed spectrum.

    >>> import ferrotape as ft
    >>> ft.signal.irfft(ft.constant([4 + 0j, 0j, 0j])).numpy()
    array([1., 1., 1., 1.])
    """
    del name
    return _irfft("irfft", input_tensor, 1, fft_length)


def rfft2d(input_tensor, fft_length=None, name=None):
    """``rfft`` over the two innermost axes (the innermost one halved).

    Args:
        input_tensor: A float32 or float64 tensor of rank >= 2.
        fft_length: The two transform lengths; the input is cropped or zero-padded to them.
        name: Ignored (TensorFlow's op name).

    Returns:
        A complex tensor, its innermost axes ``fft_length[0]`` and ``fft_length[1] // 2 + 1``.

    Gradient: through the complex ``fft2d`` of the fitted input.

    >>> import ferrotape as ft
    >>> ft.signal.rfft2d(ft.ones([2, 2])).numpy()
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    del name
    return _rfft("rfft2d", input_tensor, 2, fft_length)


def irfft2d(input_tensor, fft_length=None, name=None):
    """The inverse of ``rfft2d`` over the two innermost axes.

    Args:
        input_tensor: A complex64 or complex128 tensor of rank >= 2.
        fft_length: The two output lengths; defaults to the input's outer size and
            ``2 * (m - 1)`` for its innermost size ``m``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A real tensor, its innermost axes ``fft_length``.

    Gradient: through the complex ``ifft2d`` of the Hermitian-completed spectrum.

    >>> import ferrotape as ft
    >>> ft.signal.irfft2d(ft.constant([[4 + 0j, 0j], [0j, 0j]])).numpy()
    array([[1., 1.],
           [1., 1.]])
    """
    del name
    return _irfft("irfft2d", input_tensor, 2, fft_length)


def _shift(x, axes, inverse):
    x = _core.convert_to_tensor(x)
    rank = len(x.shape)
    if axes is None:
        axes = list(range(rank))
    elif isinstance(axes, int):
        axes = [axes]
    axes = [int(a) for a in axes]
    shifts = [(-1 if inverse else 1) * (int(x.shape[a]) // 2) for a in axes]
    return _roll(x, shifts, axes)


def fftshift(x, axes=None, name=None):
    """Moves the zero frequency to the centre: each axis rolled by half its size.

    Args:
        x: A tensor.
        axes: The axes to shift (an int or a list); all when ``None``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Gradient: ``ifftshift`` of the upstream gradient (a roll).

    >>> import ferrotape as ft
    >>> ft.signal.fftshift(ft.constant([0, 1, 2, 3, 4])).numpy()
    array([3, 4, 0, 1, 2], dtype=int32)
    """
    del name
    return _shift(x, axes, False)


def ifftshift(x, axes=None, name=None):
    """The inverse of ``fftshift``.

    Args:
        x: A tensor.
        axes: The axes to shift (an int or a list); all when ``None``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Gradient: ``fftshift`` of the upstream gradient (a roll).

    >>> import ferrotape as ft
    >>> ft.signal.ifftshift(ft.constant([3, 4, 0, 1, 2])).numpy()
    array([0, 1, 2, 3, 4], dtype=int32)
    """
    del name
    return _shift(x, axes, True)
