"""``keras.layers.IntegerLookup``: Keras 3's index space (mask, OOV indices, vocabulary),
every output mode, ``invert``, ``adapt`` (frequency order, ``max_tokens``, tf-idf weights),
configs and errors. One program runs in both libraries where TensorFlow is installed; the
expected values are written out for the run without it."""

import numpy as np
import pytest

import ferrotape as ft

X2 = np.array([[12, 1138, 42], [42, 1000, 36]])
X1 = np.array([12, 42, 36])
CORPUS = np.array([[12, 1138, 42], [42, 1000, 36], [42, 42, 7]])


def lookup_program(keras):
    L = keras.layers.IntegerLookup
    out = []

    def value(y):
        return (str(np.asarray(y).dtype), np.asarray(y).tolist())

    for mode in ("int", "one_hot", "multi_hot", "count", "tf_idf"):
        extra = {"idf_weights": [0.5, 1.0, 2.0]} if mode == "tf_idf" else {}
        layer = L(vocabulary=[12, 36, 1138], output_mode=mode, **extra)
        out += [value(layer(X2)), value(layer(X1))]
    masked = L(vocabulary=[12, 36, 1138], mask_token=0)
    out += [
        value(masked(np.array([[12, 0, 5]]))),
        masked.get_vocabulary(),
        masked.vocabulary_size(),
    ]
    two = L(vocabulary=[12, 36, 1138], num_oov_indices=2)
    out += [value(two(np.array([[12, 7, 8, -3]]))), two.get_vocabulary()]
    out.append(value(L(vocabulary=[12, 36, 1138], invert=True)(np.array([[0, 1, 2, 3, 4, 9]]))))
    inverted = L(vocabulary=[12, 36, 1138], invert=True, mask_token=0)
    out.append(value(inverted(np.array([[0, 1, 2, 3, 4, 9]]))))
    adapted = L()
    adapted.adapt(CORPUS)
    out.append(adapted.get_vocabulary())
    tfidf = L(max_tokens=3, output_mode="tf_idf")
    tfidf.adapt(CORPUS)
    out.append(tfidf.get_vocabulary())
    out.append(np.round(np.asarray(tfidf(np.array([[42, 42, 9]]))), 5).tolist())
    out.append(L(vocabulary=[-1, 12, 36]).get_vocabulary())  # leading special tokens
    hot = L(vocabulary=[12, 36], mask_token=0, output_mode="multi_hot")
    out += [value(hot(np.array([[12, 0, 5]]))), hot.get_vocabulary()]
    padded = L(vocabulary=[12, 36], output_mode="count", max_tokens=5, pad_to_max_tokens=True)
    out.append(value(padded(np.array([[36, 36, 4]]))))
    out.append(value(L(vocabulary=[12, 36])(5)))
    config = L(vocabulary=[12, 36], mask_token=0).get_config()
    out.append({k: v for k, v in config.items() if k not in ("name", "dtype", "trainable")})
    return [
        [int(v) if isinstance(v, np.integer) else v for v in o] if isinstance(o, list) else o
        for o in out
    ]


EXPECTED = [
    ("int64", [[1, 3, 0], [0, 0, 2]]),
    ("int64", [1, 0, 2]),
    (
        "int64",
        [[[0, 1, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0]], [[1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]]],
    ),
    ("int64", [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]]),
    ("int64", [[1, 1, 0, 1], [1, 0, 1, 0]]),
    ("int64", [1, 1, 1, 0]),
    ("int64", [[1, 1, 0, 1], [2, 0, 1, 0]]),
    ("int64", [1, 1, 1, 0]),
    # tf-idf: the OOV column weighs the average of the given weights, 7/6.
    ("float32", [[7 / 6, 0.5, 0.0, 2.0], [7 / 3, 0.0, 1.0, 0.0]]),
    ("float32", [7 / 6, 0.5, 1.0, 0.0]),
    ("int64", [[2, 0, 1]]),
    [0, -1, 12, 36, 1138],
    5,
    ("int64", [[2, 1, 0, 1]]),  # 7 mod 2 = 1, 8 mod 2 = 0, -3 mod 2 = 1
    [-1, -1, 12, 36, 1138],
    ("int64", [[-1, 12, 36, 1138, -1, -1]]),
    ("int64", [[0, -1, 12, 36, 1138, -1]]),
    [-1, 42, 1138, 1000, 36, 12, 7],  # by count, ties by the larger token first
    [-1, 42, 1138],
    # 42 is in all 3 documents: idf log(1 + 3 / (1 + 3)), counted twice; 1138 in one:
    # log(1 + 3 / 2); the OOV column (9) weighs their mean.
    [[np.mean([np.log(1.75), np.log(2.5)]), 2 * np.log(1.75), 0.0]],
    [-1, 12, 36],
    ("int64", [[1, 1, 0]]),  # the mask adds nothing, 5 counts as OOV
    [-1, 12, 36],
    ("int64", [[1, 0, 2, 0, 0]]),
    ("int64", 0),
    {
        "invert": False,
        "max_tokens": None,
        "num_oov_indices": 1,
        "oov_token": -1,
        "mask_token": 0,
        "output_mode": "int",
        "sparse": False,
        "pad_to_max_tokens": False,
        "vocabulary_dtype": "int64",
        "idf_weights": None,
        "vocabulary": [12, 36],
        "vocabulary_size": 4,
        "oov_method": "floormod",
        "salt": None,
    },
]


