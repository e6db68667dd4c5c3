"""Python's object protocols as TensorFlow answers them: copy, deepcopy and pickle of tensors,
variables, dtypes, layers and models; ``ref()``/``deref()``; numpy's ``__array__`` contract
(a read-only view where the layout allows, ``copy=`` honoured); bfloat16 through ml_dtypes."""

import copy
import gc
import pickle

import ml_dtypes
import numpy as np
import pytest

import ferrotape as ft

DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64", "bool"]


def _values(dtype):
    if dtype == "bool":
        return ft.constant([[True, False, True]])
    return ft.cast(ft.constant([[1.5, -2.25, 3.0]]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_tensor_pickles_as_its_values_and_dtype(dtype):
    t = _values(dtype)
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype == t.dtype and back.shape == t.shape
    np.testing.assert_array_equal(np.asarray(back), np.asarray(t))


def test_tensors_are_immutable_so_copies_are_the_tensor():
    t = ft.constant([1.0, 2.0])
    assert copy.copy(t) is t
    assert copy.deepcopy(t) is t
    scalar = pickle.loads(pickle.dumps(ft.constant(3)))
    assert scalar.shape == [] and int(scalar) == 3
    empty = pickle.loads(pickle.dumps(ft.zeros([0, 4])))
    assert empty.shape == [0, 4]


def test_copy_shares_a_variable_deepcopy_and_pickle_make_a_new_one():
    v = ft.Variable([1.0, 2.0], name="w", trainable=False)
    assert copy.copy(v) is v
    for twin in (copy.deepcopy(v), pickle.loads(pickle.dumps(v))):
        assert twin is not v
        assert twin.name == v.name and twin.trainable is False and twin.dtype == v.dtype
        np.testing.assert_array_equal(twin.numpy(), [1.0, 2.0])
        twin.assign([5.0, 5.0])
        np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_a_structure_deepcopies_each_variable_once():
    v = ft.Variable(1.0)
    a, b = copy.deepcopy([v, v])
    assert a is b and a is not v


def test_dtypes_pickle_and_copy():
    for dtype in (ft.float32, ft.bfloat16, ft.int64, ft.bool):
        assert pickle.loads(pickle.dumps(dtype)) == dtype
        assert copy.deepcopy(dtype) is dtype


def test_ref_compares_and_hashes_by_identity():
    t, same_values = ft.constant([1.0]), ft.constant([1.0])
    v = ft.Variable(2.0)
    refs = {t.ref(): "t", v.ref(): "v"}
    assert refs[t.ref()] == "t" and refs[v.ref()] == "v"
    assert same_values.ref() not in refs
    assert t.ref() == t.ref() and t.ref() != same_values.ref()
    assert t.ref().deref() is t and v.ref().deref() is v
    assert "Reference wrapping" in repr(t.ref())


def test_asarray_is_a_read_only_view_without_a_copy():
    t = ft.constant([[1.0, 2.0], [3.0, 4.0]])
    view = np.asarray(t)
    assert not view.flags.writeable
    assert np.shares_memory(view, np.asarray(t))
    with pytest.raises(ValueError):
        view[0, 0] = 9.0
    no_copy = np.array(t, copy=False)
    assert np.shares_memory(no_copy, view)
    fresh = np.array(t)  # numpy's default is copy=True
    assert fresh.flags.writeable and not np.shares_memory(fresh, view)
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), [[1, 2], [3, 4]])


def test_copy_false_raises_where_a_copy_is_needed():
    strided = ft.constant(np.arange(12.0, dtype=np.float32).reshape(3, 4))[:, ::2]
    np.testing.assert_array_equal(np.asarray(strided), [[0, 2], [4, 6], [8, 10]])
    with pytest.raises(ValueError, match="without a copy"):
        np.array(strided, copy=False)
    with pytest.raises(ValueError, match="needs a copy"):
        np.array(ft.constant([1.0]), dtype=np.float64, copy=False)


