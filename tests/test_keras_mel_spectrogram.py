"""``MelSpectrogram`` against a numpy pipeline (reflect padding, periodic window, rfft, HTK
mel filters, decibels), its mel filters by their definition, float64 gradients, and Keras
itself where TensorFlow is installed."""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras.layers.preprocessing.mel_spectrogram import linear_to_mel_weight_matrix

keras = ft.keras
RNG = np.random.default_rng(1)
AUDIO = RNG.normal(size=(2, 300)).astype("float32")


def numpy_mel(x, fft, stride, mels, rate, db=True, top_db=80.0, mag_exp=2.0):
    padded = np.pad(x, [(0, 0), (fft // 2, fft // 2)], mode="reflect")
    starts = range(0, padded.shape[1] - fft + 1, stride)
    window = np.hanning(fft + 1)[:-1]  # periodic hann
    frames = np.stack([padded[:, s : s + fft] * window for s in starts], axis=1)
    power = np.abs(np.fft.rfft(frames, axis=-1)) ** mag_exp
    out = power @ linear_to_mel_weight_matrix(mels, fft // 2 + 1, rate, 20.0, rate / 2)
    if db:
        out = 10 * np.log10(np.maximum(out, 1e-10))
        out = np.maximum(out, out.max() - top_db)
    return np.swapaxes(out, -1, -2)


def test_mel_filters_are_triangles_peaking_at_one():
    matrix = linear_to_mel_weight_matrix(8, 129, 16000, 20.0, 8000.0)
    assert matrix.shape == (129, 8)
    assert np.all(matrix[0] == 0)  # the DC bin carries no weight
    assert np.all(matrix >= 0) and np.all(matrix.max(axis=0) <= 1.0)
    assert np.all(matrix.max(axis=0) > 0.8)  # each filter nearly reaches 1 on this grid
    centers = matrix.argmax(axis=0)
    assert np.all(np.diff(centers) > 0)  # filters climb in frequency


@pytest.mark.parametrize("db", [True, False])
def test_matches_numpy(db):
    layer = keras.layers.MelSpectrogram(
        fft_length=64, sequence_stride=16, num_mel_bins=10, sampling_rate=8000, power_to_db=db
    )
    got = layer(AUDIO).numpy()
    expected = numpy_mel(AUDIO.astype(np.float64), 64, 16, 10, 8000, db=db)
    assert got.shape == (2, 10, 1 + 300 // 16)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(layer(AUDIO[0]).numpy().shape, (10, 19))


def test_arguments_config_and_errors():
    layer = keras.layers.MelSpectrogram(fft_length=32, sequence_stride=8, num_mel_bins=4)
    again = keras.layers.MelSpectrogram.from_config(layer.get_config())
    assert again.get_config() == layer.get_config()
    assert layer.compute_output_shape((None, 100)) == (None, 4, 13)
    assert layer.weights == []
    with pytest.raises(ValueError, match="fft_length"):
        keras.layers.MelSpectrogram(fft_length=16, sequence_length=32)
    with pytest.raises(ValueError, match="hann"):
        keras.layers.MelSpectrogram(window="blackman")


def test_float64_input_gradient_matches_finite_differences():
    from test_keras_layers import check_input_gradient

    layer = keras.layers.MelSpectrogram(
        fft_length=16, sequence_stride=4, num_mel_bins=3, power_to_db=False, dtype="float64"
    )
    check_input_gradient(layer, RNG.normal(size=(1, 24)), rtol=1e-5, atol=1e-6)


def test_matches_keras():
    theirs = pytest.importorskip("keras", reason="Keras 3 (with TensorFlow) is not installed")
    for kwargs in [
        {"fft_length": 64, "sequence_stride": 16, "num_mel_bins": 10, "sampling_rate": 8000},
        {
            "fft_length": 64,
            "sequence_stride": 20,
            "sequence_length": 48,
            "window": "hamming",
            "num_mel_bins": 12,
            "power_to_db": False,
            "mag_exp": 1.0,
            "sampling_rate": 8000,
            "min_freq": 100.0,
            "max_freq": 3000,
        },
        {
            "fft_length": 32,
            "sequence_stride": 8,
            "num_mel_bins": 6,
            "top_db": 20.0,
            "ref_power": 0.5,
            "window": None,
            "sampling_rate": 4000,
        },
    ]:
        ours = keras.layers.MelSpectrogram(**kwargs)(AUDIO).numpy()
        ref = np.asarray(theirs.layers.MelSpectrogram(**kwargs)(AUDIO))
        np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)