def _close(got, want):
    if isinstance(want, tuple):
        return got[0] == want[0] and np.allclose(got[1], want[1], rtol=1e-6)
    if isinstance(want, list) and want and isinstance(want[0], list):
        return np.allclose(got, want, rtol=1e-5)
    return got == want


def test_integer_lookup_by_hand():
    got = lookup_program(ft.keras)
    assert len(got) == len(EXPECTED)
    for i, (g, w) in enumerate(zip(got, EXPECTED, strict=True)):
        assert _close(g, w), (i, g, w)


def test_integer_lookup_matches_keras():
    pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    import keras

    theirs = lookup_program(keras)
    ours = lookup_program(ft.keras)
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        assert _close(o, t), (i, o, t)


def test_adapt_from_batches_and_datasets():
    layer = ft.keras.layers.IntegerLookup(max_tokens=4)
    layer.adapt(ft.data.Dataset.from_tensor_slices(CORPUS).batch(2))
    assert layer.get_vocabulary() == [-1, 42, 1138, 1000]
    layer.adapt(iter([np.array([5, 5, 6])]), steps=1)
    assert layer.get_vocabulary() == [-1, 5, 6]
    with pytest.raises(ValueError, match="static vocabulary"):
        ft.keras.layers.IntegerLookup(vocabulary=[1, 2]).adapt(CORPUS)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"max_tokens": 1}, ValueError, "max_tokens"),
        ({"num_oov_indices": -1}, ValueError, "num_oov_indices"),
        ({"output_mode": "bag"}, ValueError, "output_mode"),
        ({"invert": True, "output_mode": "count"}, ValueError, "invert"),
        ({"vocabulary": [1, 2, 1]}, ValueError, "repeated"),
        ({"vocabulary": [1, 0], "mask_token": 0}, ValueError, "mask token"),
        ({"vocabulary": [1, 2, 3], "max_tokens": 3}, ValueError, "maximum vocab"),
        ({"vocabulary": [1, 2], "output_mode": "tf_idf"}, ValueError, "idf_weights"),
        ({"vocabulary_dtype": "int32"}, ValueError, "int64"),
        ({"sparse": True, "output_mode": "count"}, ValueError, "sparse"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        ft.keras.layers.IntegerLookup(**kwargs)


def test_call_errors():
    with pytest.raises(ft.errors.InvalidArgumentError, match="num_oov_indices=0"):
        ft.keras.layers.IntegerLookup(vocabulary=[1, 2], num_oov_indices=0)(np.array([3]))
    with pytest.raises(RuntimeError, match="set the layer's vocabulary"):
        ft.keras.layers.IntegerLookup(output_mode="multi_hot")(np.array([3]))
    with pytest.raises(ValueError, match="integers"):
        ft.keras.layers.IntegerLookup(vocabulary=[1, 2])(np.array([1.5]))


@pytest.mark.parametrize("mode", ["int", "multi_hot", "tf_idf"])
def test_an_adapted_vocabulary_survives_the_config(mode):
    layer = ft.keras.layers.IntegerLookup(output_mode=mode, mask_token=0 if mode == "int" else None)
    layer.adapt(CORPUS)
    again = ft.keras.layers.IntegerLookup.from_config(layer.get_config())
    assert again.get_vocabulary() == layer.get_vocabulary()
    x = np.array([[42, 12, 9], [0, 7, 1138]])
    np.testing.assert_allclose(again(x).numpy(), layer(x).numpy(), rtol=1e-6)