def test_a_variables_view_keeps_the_value_it_was_taken_at():
    v = ft.Variable([1.0, 2.0])
    view = np.asarray(v)
    v.assign_add([10.0, 10.0])
    v.assign([7.0, 7.0])
    np.testing.assert_array_equal(view, [1.0, 2.0])
    np.testing.assert_array_equal(v.numpy(), [7.0, 7.0])


def test_a_view_outlives_its_tensor():
    view = np.asarray(ft.constant(np.arange(1000, dtype=np.float32)) * 2.0)
    import gc

    gc.collect()
    np.testing.assert_array_equal(view[:3], [0.0, 2.0, 4.0])


def test_bfloat16_comes_out_as_ml_dtypes_bfloat16_and_goes_back_in():
    t = ft.cast(ft.constant([1.5, -2.25]), ft.bfloat16)
    values = t.numpy()
    assert values.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(values.astype(np.float32), [1.5, -2.25])
    back = ft.constant(np.array([0.5, 3.0], dtype=ml_dtypes.bfloat16))
    assert back.dtype == ft.bfloat16
    np.testing.assert_array_equal(ft.cast(back, ft.float32).numpy(), [0.5, 3.0])


def test_matplotlib_plots_a_tensor():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots()
    (line,) = axes.plot(ft.constant([1.0, 4.0, 9.0]))
    np.testing.assert_array_equal(line.get_ydata(), [1.0, 4.0, 9.0])
    plt.close(figure)


def _model(seed):
    ft.random.set_seed(seed)
    model = ft.keras.Sequential(
        [
            ft.keras.Input((4,)),
            ft.keras.layers.Dense(8, activation="relu"),
            ft.keras.layers.BatchNormalization(),
            ft.keras.layers.Dropout(0.25, seed=3),
            ft.keras.layers.Dense(3),
        ]
    )
    model.compile(
        optimizer="adam",
        loss=ft.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


DATA = (
    np.random.RandomState(0).rand(64, 4).astype(np.float32),
    np.arange(64) % 3,
)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_trained_model_round_trips_and_predicts_the_same(how):
    model = _model(0)
    model.fit(*DATA, epochs=1, batch_size=16, verbose=0)
    twin = copy.deepcopy(model) if how == "deepcopy" else pickle.loads(pickle.dumps(model))
    x = DATA[0]
    np.testing.assert_array_equal(twin.predict(x, verbose=0), model.predict(x, verbose=0))
    for mine, theirs in zip(model.weights, twin.weights, strict=True):
        assert mine is not theirs
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_model_trains_the_same_and_apart(how):
    model = _model(1)
    model.fit(*DATA, epochs=1, batch_size=16, verbose=0)
    twin = copy.deepcopy(model) if how == "deepcopy" else pickle.loads(pickle.dumps(model))
    before = [w.numpy() for w in model.weights]
    # The copy's dropout streams start again from their seeds: train both from there.
    for layer in (model.layers[2], twin.layers[2]):
        layer._make_native()
    # The original's traced step replays the dropout layer it was traced with: trace it again.
    model.make_train_function(force=True)
    twin.fit(*DATA, epochs=2, batch_size=16, shuffle=False, verbose=0)
    for weight, kept in zip(model.weights, before, strict=True):
        np.testing.assert_array_equal(weight.numpy(), kept)  # the original did not move
    model.fit(*DATA, epochs=2, batch_size=16, shuffle=False, verbose=0)
    for mine, theirs in zip(model.weights, twin.weights, strict=True):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)


def test_dlpack_export_shares_memory_read_only_with_numpy():
    t = ft.constant([[1.0, 2.0], [3.0, 4.0]])
    assert t.__dlpack_device__() == (1, 0)
    shared = np.from_dlpack(t)
    assert np.shares_memory(shared, np.asarray(t)) and not shared.flags.writeable
    np.testing.assert_array_equal(shared, [[1.0, 2.0], [3.0, 4.0]])
    strided = ft.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3))[:, ::2]
    np.testing.assert_array_equal(np.from_dlpack(strided), [[0.0, 2.0], [3.0, 5.0]])
    with pytest.raises(ValueError, match="without a copy"):
        strided.__dlpack__(copy=False)


