"""``MelSpectrogram`` (Keras 3's ``keras.src.layers.preprocessing.mel_spectrogram``).

>>> import numpy as np, ferrotape as ft
>>> layer = ft.keras.layers.MelSpectrogram(fft_length=64, sequence_stride=16, num_mel_bins=8)
>>> layer(np.zeros((2, 128), "float32")).shape.as_list()  # (batch, mel bins, frames)
[2, 8, 9]
"""

import numpy as np

import ferrotape as ft

from ...initializers_stft import get_window, stft_kernel
from ..layer import Layer

# The HTK mel scale, mel(f) = 1127 ln(1 + f / 700), as Keras (and tf.signal) define it.
_MEL_HIGH_FREQUENCY_Q = 1127.0
_MEL_BREAK_FREQUENCY_HERTZ = 700.0


def _hertz_to_mel(frequencies):
    return _MEL_HIGH_FREQUENCY_Q * np.log(1.0 + frequencies / _MEL_BREAK_FREQUENCY_HERTZ)


def linear_to_mel_weight_matrix(num_mel_bins, num_spectrogram_bins, sampling_rate, lower, upper):
    """The ``(num_spectrogram_bins, num_mel_bins)`` matrix of triangular mel filters (peak 1)
    over ``[lower, upper]`` Hz, for bins spread linearly over ``[0, sampling_rate / 2]``; the
    DC bin gets no weight."""
    frequencies = np.linspace(0.0, sampling_rate / 2.0, num_spectrogram_bins)[1:]
    bins_mel = _hertz_to_mel(frequencies)[:, None]
    edges = np.linspace(_hertz_to_mel(lower), _hertz_to_mel(upper), num_mel_bins + 2)
    lower_mel, center_mel, upper_mel = edges[:-2], edges[1:-1], edges[2:]
    rising = (bins_mel - lower_mel) / (center_mel - lower_mel)
    falling = (upper_mel - bins_mel) / (upper_mel - center_mel)
    weights = np.maximum(0.0, np.minimum(rising, falling))
    return np.pad(weights, [[1, 0], [0, 0]])


