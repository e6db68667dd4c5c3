"""GradientTape, Variable, Tensor and Module semantics (DESIGN.md section 1), checked against what
TensorFlow 2.21 does.

Where TensorFlow reports through its own logger rather than Python's `warnings` (watching an
integer tensor), either channel is accepted.
"""

import gc
import logging
import os
import re
import subprocess
import sys
import threading
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import ferrotape as tf

NON_PERSISTENT_MESSAGE = (
    "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)"
)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6):
    assert actual is not None, "expected a tensor, got None"
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


def watched_square(x):
    """A persistent tape that watched `x` and recorded y = x * x."""
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    return tape, y


# ---------------------------------------------------------------- sources and targets as nests


def test_gradient_of_a_single_tensor_source_is_a_tensor():
    x = tf.constant(3.0)
    tape, y = watched_square(x)
    grad = tape.gradient(y, x)
    assert isinstance(grad, tf.Tensor)
    assert grad.dtype == tf.float32 and tuple(grad.shape) == ()
    assert_close(grad, 6.0)


def test_gradient_of_a_single_variable_source_is_a_tensor():
    v = tf.Variable([1.0, -2.0])
    with tf.GradientTape() as tape:
        y = v * v
    grad = tape.gradient(y, v)
    assert isinstance(grad, tf.Tensor) and not isinstance(grad, tf.Variable)
    assert_close(grad, [2.0, -4.0])


def test_sources_list_returns_list():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = a * b
    grads = tape.gradient(y, [a, b])
    assert type(grads) is list and len(grads) == 2
    assert_close(grads[0], 3.0)
    assert_close(grads[1], 2.0)


def test_sources_tuple_returns_tuple():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = a * b
    grads = tape.gradient(y, (a, b))
    assert type(grads) is tuple and len(grads) == 2
    assert_close(grads[0], 3.0)
    assert_close(grads[1], 2.0)


def test_sources_dict_returns_dict():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = a * a * b
    grads = tape.gradient(y, {"b": b, "a": a})
    assert isinstance(grads, dict) and set(grads) == {"a", "b"}
    assert_close(grads["a"], 12.0)
    assert_close(grads["b"], 4.0)


def test_nested_sources_keep_their_structure():
    a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    d = tf.constant(4.0)
    with tf.GradientTape() as tape:
        tape.watch(d)
        y = a + 2.0 * b + 3.0 * c * c + d * d
    grads = tape.gradient(y, {"first": a, "rest": [b, (c, d)]})
    assert set(grads) == {"first", "rest"}
    assert type(grads["rest"]) is list and len(grads["rest"]) == 2
    assert type(grads["rest"][1]) is tuple and len(grads["rest"][1]) == 2
    assert_close(grads["first"], 1.0)
    assert_close(grads["rest"][0], 2.0)
    assert_close(grads["rest"][1][0], 18.0)
    assert_close(grads["rest"][1][1], 8.0)


def test_same_source_twice_gets_the_gradient_twice():
    a = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = a * a
    grads = tape.gradient(y, [a, a])
    assert_close(grads[0], 4.0)
    assert_close(grads[1], 4.0)


def test_non_scalar_target_is_summed():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x  # gradient of sum(x^2)
    assert_close(tape.gradient(y, x), [[2.0, 4.0], [6.0, 8.0]])


def test_broadcast_target_gradient_is_summed_over_broadcast_axes():
    w = tf.Variable([1.0, 2.0, 3.0])
    x = tf.constant([[1.0], [10.0]])
    with tf.GradientTape() as tape:
        y = x * w  # shape (2, 3)
    assert_close(tape.gradient(y, w), [11.0, 11.0, 11.0])


def test_list_of_targets_is_summed():
    # DESIGN.md section 6 (seed 002): one flat result, not one list per target.
    v1, v2 = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        loss1 = v1 * v1
        loss2 = v1 * v2
    grads = tape.gradient([loss1, loss2], [v1, v2])
    assert type(grads) is list and len(grads) == 2
    assert_close(grads[0], 4.0 + 3.0)
    assert_close(grads[1], 2.0)


def test_dict_of_targets_is_summed():
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        targets = {"square": v * v, "cube": v * v * v}
    assert_close(tape.gradient(targets, v), 4.0 + 12.0)


def test_target_equal_to_source_gives_ones():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
    assert_close(tape.gradient(x, x), [1.0, 1.0])


# ---------------------------------------------------------------- unconnected gradients


def test_unconnected_source_is_none():
    a, b = tf.Variable(2.0), tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = a * a
    grads = tape.gradient(y, [a, b])
    assert_close(grads[0], 4.0)
    assert grads[1] is None


