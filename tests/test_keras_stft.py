"""The ``STFT`` initializer and ``STFTSpectrogram`` against numpy's FFT (each frame's
``rfft``, windowed and scaled), and against Keras where TensorFlow is installed."""

import numpy as np
import pytest

import ferrotape as ft

keras = ft.keras
RNG = np.random.default_rng(0)
SIGNAL = RNG.normal(size=(2, 64, 2)).astype("float32")


def test_named_windows_follow_scipy_definitions():
    from ferrotape.keras.initializers_stft import get_window

    np.testing.assert_allclose(get_window("hann", 5), [0, 0.5, 1, 0.5, 0], atol=1e-15)
    np.testing.assert_allclose(get_window("hann", 4, periodic=True), [0, 0.5, 1, 0.5], atol=1e-15)
    np.testing.assert_allclose(get_window("hamming", 3), [0.08, 1.0, 0.08])
    np.testing.assert_allclose(get_window("bartlett", 5), [0, 0.5, 1, 0.5, 0])
    np.testing.assert_allclose(get_window("blackman", 3), [0, 1, 0], atol=1e-15)
    with pytest.raises(ValueError, match="Unknown window type 'kaiser'"):
        keras.initializers.STFT(window="kaiser")


def test_initializer_is_the_windowed_dft():
    kernel = keras.initializers.STFT("imag", "hann", "spectrum")((8, 1, 5)).numpy()[:, 0, :]
    t, f = np.arange(8)[:, None], np.arange(5)[None, :]
    window = np.hanning(8)[:, None]  # numpy's hanning is SciPy's symmetric hann
    expected = np.sin(-2 * np.pi * t * f / 8) * window / window.sum()
    np.testing.assert_allclose(kernel, expected, atol=1e-6)
    assert keras.initializers.get("stft").get_config()["window"] == "hann"
    assert keras.initializers.STFTInitializer is keras.initializers.STFT


def _rfft_frames(signal, frame_length, step, fft_length, window):
    """Per channel: the rfft of each windowed frame, scaled by the window's L2 norm."""
    frames = [
        signal[:, start : start + frame_length, :]
        for start in range(0, signal.shape[1] - frame_length + 1, step)
    ]
    stacked = np.stack(frames, axis=1) * window[None, None, :, None]
    spectrum = np.fft.rfft(stacked, n=fft_length, axis=2) / np.sqrt(np.sum(window**2))
    return spectrum  # (batch, frames, bins, channels)


@pytest.mark.parametrize("mode", ["real", "imag", "magnitude", "psd", "log", "stft"])
def test_modes_match_numpy_fft(mode):
    layer = keras.layers.STFTSpectrogram(mode=mode, frame_length=16, frame_step=5, fft_length=32)
    got = layer(SIGNAL).numpy()
    spectrum = _rfft_frames(SIGNAL, 16, 5, 32, np.hanning(16))
    power = np.abs(spectrum) ** 2
    interior = np.zeros_like(power)
    interior[:, :, 1:-1] = power[:, :, 1:-1]
    expected = {
        "real": spectrum.real,
        "imag": spectrum.imag,
        "magnitude": np.abs(spectrum),
        "psd": power + interior,
        "log": np.log(np.abs(spectrum)),
        "stft": np.concatenate([spectrum.real, spectrum.imag], axis=2),
    }[mode]
    # channels_last, not expanded: each frame holds channel 0's bins, then channel 1's.
    expected = np.transpose(expected, (0, 1, 3, 2)).reshape(got.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_shapes_formats_config_and_errors():
    layer = keras.layers.STFTSpectrogram(frame_length=12, padding="same", expand_dims=True)
    assert layer(SIGNAL).shape.as_list() == [2, 11, 9, 2]
    assert len(layer.weights) == 2 and layer.count_params() == 2 * 12 * 9
    first = keras.layers.STFTSpectrogram(frame_length=16, data_format="channels_first")
    assert first(np.transpose(SIGNAL, (0, 2, 1))).shape.as_list() == [2, 18, 7]
    clone = keras.layers.STFTSpectrogram.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    with pytest.raises(ValueError, match="Output mode is invalid"):
        keras.layers.STFTSpectrogram(mode="phase")
    with pytest.raises(ValueError, match="frame_step"):
        keras.layers.STFTSpectrogram(frame_length=8, frame_step=9)
    with pytest.raises(TypeError, match="Invalid input type"):
        keras.layers.STFTSpectrogram(frame_length=8)(np.zeros((1, 16, 1), "int32"))


def test_matches_keras():
    theirs_keras = pytest.importorskip("keras", reason="Keras 3 (with TensorFlow) is not installed")
    pytest.importorskip("scipy", reason="Keras's STFT windows need scipy")
    for kwargs in [
        {"mode": "log", "frame_length": 16, "frame_step": 5, "fft_length": 32},
        {"mode": "psd", "frame_length": 12, "padding": "same", "window": "hamming"},
        {"mode": "angle", "frame_length": 16, "periodic": True, "scaling": "spectrum"},
        {"mode": "stft", "frame_length": 16, "expand_dims": True, "window": None},
    ]:
        ours = keras.layers.STFTSpectrogram(**kwargs)(SIGNAL).numpy()
        theirs = np.asarray(theirs_keras.layers.STFTSpectrogram(**kwargs)(SIGNAL))
        if kwargs["mode"] == "angle":  # +-pi where the imaginary part is a signed zero
            ours, theirs = np.cos(ours), np.cos(theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("mode", ["log", "psd", "stft"])
def test_float64_gradients_match_finite_differences(mode):
    from test_keras_layers import check_input_gradient, check_weight_gradients

    layer = keras.layers.STFTSpectrogram(mode=mode, frame_length=8, frame_step=3, dtype="float64")
    x = RNG.normal(size=(1, 20, 2))
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)
