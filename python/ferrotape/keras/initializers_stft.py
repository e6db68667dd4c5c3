"""The math of the ``STFT`` initializer (Keras 3's
``keras.src.initializers.constant_initializers.STFT``): window functions and the real or
imaginary DFT kernels that ``STFTSpectrogram`` convolves a signal with. The class itself is in
``initializers.py``; the math lives here to keep that file short.

Keras takes windows from ``scipy.signal.get_window``; ferrotape computes the common ones
itself (SciPy is not a dependency), with SciPy's definitions: ``periodic=True`` is SciPy's
``fftbins=True``, the first ``n`` points of the symmetric window of ``n + 1``.
"""

import numpy as np


def _cosine_sum(coefficients):
    def window(n):
        phase = 2 * np.pi * np.arange(n) / (n - 1)
        return sum((-1) ** k * a * np.cos(k * phase) for k, a in enumerate(coefficients))

    return window


WINDOWS = {
    "hann": _cosine_sum([0.5, 0.5]),
    "hamming": _cosine_sum([0.54, 0.46]),
    "blackman": _cosine_sum([0.42, 0.5, 0.08]),
    "bartlett": lambda n: 1 - np.abs(2 * np.arange(n) / (n - 1) - 1),
    "boxcar": np.ones,
}
WINDOWS.update({"hanning": WINDOWS["hann"], "rect": np.ones, "rectangular": np.ones})


def check_window(window):
    """Raises the ValueError Keras's SciPy lookup would for an unknown window name."""
    if isinstance(window, str) and window not in WINDOWS:
        raise ValueError(
            f"Unknown window type {window!r}: ferrotape computes {sorted(WINDOWS)} (Keras "
            "takes any of scipy.signal.windows; pass other windows as an array)"
        )


def get_window(window, length, periodic=False):
    """``scipy.signal.get_window(window, length, fftbins=periodic)`` for the windows above."""
    check_window(window)
    if length == 1:
        return np.ones(1)
    if periodic:
        return WINDOWS[window](length + 1)[:-1]
    return WINDOWS[window](length)


def stft_kernel(shape, side, window, scaling, periodic):
    """The ``(frame_length, 1, fft_length // 2 + 1)`` kernel: ``cos`` (real side) or ``sin``
    (imaginary side) of ``-2 pi t f / fft_length``, times the window, divided by the window's
    L2 norm (``"density"``) or L1 norm (``"spectrum"``)."""
    frame_length, _, bins = shape
    fft_length = (bins - 1) * 2
    angle = -2 * np.pi * np.outer(np.arange(frame_length), np.arange(bins)) / fft_length
    kernel = np.cos(angle) if side == "real" else np.sin(angle)
    if window is not None:
        win = get_window(window, frame_length, periodic) if isinstance(window, str) else window
        win = np.asarray(win, dtype=np.float64)
        if win.ndim != 1 or win.shape[0] != frame_length:
            raise ValueError(
                f"The shape of `window` must be equal to [frame_length]. Received: window "
                f"shape={win.shape}"
            )
        kernel = kernel * win[:, None]
        if scaling == "density":
            kernel = kernel / np.sqrt(np.sum(win**2))
        elif scaling == "spectrum":
            kernel = kernel / np.sum(np.abs(win))
    return kernel[:, None, :]