def test_dlpack_capsules_round_trip():
    dlpack = ft.experimental.dlpack
    v = ft.Variable([1, 2, 3])
    back = dlpack.from_dlpack(dlpack.to_dlpack(v))
    assert back.dtype == ft.int32
    v.assign([7, 8, 9])  # the variable copies its shared buffer before writing
    np.testing.assert_array_equal(back.numpy(), [1, 2, 3])


def test_dlpack_import_shares_memory_without_a_copy():
    source = np.arange(6.0).reshape(2, 3)
    imported = ft.experimental.dlpack.from_dlpack(source)
    assert imported.dtype == ft.float64 and imported.shape == (2, 3)
    assert np.shares_memory(np.asarray(imported), source)
    source[0, 0] = 99.0  # shared memory, as TensorFlow's import: the producer's write shows
    assert imported.numpy()[0, 0] == 99.0
    np.testing.assert_array_equal((imported * 2).numpy(), source * 2)
    # The tensor keeps the memory alive after the producer's last reference is gone.
    del source
    gc.collect()
    np.testing.assert_array_equal(imported.numpy()[1], [3.0, 4.0, 5.0])


@pytest.mark.parametrize(
    "source",
    [
        np.arange(4, dtype=np.float32),
        np.arange(4, dtype=np.float16),
        np.arange(4, dtype=np.int32),
        np.arange(4, dtype=np.int64),
        np.arange(4).astype("bfloat16"),
    ],
    ids=lambda a: str(a.dtype),
)
def test_dlpack_import_shares_every_dtype_held_as_is(source):
    shared = ft._core.share_numpy(source)
    assert shared is not None
    assert shared.numpy().dtype == source.dtype
    np.testing.assert_array_equal(shared.numpy().astype(np.float64), np.arange(4.0))


@pytest.mark.parametrize(
    "source",
    [
        np.arange(6.0).reshape(2, 3)[:, ::2],  # strided
        np.array([True, False]),  # numpy does not promise bytes of 0 or 1
        np.frombuffer(b"\0" + np.arange(3.0, dtype=np.float32).tobytes(), np.float32, 3, 1),
    ],
    ids=["strided", "bool", "misaligned"],
)
def test_dlpack_import_copies_what_cannot_be_lent(source):
    assert ft._core.share_numpy(source) is None
    imported = ft.experimental.dlpack.from_dlpack(np.ascontiguousarray(source))
    np.testing.assert_array_equal(imported.numpy(), source)
    copied = ft.convert_to_tensor(source)
    np.testing.assert_array_equal(copied.numpy(), source)


def test_a_variable_made_from_an_import_never_writes_the_producer():
    source = np.ones(3, dtype=np.float32)
    v = ft.Variable(ft.experimental.dlpack.from_dlpack(source))
    v.assign_add([1.0, 2.0, 3.0])
    ft.keras.optimizers.SGD(0.5).apply_gradients([(ft.ones(3), v)])
    np.testing.assert_array_equal(source, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(v.numpy(), [1.5, 2.5, 3.5])


def test_dlpack_with_torch_both_ways():
    torch = pytest.importorskip("torch")
    t = ft.constant([[1.0, 2.0], [3.0, 4.0]])
    shared = torch.from_dlpack(t)
    assert shared.data_ptr() == np.asarray(t).ctypes.data  # no copy
    assert shared.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert torch.as_tensor(t).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    source = torch.arange(3.0)
    back = ft.experimental.dlpack.from_dlpack(source)
    assert np.asarray(back).ctypes.data == source.data_ptr()  # no copy
    np.testing.assert_array_equal(back.numpy(), [0.0, 1.0, 2.0])
    with pytest.raises(TypeError, match="from_dlpack.*bfloat16"):
        ft.experimental.dlpack.from_dlpack(torch.ones(2, dtype=torch.bfloat16))
