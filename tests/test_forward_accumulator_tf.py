"""``ForwardAccumulator`` programs run in TensorFlow and in ferrotape, compared value by value
(the comparison of ``test_tf_reference``). Skipped without TensorFlow."""

import numpy as np
import pytest

# test_tf_reference skips itself, and so this module, when TensorFlow is not installed.
from test_tf_reference import assert_same, error_name, real_tf, to_plain

import ferrotape

PROGRAMS = []


def program(fn):
    PROGRAMS.append(fn)
    return fn


def data(seed, shape):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


@program
def elementwise_and_broadcasting(tf):
    x = tf.constant(data(0, (2, 3)))
    b = tf.constant(data(1, (3,)))
    with tf.autodiff.ForwardAccumulator(
        [x, b], [tf.ones_like(x), tf.constant(data(2, (3,)))]
    ) as acc:
        y = tf.tanh(x * b + tf.exp(b)) / (1.0 + x**2)
        s = tf.reduce_sum(y, axis=1)
        m = tf.reduce_max(y)
    return acc.jvp([y, s, m])


@program
def matmul_softmax_gather_reshape(tf):
    x = tf.constant(data(3, (4, 3)))
    w = tf.constant(data(4, (3, 5)))
    with tf.autodiff.ForwardAccumulator(w, tf.constant(data(5, (3, 5)))) as acc:
        logits = tf.matmul(x, w)
        p = tf.nn.softmax(logits)
        g = tf.gather(p, [2, 0, 2])
        r = tf.transpose(tf.reshape(g, (5, 3)))
    return acc.jvp({"logits": logits, "p": p, "g": g, "r": r})


@program
def conv2d(tf):
    x = tf.constant(data(6, (1, 5, 5, 2)))
    f = tf.constant(data(7, (3, 3, 2, 3)))
    with tf.autodiff.ForwardAccumulator(
        (x, f), (tf.constant(data(8, (1, 5, 5, 2))), tf.ones_like(f))
    ) as acc:
        y = tf.nn.conv2d(x, f, strides=1, padding="SAME")
    return acc.jvp(y)


@program
def variables_dense_and_unconnected(tf):
    v = tf.Variable(data(9, (2, 2)))
    c = tf.constant(data(10, (2, 2)))
    with tf.autodiff.ForwardAccumulator(v, tf.constant(data(11, (2, 2)))) as acc:
        y = tf.matmul(v, c) + v
        z = c * 2.0
        i = tf.cast(y, tf.int32)
    return acc.jvp(v), acc.jvp(y), acc.jvp(z), acc.jvp(z, "zero"), acc.jvp(i)


@program
def control_flow(tf):
    x = tf.constant(0.7)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(2.0)) as acc:
        y = tf.cond(x > 0.0, lambda: tf.sin(x) * x, lambda: tf.cos(x))
        _, z = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), (0, x))
    return acc.jvp([y, z])


@program
def hessian_vector_products(tf):
    x = tf.constant([1.0, 2.0, 0.5])
    v = tf.constant([1.0, -1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            y = tf.reduce_sum(tf.sin(x) * x**2)
        reverse_over_forward = tape.gradient(acc.jvp(y), x)
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.sin(x) * x**2)
        forward_over_reverse = acc.jvp(tape.gradient(y, x))
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sin(x)
        ignored = tape.gradient(acc.jvp(y), x)
    return reverse_over_forward, forward_over_reverse, ignored


@program
def nested_accumulators(tf):
    primal = tf.constant(1.1)
    with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.0)) as outer:
        with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.0)) as inner:
            out = primal ** tf.constant(3.5)
    before = primal * 2.0
    return inner.jvp(out), outer.jvp(inner.jvp(out)), inner.jvp(outer.jvp(out)), outer.jvp(before)


@program
def errors(tf):
    x = tf.constant([1.0, 2.0])
    acc = tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0]))

    def enter_twice():
        with acc:
            acc.__enter__()

    return [
        error_name(lambda: tf.autodiff.ForwardAccumulator([x], [x, x])),
        error_name(lambda: tf.autodiff.ForwardAccumulator([x], (x,))),
        error_name(lambda: tf.autodiff.ForwardAccumulator(x, [1.0, 0.0])),
        error_name(lambda: tf.autodiff.ForwardAccumulator([x, x], [x, x])),
        error_name(lambda: tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0], tf.float64))),
        error_name(enter_twice),
        error_name(lambda: acc.jvp(x, unconnected_gradients="sometimes")),
    ]


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda fn: fn.__name__)
def test_matches_tensorflow(prog):
    assert_same(to_plain(prog(real_tf)), to_plain(prog(ferrotape)))
