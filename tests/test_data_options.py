"""``tf.data.Options`` (typed, mergeable settings a dataset carries), ``tf.data.Iterator``
and ``tf.data.NumpyIterator``; the same program runs in TensorFlow when it is installed."""

import numpy as np
import pytest

import ferrotape as ft


def options_program(tf):
    out = []
    options = tf.data.Options()
    out.append((options.deterministic, options.threading.private_threadpool_size))
    options.deterministic = False
    options.threading.private_threadpool_size = 4
    options.experimental_optimization.map_fusion = True
    for bad in ("deterministic", "threading.private_threadpool_size", "unknown"):
        try:
            target = options.threading if "." in bad else options
            setattr(target, bad.split(".")[-1], "x")
            out.append("set")
        except (TypeError, AttributeError) as error:
            out.append(type(error).__name__)
    ds = tf.data.Dataset.range(3).with_options(options)
    got = ds.options()
    out.append((got.deterministic, got.threading.private_threadpool_size))
    out.append(got.experimental_optimization.map_fusion)
    more = tf.data.Options()
    more.deterministic = True
    more.experimental_slack = True
    merged = ds.with_options(more).options()
    out.append(
        (merged.deterministic, merged.experimental_slack, merged.threading.private_threadpool_size)
    )
    out.append(options.merge(more).deterministic)
    out.append((tf.data.Options() == tf.data.Options(), options == tf.data.Options()))
    out.append(tf.data.Options().experimental_deterministic)
    out.append([int(x) for x in ds])
    return out


def test_options_by_hand():
    out = options_program(ft)
    assert out[0] == (None, None)  # unset: the default applies
    assert out[1:4] == ["TypeError", "TypeError", "AttributeError"]
    assert out[4] == (False, 4) and out[5] is True
    assert out[6] == (True, True, 4)  # the later options win, the rest is kept
    assert out[7] is True and out[8] == (True, False) and out[9] is None
    assert out[10] == [0, 1, 2]


def test_options_match_tensorflow():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    assert options_program(ft) == options_program(tf)


def test_iterators():
    ds = ft.data.Dataset.from_tensor_slices(np.arange(3.0))
    it = iter(ds)
    assert isinstance(it, ft.data.Iterator) and iter(it) is it
    assert [float(it.get_next()), float(next(it)), float(it.get_next())] == [0.0, 1.0, 2.0]
    with pytest.raises(ft.errors.OutOfRangeError, match="End of sequence"):
        it.get_next()
    numpy_it = ds.as_numpy_iterator()
    assert isinstance(numpy_it, ft.data.NumpyIterator)
    assert float(next(numpy_it)) == 0.0 and list(numpy_it) == [1.0, 2.0]
    with pytest.raises(TypeError, match="Options"):
        ds.with_options({"deterministic": False})