def test_source_read_outside_the_tape_is_none():
    x = tf.constant(3.0)
    y = x * x
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = y + 1.0
    assert tape.gradient(z, x) is None


def test_unconnected_zero_enum():
    a, b = tf.Variable(2.0), tf.Variable([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        y = a * a
    grads = tape.gradient(y, [a, b], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert_close(grads[0], 4.0)
    assert grads[1] is not None
    assert tuple(grads[1].shape) == (1, 3) and grads[1].dtype == tf.float32
    assert_close(grads[1], np.zeros((1, 3)))


def test_unconnected_zero_string():
    a = tf.Variable(2.0)
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = a * 3.0
    grads = tape.gradient(y, {"x": x}, unconnected_gradients="zero")
    assert grads["x"].dtype == tf.float64
    assert_close(grads["x"], [0.0, 0.0])


def test_unconnected_none_enum_and_string():
    a, b = tf.Variable(2.0), tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        y = a * a
    assert tape.gradient(y, b, unconnected_gradients=tf.UnconnectedGradients.NONE) is None
    assert tape.gradient(y, b, unconnected_gradients="none") is None


def test_unconnected_gradients_enum_values():
    assert tf.UnconnectedGradients("zero") is tf.UnconnectedGradients.ZERO
    assert tf.UnconnectedGradients("none") is tf.UnconnectedGradients.NONE


def test_unknown_unconnected_gradients_value_raises():
    a = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = a * a
    with pytest.raises(ValueError):
        tape.gradient(y, a, unconnected_gradients="ones")


# ---------------------------------------------------------------- output_gradients


def test_output_gradients_weight_the_target():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    grad = tape.gradient(y, x, output_gradients=tf.constant([1.0, 10.0, 100.0]))
    assert_close(grad, [2.0, 40.0, 600.0])


def test_output_gradients_vector_jacobian_product_of_a_matrix():
    x = tf.constant([1.0, 2.0])
    m = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(m * x, axis=1)  # m @ x
    v = tf.constant([1.0, 0.0, -1.0])
    assert_close(tape.gradient(y, x, output_gradients=v), [-4.0, -4.0])


def test_output_gradients_one_per_target():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y1 = x * x
        y2 = x * x * x
    grad = tape.gradient([y1, y2], x, output_gradients=[tf.constant(1.0), tf.constant(2.0)])
    assert_close(grad, 4.0 + 2.0 * 12.0)


# ---------------------------------------------------------------- integer dtypes


def test_integer_variable_source_and_target_give_none():
    x = tf.Variable(3)
    with tf.GradientTape() as tape:
        y = x * x
    assert y.dtype == tf.int32
    assert tape.gradient(y, x) is None


def test_integer_target_from_float_source_gives_none():
    x = tf.Variable(2.5)
    with tf.GradientTape() as tape:
        y = tf.cast(x * 2.0, tf.int32)
    assert tape.gradient(y, x) is None


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_integer_or_bool_source_gives_none(dtype):
    value = True if dtype == "bool" else 3
    n = tf.constant(value, dtype=getattr(tf, dtype))
    w = tf.Variable(2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tf.GradientTape() as tape:
            tape.watch(n)
            y = tf.cast(n, tf.float32) * w
    grads = tape.gradient(y, [n, w])
    assert grads[0] is None
    assert_close(grads[1], 1.0 if dtype == "bool" else 3.0)


def test_watching_an_integer_tensor_warns(caplog):
    x = tf.constant(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with caplog.at_level(logging.WARNING), tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
    messages = [str(w.message) for w in caught]
    messages += [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("float" in m for m in messages), messages
    assert tape.gradient(y, x) is None


def test_watching_a_float_tensor_does_not_warn():
    x = tf.constant(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
    assert_close(tape.gradient(y, x), 6.0)


def test_float64_source_gets_float64_gradient():
    x = tf.Variable(np.array([1.0, 2.0]))
    assert x.dtype == tf.float64
    with tf.GradientTape() as tape:
        y = x * x
    grad = tape.gradient(y, x)
    assert grad.dtype == tf.float64
    assert_close(grad, [2.0, 4.0])


# ---------------------------------------------------------------- tape lifetime and errors


def test_non_persistent_second_gradient_raises():
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match=re.escape(NON_PERSISTENT_MESSAGE)):
        tape.gradient(y, x)


def test_non_persistent_jacobian_then_gradient_raises():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert_close(tape.jacobian(y, x), [[2.0, 0.0], [0.0, 4.0]])
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def test_gradient_on_a_tape_never_entered_raises():
    tape = tf.GradientTape()
    x = tf.constant(1.0)
    with pytest.raises(RuntimeError):
        tape.gradient(x, x)


def test_reset_outside_the_block_raises():
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        x * x
    with pytest.raises(ValueError):
        tape.reset()
    with pytest.raises(ValueError):
        tf.GradientTape().reset()


def test_stop_recording_outside_the_block_raises():
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        x * x
    with pytest.raises(ValueError), tape.stop_recording():
        pass


def test_entering_an_active_tape_again_raises():
    with tf.GradientTape() as tape, pytest.raises(ValueError), tape:
        pass


def test_re_entering_a_tape_continues_recording():
    x = tf.constant(2.0)
    tape = tf.GradientTape()
    with tape:
        tape.watch(x)
        y = x * x
    z = y * 3.0  # not recorded: the tape is not active here
    with tape:
        w = y * 5.0
    assert_close(tape.gradient(w, x), 20.0)
    assert_close(z, 12.0)


def test_stop_recording_inside_the_block():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
        z = x * x
    assert tape.gradient(y, x) is None
    assert_close(tape.gradient(z, x), 6.0)


def test_reset_inside_the_block_forgets_operations_and_watches():
    x = tf.constant(3.0)
    v = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        before = x * v
        tape.reset()
        after = x * v
    assert tape.gradient(before, [x, v]) == [None, None]
    grads = tape.gradient(after, [x, v])
    assert grads[0] is None  # the watch of x was reset too
    assert_close(grads[1], 3.0)  # v is read again after the reset


def test_gradient_inside_a_non_persistent_block_stops_recording():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        assert_close(tape.gradient(y, x), 6.0)
        z = y * 2.0  # allowed; the tape no longer records
    assert_close(z, 18.0)
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def test_persistent_tape_can_be_used_many_times():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        z = tf.reduce_sum(y * x)
    for _ in range(5):
        assert_close(tape.gradient(y, x), [2.0, 4.0])
        assert_close(tape.gradient(z, x), [3.0, 12.0])
    assert_close(tape.jacobian(y, x), [[2.0, 0.0], [0.0, 4.0]])
    assert_close(tape.gradient(z, x), [3.0, 12.0])


def test_persistent_tape_is_freed_on_del():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    tape.gradient(y, x)
    ref = weakref.ref(tape)
    del tape
    gc.collect()
    assert ref() is None


def test_persistent_gradient_inside_the_block_is_recorded():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x**3
        dy_dx = tape.gradient(y, x)  # recorded on the same tape
    assert_close(dy_dx, 27.0)
    assert_close(tape.gradient(dy_dx, x), 18.0)


def test_variable_watching():
    v = tf.Variable(2.0)
    frozen = tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        y = v * frozen
    grads = tape.gradient(y, [v, frozen])
    assert_close(grads[0], 3.0)
    assert grads[1] is None


def test_watch_accessed_variables_false_needs_watch():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(b)
        y = a * b
    grads = tape.gradient(y, [a, b])
    assert grads[0] is None
    assert_close(grads[1], 2.0)
    watched = tape.watched_variables()
    assert len(watched) == 1 and watched[0] is b


def test_watch_accepts_a_list_of_tensors():
    x, y = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = x * y
    grads = tape.gradient(z, [x, y])
    assert_close(grads[0], 2.0)
    assert_close(grads[1], 1.0)


def test_watched_variables_in_creation_order():
    v1 = tf.Variable(1.0)
    v2 = tf.Variable(2.0)
    v3 = tf.Variable(3.0, trainable=False)
    v4 = tf.Variable(4.0, trainable=False)
    unused = tf.Variable(5.0)
    with tf.GradientTape() as tape:
        tape.watch(v4)
        y = v2 * v1 * v3 * v4
    watched = tape.watched_variables()
    assert isinstance(watched, tuple)
    assert len(watched) == 3
    assert [w is v for w, v in zip(watched, (v1, v2, v4), strict=True)] == [True, True, True]
    assert all(w is not unused for w in watched)
    tape.gradient(y, [v1, v2])
    assert len(tape.watched_variables()) == 3  # still known after a non-persistent gradient


def test_watched_variables_of_a_fresh_tape_is_empty():
    assert tf.GradientTape().watched_variables() == ()


# ---------------------------------------------------------------- nested and parallel tapes


def test_nested_tapes_second_and_third_derivatives():
    x = tf.Variable(2.0)
    with tf.GradientTape() as t3:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = x**4
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert_close(d1, 32.0)  # 4 x^3
    assert_close(d2, 48.0)  # 12 x^2
    assert_close(d3, 48.0)  # 24 x


def test_nested_tapes_through_nonlinear_ops():
    x = tf.constant(0.5)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.math.sin(x) * tf.exp(x)
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    s, c, e = np.sin(0.5), np.cos(0.5), np.exp(0.5)
    assert_close(dy, (c + s) * e)
    assert_close(d2y, 2.0 * c * e)


def test_mixed_partial_derivative():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            z = x * x * y
        dz_dx = inner.gradient(z, x)  # 2 x y
    assert_close(dz_dx, 12.0)
    assert_close(outer.gradient(dz_dx, y), 4.0)  # 2 x


def test_several_active_tapes_each_with_its_own_watched_set():
    x0, x1 = tf.constant(0.0), tf.constant(0.0)
    with tf.GradientTape(persistent=True) as tape0, tf.GradientTape(persistent=True) as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        ys = tf.reduce_sum(tf.math.sin(x0) + tf.nn.sigmoid(x1))
    assert_close(tape0.gradient(ys, x0), 1.0)
    assert tape0.gradient(ys, x1) is None
    assert_close(tape1.gradient(ys, x1), 0.25)
    assert tape1.gradient(ys, x0) is None


def test_inner_tape_does_not_see_operations_before_it_started():
    x = tf.constant(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        y = x * x
        with tf.GradientTape() as inner:
            inner.watch(x)
            z = y * x
    assert_close(inner.gradient(z, x), 4.0)  # y is a constant for the inner tape
    assert_close(outer.gradient(z, x), 12.0)  # 3 x^2


# ---------------------------------------------------------------- jacobian and batch_jacobian


def test_jacobian_shape_is_target_shape_plus_source_shape():
    w = np.arange(24, dtype="float32").reshape(2, 3, 4)
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.constant(w) * x, axis=-1)  # shape (2, 3)
    j = tape.jacobian(y, x)
    assert tuple(j.shape) == (2, 3, 4)
    assert_close(j, w)


def test_jacobian_of_a_scalar_target():
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x * x)
    j = tape.jacobian(y, x)
    assert tuple(j.shape) == (2, 2)
    assert_close(j, [[2.0, 4.0], [6.0, 8.0]])


def test_jacobian_with_nested_sources_and_unconnected_none():
    x = tf.Variable([1.0, 2.0])
    s = tf.Variable(3.0)
    unused = tf.Variable([[1.0]])
    with tf.GradientTape() as tape:
        y = x * s
    j = tape.jacobian(y, {"x": x, "rest": [s, unused]})
    assert tuple(j["x"].shape) == (2, 2)
    assert_close(j["x"], [[3.0, 0.0], [0.0, 3.0]])
    assert tuple(j["rest"][0].shape) == (2,)
    assert_close(j["rest"][0], [1.0, 2.0])
    assert j["rest"][1] is None


def test_jacobian_unconnected_zero():
    x = tf.Variable([1.0, 2.0])
    unused = tf.Variable([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        y = x * 2.0
    j = tape.jacobian(y, unused, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert tuple(j.shape) == (2, 1, 3)
    assert_close(j, np.zeros((2, 1, 3)))


@pytest.mark.parametrize("use_pfor", [True, False])
def test_jacobian_accepts_pfor_and_parallel_iterations(use_pfor):
    x = tf.constant([1.0, 2.0, 3.0])
    xb = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, xb])
        y = x * x
        yb = xb * xb
    j = tape.jacobian(y, x, parallel_iterations=2, experimental_use_pfor=use_pfor)
    assert_close(j, np.diag([2.0, 4.0, 6.0]))
    jb = tape.batch_jacobian(yb, xb, parallel_iterations=2, experimental_use_pfor=use_pfor)
    assert tuple(jb.shape) == (3, 2, 2)
    assert_close(jb, [np.diag(2.0 * row) for row in xb.numpy()])


def test_jacobian_without_pfor_needs_a_persistent_tape():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError):
        tape.jacobian(y, x, experimental_use_pfor=False)


def test_batch_jacobian_example_from_the_tf_docstring():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    batch_jacobian = g.batch_jacobian(y, x)
    assert tuple(batch_jacobian.shape) == (2, 2, 2)
    assert_close(batch_jacobian, [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])


def test_batch_jacobian_shape_with_higher_rank():
    x = tf.constant(np.arange(24, dtype="float32").reshape(2, 3, 4) / 10.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reshape(tf.reduce_sum(x, axis=2), [2, 3, 1]) * tf.constant([1.0, 2.0])  # (2, 3, 2)
    jb = tape.batch_jacobian(y, x)
    assert tuple(jb.shape) == (2, 3, 2, 3, 4)
    expected = np.zeros((2, 3, 2, 3, 4), dtype="float32")
    for i in range(3):
        expected[:, i, 0, i, :] = 1.0
        expected[:, i, 1, i, :] = 2.0
    assert_close(jb, expected)


def test_batch_jacobian_unconnected_is_zeros():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    other = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = other * 2.0
    jb = tape.batch_jacobian(y, x)
    assert jb is not None
    assert tuple(jb.shape) == (2, 2, 3)
    assert_close(jb, np.zeros((2, 2, 3)))


def test_batch_jacobian_first_dimensions_must_match():
    x = tf.constant([[1.0], [2.0], [3.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reshape(x, [1, 3])
    with pytest.raises(ValueError):
        tape.batch_jacobian(y, x)


# ---------------------------------------------------------------- stop_gradient and custom_gradient


def test_stop_gradient_blocks_one_path():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * tf.stop_gradient(x)
    assert_close(tape.gradient(y, x), 3.0)


def test_stop_gradient_only_path_gives_none():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = tf.stop_gradient(x * x)
    assert_close(y, 9.0)
    assert tape.gradient(y, x) is None


def test_custom_gradient_replaces_the_gradient():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))

        return tf.math.log(1 + e), grad

    x = tf.constant(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert_close(tape.gradient(y, x), 1.0)


def test_custom_gradient_receives_the_upstream_gradient():
    @tf.custom_gradient
    def scaled_identity(x):
        def grad(dy):
            return dy * 10.0

        return tf.identity(x), grad

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scaled_identity(x) * tf.constant([3.0, 4.0])
    assert_close(tape.gradient(y, x), [30.0, 40.0])


def test_custom_gradient_with_two_inputs():
    @tf.custom_gradient
    def f(x, y):
        def grad(dz):
            return dz * 2.0, dz * 3.0

        return x * y, grad

    a, b = tf.Variable(5.0), tf.Variable(7.0)
    with tf.GradientTape() as tape:
        z = f(a, b)
    assert_close(z, 35.0)
    grads = tape.gradient(z, [a, b])
    assert_close(grads[0], 2.0)
    assert_close(grads[1], 3.0)


def test_custom_gradient_with_variables_keyword():
    v = tf.Variable(2.0)
    seen = {}

    @tf.custom_gradient
    def scale(x):
        def grad_fn(dy, variables=None):
            seen["variables"] = variables
            return dy * 10.0, [dy * 100.0]

        return x * v, grad_fn

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scale(x)
    assert_close(y, 6.0)
    grad_x, grad_v = tape.gradient(y, [x, v])
    assert_close(grad_x, 10.0)
    assert_close(grad_v, 100.0)
    assert len(seen["variables"]) == 1
    assert_close(seen["variables"][0], 2.0)


def test_custom_gradient_using_variables_needs_the_keyword():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def scale(x):
        def grad_fn(dy):
            return dy * v

        return x * v, grad_fn

    x = tf.constant(3.0)
    with pytest.raises(TypeError), tf.GradientTape() as tape:
        tape.watch(x)
        scale(x)


def test_custom_gradient_second_order():
    @tf.custom_gradient
    def square(x):
        def grad(dy):
            return dy * 2.0 * x

        return x * x, grad

    x = tf.constant(3.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = square(x)
        dy_dx = inner.gradient(y, x)
    assert_close(dy_dx, 6.0)
    assert_close(outer.gradient(dy_dx, x), 2.0)


# ---------------------------------------------------------------- Variable


def test_variable_attributes():
    v = tf.Variable(20.0)
    assert v.dtype == tf.float32
    assert tuple(v.shape) == ()
    assert v.trainable is True
    assert v.name == "Variable:0"
    assert tf.Variable(1.0, name="weights").name == "weights:0"
    assert tf.Variable(1.0, trainable=False).trainable is False


def test_variable_repr_and_str():
    v = tf.Variable(20.0)
    assert repr(v) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=20.0>"
    assert str(v) == repr(v)
    m = tf.Variable([[1.0, 2.0]], name="m")
    assert repr(m) == (
        "<tf.Variable 'm:0' shape=(1, 2) dtype=float32, numpy=array([[1., 2.]], dtype=float32)>"
    )


def test_variable_numpy_read_value_and_value():
    v = tf.Variable([1.0, 2.0])
    assert isinstance(v.numpy(), np.ndarray) and v.numpy().dtype == np.float32
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    read = v.read_value()
    value = v.value()
    assert isinstance(read, tf.Tensor) and isinstance(value, tf.Tensor)
    np.testing.assert_array_equal(read.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(value.numpy(), [1.0, 2.0])
    v.assign([5.0, 6.0])
    # A value read earlier is a snapshot, not a view of the variable.
    np.testing.assert_array_equal(read.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(v.read_value().numpy(), [5.0, 6.0])
    scalar = tf.Variable(3.0).numpy()
    assert isinstance(scalar, np.floating) and scalar.dtype == np.float32


def test_assign_methods_are_in_place():
    v = tf.Variable(10.0)
    same = v
    result = v.assign_sub(3.0)
    assert_close(v, 7.0)
    assert_close(same, 7.0)
    assert_close(result, 7.0)  # the result of assign_sub is usable
    result = v.assign_add(tf.constant(5.0))
    assert_close(v, 12.0)
    assert_close(result.numpy(), 12.0)
    v.assign(1.5)
    assert v.numpy() == np.float32(1.5)


def test_assign_into_a_vector_variable():
    v = tf.Variable([1.0, 2.0, 3.0])
    v.assign_sub(np.array([0.5, 0.5, 0.5]))
    assert_close(v, [0.5, 1.5, 2.5])
    v.assign_add([1.0, 1.0, 1.0])
    assert_close(v, [1.5, 2.5, 3.5])
    assert v.dtype == tf.float32


def test_assign_checks_the_shape():
    v = tf.Variable([1.0, 2.0])
    errors = (ValueError, tf.errors.InvalidArgumentError)
    with pytest.raises(errors):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(errors):
        v.assign_add([1.0, 2.0, 3.0])
    with pytest.raises(errors):
        v.assign_sub(tf.constant([[1.0, 2.0]]))
    assert_close(v, [1.0, 2.0])  # unchanged


def test_assign_checks_the_dtype():
    v = tf.Variable([1.0, 2.0])
    errors = (ValueError, tf.errors.InvalidArgumentError)
    with pytest.raises(errors):
        v.assign(tf.constant([1, 2]))
    with pytest.raises(errors):
        v.assign_sub(tf.constant([1, 2]))
    with pytest.raises(errors):
        v.assign_add(tf.constant([1.0, 2.0], dtype=tf.float64))
    assert_close(v, [1.0, 2.0])


def test_assign_between_steps_affects_later_reads_only():
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = v * v
        v.assign(5.0)
        z = v * 3.0
    assert_close(y, 4.0)
    assert_close(z, 15.0)
    assert_close(tape.gradient(z, v), 3.0)


def test_operators_on_variables():
    v = tf.Variable(2.0)
    cases = {
        "v + 1": (v + 1, 3.0),
        "1 + v": (1 + v, 3.0),
        "v - 0.5": (v - 0.5, 1.5),
        "5 - v": (5 - v, 3.0),
        "v * 3": (v * 3, 6.0),
        "3 * v": (3 * v, 6.0),
        "v / 4": (v / 4, 0.5),
        "1 / v": (1 / v, 0.5),
        "-v": (-v, -2.0),
        "v ** 3": (v**3, 8.0),
        "2 ** v": (2**v, 4.0),
        "abs(-v)": (abs(-v), 2.0),
        "v * v": (v * v, 4.0),
    }
    for name, (result, expected) in cases.items():
        assert isinstance(result, tf.Tensor) and not isinstance(result, tf.Variable), name
        assert result.dtype == tf.float32, name
        assert result.numpy() == pytest.approx(expected), name
    m = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    assert_close(m @ m, [[7.0, 10.0], [15.0, 22.0]])
    assert_close(m[1], [3.0, 4.0])
    assert_close(m[:, 0], [1.0, 3.0])
    np.testing.assert_array_equal((m > 2.0).numpy(), [[False, False], [True, True]])


def test_gradients_through_variable_operators():
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = (1 + v) * (5 - v) / v + v**3 - abs(-v) + 2**v
    # d/dv[(1+v)(5-v)/v] = -5/v^2 - 1; d(v^3)=3v^2; d|v|=1; d(2^v)=2^v ln 2
    expected = -5.0 / 4.0 - 1.0 + 12.0 - 1.0 + 4.0 * np.log(2.0)
    assert_close(tape.gradient(y, v), expected)


# ---------------------------------------------------------------- Tensor


def test_tensor_str_and_repr():
    t = tf.constant(40.0)
    assert str(t) == "tf.Tensor(40.0, shape=(), dtype=float32)"
    assert repr(t) == "<tf.Tensor: shape=(), dtype=float32, numpy=40.0>"
    assert str(tf.constant(27000)) == "tf.Tensor(27000, shape=(), dtype=int32)"
    assert str(tf.constant([1.0, 8.0, 27.0])) == (
        "tf.Tensor([ 1.  8. 27.], shape=(3,), dtype=float32)"
    )
    assert repr(tf.constant([1.0, 2.0])) == (
        "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    )
    # Formatting goes through the NumPy value, as TF's EagerTensor.__format__ does.
    assert f"{t}" == "40.0"
    assert f"{tf.constant([1.0, 8.0])}" == "[1. 8.]"
    assert f"{tf.constant(0.5):.3f}" == "0.500"


def test_scalar_repr_uses_the_python_value():
    # TF's numpy_text: a scalar's repr is repr(value.item()), the float32 widened to a float.
    assert (
        repr(tf.constant(0.1)) == "<tf.Tensor: shape=(), dtype=float32, numpy=0.10000000149011612>"
    )
    assert repr(tf.Variable(0.1)) == (
        "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=0.10000000149011612>"
    )
    assert str(tf.constant(0.1)) == "tf.Tensor(0.1, shape=(), dtype=float32)"


def test_tensor_conversions():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert tuple(t.shape) == (2, 2)
    assert isinstance(t.numpy(), np.ndarray)
    np.testing.assert_array_equal(np.asarray(t), [[1.0, 2.0], [3.0, 4.0]])
    assert float(tf.constant(2.5)) == 2.5
    assert int(tf.constant(7)) == 7
    assert bool(tf.constant(True)) is True
    rows = list(t)
    assert len(rows) == 2 and tuple(rows[0].shape) == (2,)
    assert_close(rows[1], [3.0, 4.0])


# ---------------------------------------------------------------- Module


class Inner(tf.Module):
    def __init__(self, value):
        super().__init__()
        self.w = tf.Variable(value)


class Outer(tf.Module):
    def __init__(self):
        super().__init__()
        self.a = tf.Variable(1.0)
        self.frozen = tf.Variable(2.0, trainable=False)
        self.layers = [tf.Variable(3.0), tf.Variable(4.0)]
        self.table = {"k2": tf.Variable(6.0), "k1": tf.Variable(5.0)}
        self.inner = Inner(7.0)
        self.nested = [Inner(8.0)]
        self.constant = tf.constant(9.0)
        self.label = "not a variable"


def values(variables):
    return sorted(float(v.numpy()) for v in variables)


def test_module_collects_variables_from_attributes_lists_dicts_and_submodules():
    m = Outer()
    assert isinstance(m.trainable_variables, tuple)
    assert isinstance(m.variables, tuple)
    assert values(m.trainable_variables) == [1.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    assert values(m.variables) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    assert all(isinstance(v, tf.Variable) for v in m.variables)
    submodules = m.submodules
    assert len(submodules) == 2
    assert submodules[0] is m.inner and submodules[1] is m.nested[0]


def test_module_variable_order_follows_tf():
    # TF walks attributes sorted by name (dict keys sorted too), then recurses into submodules.
    m = Outer()
    assert [float(v.numpy()) for v in m.trainable_variables] == [1, 3, 4, 5, 6, 7, 8]
    assert [float(v.numpy()) for v in m.variables] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_module_shared_variable_is_listed_once():
    m = Outer()
    m.alias = m.a
    assert len(m.trainable_variables) == 7


def test_module_variables_drive_a_gradient():
    m = Outer()
    with tf.GradientTape() as tape:
        loss = sum(m.variables)
    grads = tape.gradient(loss, m.trainable_variables)
    assert len(grads) == 7
    for g in grads:
        assert_close(g, 1.0)


# ---------------------------------------------------------------- threads


def test_tapes_in_two_threads_are_independent():
    barrier = threading.Barrier(2)

    def worker(scale):
        x = tf.Variable(float(scale))
        barrier.wait(timeout=30)
        for _ in range(200):
            with tf.GradientTape() as tape:
                y = x * x * scale
            g = tape.gradient(y, x)
            assert g is not None and abs(float(g.numpy()) - 2.0 * scale * scale) < 1e-3
        return scale

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(worker, s) for s in (2.0, 3.0)]
        assert [f.result(timeout=60) for f in futures] == [2.0, 3.0]


def test_large_gradients_from_the_main_thread_and_another_at_once_agree():
    # The main thread (which imported ferrotape) is one of the compute pool's threads; another
    # thread's ops go to the pool's own threads. Both at once must give the single-thread
    # results, and neither may wait on the other forever.
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(32, 28, 28, 8)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(3, 3, 8, 16)).astype(np.float32))

    def gradient():
        with tf.GradientTape() as tape:
            y = tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME"))
            loss = tf.reduce_sum(y * y)
        return tape.gradient(loss, w).numpy()

    expected = gradient()

    def worker():
        return [gradient() for _ in range(5)]

    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(worker)
        mine = [gradient() for _ in range(5)]
        theirs = future.result(timeout=120)
    for g in mine + theirs:
        np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_second_thread_computes_whatever_the_pool_size(threads):
    # With one thread in all the main thread stays out of the pool (it would be the pool's
    # only thread, and another thread's kernels would wait for it forever).
    code = (
        "import threading, numpy as np, ferrotape as tf\n"
        "x = tf.constant(np.ones((400, 400), np.float32))\n"
        "out = []\n"
        "t = threading.Thread(target=lambda: out.append(float(tf.reduce_sum(x @ x))))\n"
        "t.start(); t.join(60)\n"
        "print(out, float(tf.reduce_sum(x * 2.0)))\n"
    )
    env = {**os.environ, "RAYON_NUM_THREADS": threads}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[64000000.0]", "320000.0"]


def test_tape_stack_is_per_thread():
    x = tf.constant(2.0)
    out = {}

    def compute():
        out["y"] = x * x

    with tf.GradientTape() as tape:
        tape.watch(x)
        thread = threading.Thread(target=compute)
        thread.start()
        thread.join()
        z = x * 3.0
    grads = tape.gradient([out["y"], z], x)
    # Only z was recorded: the other thread has no active tape.
    assert_close(grads, 3.0)


# ---------------------------------------------------------------- conversion of Python values


def test_python_values_become_float32_and_int32():
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(2).dtype == tf.int32
    assert tf.constant([1, 2.5]).dtype == tf.float32
    assert tf.constant(True).dtype == tf.bool
    assert tf.convert_to_tensor(1.0).dtype == tf.float32
    assert tf.Variable(30).dtype == tf.int32
    assert tf.Variable(30.0).dtype == tf.float32
    assert tf.constant(1, dtype=tf.float32).numpy() == np.float32(1.0)


def test_numpy_arrays_keep_their_dtype():
    assert tf.constant(np.array([1.0, 2.0])).dtype == tf.float64
    assert tf.constant(np.array([1, 2])).dtype == tf.int64
    assert tf.constant(np.array([1, 2], dtype=np.int32)).dtype == tf.int32
    assert tf.constant(np.float32(1.0)).dtype == tf.float32
    assert tf.Variable(np.zeros(3)).dtype == tf.float64
    assert tf.convert_to_tensor(np.ones((2, 2), dtype=np.float16)).dtype == tf.float16


def test_float_variable_times_int64_array_is_float32():
    a = tf.Variable(2.0)
    x = np.asarray([0, 1, 2, 3])
    assert x.dtype == np.int64
    for result in (a * x, x * a, a * x + 1, x - a):
        assert result.dtype == tf.float32
    assert_close(a * x, [0.0, 2.0, 4.0, 6.0])
    assert_close(x * a, [0.0, 2.0, 4.0, 6.0])
    assert_close(x - a, [-2.0, -1.0, 0.0, 1.0])
    with tf.GradientTape() as tape:
        y = a * x
    assert_close(tape.gradient(y, a), 6.0)


def test_float32_tensor_with_float64_array_is_float32():
    t = tf.constant([1.0, 2.0])
    result = t + np.array([0.5, 0.25])
    assert result.dtype == tf.float32
    assert_close(result, [1.5, 2.25])


def test_python_scalars_take_the_tensor_dtype():
    assert (tf.constant(1.0) + 1).dtype == tf.float32
    assert (tf.constant(1.0, dtype=tf.float64) * 2.0).dtype == tf.float64
    assert (tf.constant(3) * 2).dtype == tf.int32


def test_mixing_tensor_dtypes_raises():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant(1.0) + tf.constant(1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant(1.0) * tf.constant(1.0, dtype=tf.float64)


# TensorFlow 2.21's answers, checked with its eager runtime.


def test_a_variable_target_is_its_own_gradient():
    v = tf.Variable([1.0, 2.0])
    w = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = v * w
    np.testing.assert_array_equal(tape.gradient(v, v).numpy(), [1.0, 1.0])
    dv, dw = tape.gradient([v, y], [v, w])
    np.testing.assert_array_equal(dv.numpy(), [4.0, 4.0])  # 1 from v itself, w from y
    assert float(dw) == 3.0
    seeded = tape.gradient(v, [v, w], output_gradients=tf.constant([2.0, 5.0]))
    np.testing.assert_array_equal(seeded[0].numpy(), [2.0, 5.0])
    assert seeded[1] is None


def test_max_of_a_list_of_variables_differentiates_to_the_largest():
    a, b = tf.Variable(1.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        m = max([a, b])
    da, db = tape.gradient(m, [a, b])
    assert da is None and float(db) == 1.0


def test_watching_something_that_is_not_a_tensor_is_a_value_error():
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="Passed in object 3.0 of type 'float', not tf.Tensor"):
            tape.watch(3.0)


@pytest.mark.parametrize("target_shape, source_shape", [((2,), (2, 1)), ((2, 1), (2,))])
def test_batch_jacobian_needs_a_batch_axis_and_another(target_shape, source_shape):
    x = tf.ones(source_shape)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reshape(tf.reduce_sum(x, axis=list(range(1, len(source_shape)))), target_shape)
    bad = target_shape if len(target_shape) < 2 else source_shape
    with pytest.raises(ValueError, match=rf"Shape \({bad[0]},\) must have rank at least 2"):
        tape.batch_jacobian(y, x)