class MelSpectrogram(Layer):
    """The mel-scaled power spectrogram of audio signals, as Keras 3 computes it: the signal
    is reflect-padded by ``fft_length // 2`` on both sides (centred frames), cut into frames
    ``sequence_stride`` apart, each windowed (a periodic window of ``sequence_length`` centred
    in ``fft_length``) and transformed (a real DFT, done as a strided convolution with ``cos``
    and ``sin`` kernels); ``|X| ** mag_exp`` is mapped onto ``num_mel_bins`` triangular mel
    filters and, with ``power_to_db``, converted to decibels::

        db = 10 log10(max(S, min_power)) - 10 log10(max(|ref_power|, min_power))
        db = max(db, max(db) - top_db)      # max(db) over the whole batch, as Keras

    Args:
        fft_length: the DFT size (frame length); defaults to 2048.
        sequence_stride: samples between frames; defaults to 512.
        sequence_length: the window's length (``<= fft_length``); defaults to ``fft_length``.
        window: ``"hann"``, ``"hamming"``, an array of ``sequence_length`` values, or None.
        sampling_rate: samples per second of the signal; defaults to 16000.
        num_mel_bins: mel filters; defaults to 128.
        min_freq: the lowest filter's lower edge, in Hz; defaults to 20.
        max_freq: the highest filter's upper edge; defaults to ``sampling_rate / 2``.
        power_to_db: convert to decibels; defaults to True.
        top_db: the dynamic range kept below the maximum, in dB; defaults to 80.
        mag_exp: the exponent of the magnitude (2: power); defaults to 2.
        min_power: the floor of the power before the logarithm; defaults to 1e-10.
        ref_power: the power that is 0 dB; defaults to 1.

    Input shape: ``(batch, samples)`` or ``(samples,)``. Output shape: ``(batch,
    num_mel_bins, frames)`` (or without the batch), ``frames = 1 + samples //
    sequence_stride`` for an even ``fft_length``.
    """

    def __init__(
        self,
        fft_length=2048,
        sequence_stride=512,
        sequence_length=None,
        window="hann",
        sampling_rate=16000,
        num_mel_bins=128,
        min_freq=20.0,
        max_freq=None,
        power_to_db=True,
        top_db=80.0,
        mag_exp=2.0,
        min_power=1e-10,
        ref_power=1.0,
        **kwargs,
    ):
        self.fft_length = fft_length
        self.sequence_stride = sequence_stride
        self.sequence_length = sequence_length or fft_length
        if self.fft_length < self.sequence_length:
            raise ValueError(
                "`fft_length` must be greater than or equal to `sequence_length`. Received: "
                f"`sequence_length`={self.sequence_length}, `fft_length`={self.fft_length}."
            )
        if isinstance(window, str) and window not in ("hann", "hamming"):
            raise ValueError(
                'If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. '
                f"Received: window={window}"
            )
        self.window = window
        self.sampling_rate = sampling_rate
        self.num_mel_bins = num_mel_bins
        self.min_freq = min_freq
        self.max_freq = max_freq or int(sampling_rate / 2)
        self.power_to_db = power_to_db
        self.top_db = top_db
        self.mag_exp = mag_exp
        self.min_power = min_power
        self.ref_power = ref_power
        super().__init__(**kwargs)

    def _constants(self, dtype):
        """The DFT kernels and the mel matrix, in ``dtype`` (made once per dtype)."""
        cache = self.__dict__.setdefault("_constant_cache", {})
        if dtype not in cache:
            window = self.window
            if isinstance(window, str):
                window = get_window(window, self.sequence_length, periodic=True)
            if window is not None:
                window = np.asarray(window, dtype=np.float64)
                if window.shape != (self.sequence_length,):
                    raise ValueError(
                        "The shape of `window` must be equal to [sequence_length]. Received: "
                        f"window shape={window.shape}"
                    )
                left = (self.fft_length - self.sequence_length) // 2
                right = self.fft_length - self.sequence_length - left
                window = np.pad(window, [left, right])
            bins = self.fft_length // 2 + 1
            shape = (self.fft_length, 1, bins)
            cache[dtype] = [
                ft.constant(value, dtype=dtype)
                for value in (
                    stft_kernel(shape, "real", window, None, False),
                    stft_kernel(shape, "imag", window, None, False),
                    linear_to_mel_weight_matrix(
                        self.num_mel_bins, bins, self.sampling_rate, self.min_freq, self.max_freq
                    ),
                )
            ]
        return cache[dtype]

    def call(self, inputs):
        # As Keras: the transform runs in float32 unless the layer computes in float64.
        dtype = self.compute_dtype if self.compute_dtype in ("float32", "float64") else "float32"
        x = ft.cast(ft.convert_to_tensor(inputs), dtype)
        single = len(x.shape) == 1
        if single:
            x = x[None]
        half = self.fft_length // 2
        x = ft.pad(x, [[0, 0], [half, half]], mode="REFLECT")
        real_kernel, imag_kernel, mel = self._constants(dtype)
        signal = x[:, :, None]
        real = ft.nn.conv1d(signal, real_kernel, self.sequence_stride, "VALID")
        imag = ft.nn.conv1d(signal, imag_kernel, self.sequence_stride, "VALID")
        spectrum = ft.pow(ft.sqrt(ft.square(real) + ft.square(imag)), self.mag_exp)
        outputs = ft.tensordot(spectrum, mel, 1)  # (batch, frames, mel bins)
        if self.power_to_db:
            outputs = self._decibels(outputs)
        outputs = ft.transpose(outputs, [0, 2, 1])
        outputs = outputs[0] if single else outputs
        return ft.cast(outputs, self.compute_dtype)

    def _decibels(self, power):
        log10 = np.log(10.0)
        db = 10.0 * ft.math.log(ft.maximum(power, self.min_power)) / log10
        db = db - 10.0 * np.log10(max(abs(self.ref_power), self.min_power))
        return ft.maximum(db, ft.reduce_max(db) - self.top_db)

    def compute_output_shape(self, input_shape):
        """``(batch, num_mel_bins, frames)``, Keras's frame count for the time axis."""
        length = input_shape[-1]
        frames = (
            None
            if length is None
            else (length + self.sequence_stride + 1) // (self.sequence_stride)
        )
        if len(input_shape) == 1:
            return (self.num_mel_bins, frames)
        return (input_shape[0], self.num_mel_bins, frames)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "fft_length": self.fft_length,
                "sequence_stride": self.sequence_stride,
                "sequence_length": self.sequence_length,
                "window": self.window,
                "sampling_rate": self.sampling_rate,
                "num_mel_bins": self.num_mel_bins,
                "min_freq": self.min_freq,
                "max_freq": self.max_freq,
                "power_to_db": self.power_to_db,
                "top_db": self.top_db,
                "mag_exp": self.mag_exp,
                "min_power": self.min_power,
                "ref_power": self.ref_power,
            }
        )
        return config
