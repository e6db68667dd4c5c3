"""``STFTSpectrogram`` (Keras 3's ``keras.src.layers.preprocessing.stft_spectrogram``).

>>> import numpy as np, ferrotape as ft
>>> layer = ft.keras.layers.STFTSpectrogram(mode="magnitude", frame_length=8, frame_step=4)
>>> layer(np.zeros((2, 32, 1), "float32")).shape.as_list()  # 7 frames of 8 // 2 + 1 bins
[2, 7, 5]
"""

import math
import warnings

import ferrotape as ft

from ... import backend_config, initializers
from ...initializers_stft import check_window
from ..layer import Layer

_MODES = ("log", "magnitude", "psd", "real", "imag", "angle", "stft")


class STFTSpectrogram(Layer):
    """The short-time Fourier transform of a signal, computed as Keras does: a strided 1-D
    convolution of each channel with windowed ``cos`` and ``sin`` DFT kernels (the ``STFT``
    initializer), one output per frame and frequency bin ``0 .. fft_length // 2``.

    ``mode`` picks the output: ``"real"``/``"imag"`` parts, ``"stft"`` (both, stacked on the
    frequency axis), ``"angle"`` (``atan2(imag, real)``), ``"magnitude"`` (``sqrt(real^2 +
    imag^2)``), ``"psd"`` (the power, interior bins doubled) or ``"log"`` (log magnitude).

    Args:
        mode: the output, as above; defaults to ``"log"``.
        frame_length: samples per frame (the window's length); defaults to 256.
        frame_step: samples between frames; defaults to ``frame_length // 2``.
        fft_length: the DFT size (``>= frame_length``); defaults to the next power of 2.
        window: a window name, an array of ``frame_length`` values, or ``None``.
        periodic: use the periodic form of a named window.
        scaling: ``"density"``, ``"spectrum"`` or ``None`` (see the ``STFT`` initializer).
        padding: ``"valid"`` or ``"same"``, the convolution's padding.
        expand_dims: keep channels and frequencies as separate axes.
        data_format: ``"channels_last"`` (inputs ``(batch, time, channels)``) or
            ``"channels_first"``.

    Input shape: ``(batch, time, channels)`` (channels_last) or ``(batch, channels, time)``.
    Output shape: ``(batch, frames, channels * bins)``, or ``(batch, frames, bins, channels)``
    with ``expand_dims`` (channels_first: ``(batch, channels * bins, frames)`` or ``(batch,
    channels, frames, bins)``); ``bins`` doubles in ``"stft"`` mode.
    """

    def __init__(
        self,
        mode="log",
        frame_length=256,
        frame_step=None,
        fft_length=None,
        window="hann",
        periodic=False,
        scaling="density",
        padding="valid",
        expand_dims=False,
        data_format=None,
        **kwargs,
    ):
        if frame_step is not None and (frame_step > frame_length or frame_step < 1):
            raise ValueError(
                "`frame_step` should be a positive integer not greater than `frame_length`. "
                f"Received frame_step={frame_step}, frame_length={frame_length}"
            )
        if fft_length is not None and fft_length < frame_length:
            raise ValueError(
                "`fft_length` should be not less than `frame_length`. Received "
                f"fft_length={fft_length}, frame_length={frame_length}"
            )
        if fft_length is not None and (fft_length & -fft_length) != fft_length:
            warnings.warn(
                f"`fft_length` is recommended to be a power of two. Received "
                f"fft_length={fft_length}",
                stacklevel=2,
            )
        if mode not in _MODES:
            raise ValueError(
                f"Output mode is invalid, it must be one of {', '.join(_MODES)}. Received: "
                f"mode={mode}"
            )
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(
                "Scaling is invalid, it must be `None`, 'density' or 'spectrum'. Received "
                f"scaling={scaling}"
            )
        if padding not in ("valid", "same"):
            raise ValueError(
                f"Padding is invalid, it should be 'valid', 'same'. Received: padding={padding}"
            )
        check_window(window)
        super().__init__(**kwargs)
        self.mode = mode
        self.frame_length = frame_length
        self.frame_step = frame_step
        self._frame_step = frame_step or frame_length // 2
        self.fft_length = fft_length
        self._fft_length = fft_length or 2 ** int(math.ceil(math.log2(frame_length)))
        self.window = window
        self.periodic = periodic
        self.scaling = scaling
        self.padding = padding
        self.expand_dims = expand_dims
        self.data_format = data_format or backend_config.image_data_format()

    def build(self, input_shape):
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        for side, name in (("real", "real_kernel"), ("imag", "imag_kernel")):
            if self.mode != ("imag" if side == "real" else "real"):
                initializer = initializers.STFT(side, self.window, self.scaling, self.periodic)
                setattr(
                    self, name, self.add_weight(name=name, shape=shape, initializer=initializer)
                )

    def _frames(self, inputs, kernel):
        """``(batch, channels, bins, frames)``: every channel convolved with ``kernel``."""
        if self.data_format == "channels_last":
            inputs = ft.transpose(inputs, [0, 2, 1])
        channels, length = inputs.shape[1], inputs.shape[2]
        signals = ft.reshape(inputs, [-1, length, 1])
        out = ft.nn.conv1d(
            signals, ft.cast(kernel, inputs.dtype), self._frame_step, self.padding.upper()
        )
        out = ft.transpose(out, [0, 2, 1])
        return ft.reshape(out, [-1, channels, out.shape[1], out.shape[2]])

    def _arranged(self, outputs):
        _, channels, bins, frames = outputs.shape
        if self.expand_dims:
            perm = [0, 3, 2, 1] if self.data_format == "channels_last" else [0, 1, 3, 2]
            return ft.transpose(outputs, perm)
        outputs = ft.reshape(outputs, [-1, channels * bins, frames])
        return ft.transpose(outputs, [0, 2, 1]) if self.data_format == "channels_last" else outputs

    def call(self, inputs):
        if inputs.dtype.name not in ("float16", "float32", "float64"):
            raise TypeError(
                "Invalid input type. Expected `float16`, `float32` or `float64`. Received: "
                f"input type={inputs.dtype.name}"
            )
        real = self._frames(inputs, self.real_kernel) if self.mode != "imag" else None
        imag = self._frames(inputs, self.imag_kernel) if self.mode != "real" else None
        if self.mode in ("real", "imag"):
            return self._arranged(real if self.mode == "real" else imag)
        if self.mode == "angle":
            return self._arranged(ft.math.atan2(imag, real))
        if self.mode == "stft":
            return self._arranged(ft.concat([real, imag], axis=2))
        power = ft.square(real) + ft.square(imag)
        if self.mode == "psd":  # one-sided: the bins between DC and Nyquist count twice
            interior = ft.pad(power[:, :, 1:-1, :], [[0, 0], [0, 0], [1, 1], [0, 0]])
            return self._arranged(power + interior)
        epsilon = backend_config.epsilon()
        magnitude = self._arranged(ft.sqrt(ft.maximum(power, epsilon)))
        if self.mode == "magnitude":
            return magnitude
        return ft.math.log(ft.maximum(magnitude, epsilon))

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "mode": self.mode,
                "frame_length": self.frame_length,
                "frame_step": self.frame_step,
                "fft_length": self.fft_length,
                "window": self.window,
                "periodic": self.periodic,
                "scaling": self.scaling,
                "padding": self.padding,
                "data_format": self.data_format,
                "expand_dims": self.expand_dims,
            }
        )
        return config
