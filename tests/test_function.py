"""``ft.function``: traces recorded once and replayed from Rust, with TensorFlow's semantics.

Every replayed result is compared with the same steps run eagerly; refused traces must run
eagerly (never replay something wrong) and say why once.
"""

import sys
import warnings

import numpy as np
import pytest

import ferrotape as ft

RNG = np.random.default_rng(0)


def rand(*shape):
    return ft.constant(RNG.standard_normal(shape).astype(np.float32))


def test_python_side_effects_run_only_while_tracing_and_the_key_retraces():
    calls = []

    @ft.function
    def f(x, scale):
        calls.append(scale)
        return ft.reduce_sum(ft.nn.relu(x) * scale)

    a, b = rand(3, 4), rand(3, 4)
    assert f(a, 2.0).numpy() == pytest.approx(float(ft.reduce_sum(ft.nn.relu(a) * 2.0)))
    assert f(b, 2.0).numpy() == pytest.approx(float(ft.reduce_sum(ft.nn.relu(b) * 2.0)))
    assert calls == [2.0] and f.experimental_get_tracing_count() == 1
    f(b, 3.0)  # a new Python value is a new key
    f(rand(5, 4), 3.0)  # so is a new shape
    f(ft.cast(b, ft.float64), 3.0)  # and a new dtype
    assert calls == [2.0, 3.0, 3.0, 3.0] and f.experimental_get_tracing_count() == 4
    f(a, 3.0)
    assert f.experimental_get_tracing_count() == 4
    assert f.python_function(a, 1.0).numpy() == pytest.approx(float(ft.reduce_sum(ft.nn.relu(a))))


def test_the_same_tensor_twice_is_part_of_the_key():
    @ft.function
    def f(x, y):
        return x - y

    a, b = rand(2), rand(2)
    np.testing.assert_array_equal(f(a, a).numpy(), [0.0, 0.0])
    np.testing.assert_allclose(f(a, b).numpy(), (a - b).numpy())
    assert f.experimental_get_tracing_count() == 2


def test_a_training_step_replays_exactly_what_eager_computes():
    def make():
        w1 = ft.Variable(RNG.standard_normal((6, 8)).astype(np.float32) * 0.3)
        b1 = ft.Variable(np.zeros(8, np.float32))
        w2 = ft.Variable(RNG.standard_normal((8, 3)).astype(np.float32) * 0.3)
        return [w1, b1, w2]

    x, labels = rand(16, 6), ft.one_hot(RNG.integers(0, 3, 16), 3)

    def step(variables, optimizer):
        w1, b1, w2 = variables
        with ft.GradientTape(persistent=True) as tape:
            logits = ft.nn.relu(x @ w1 + b1) @ w2
            loss = ft.reduce_mean(ft.nn.softmax_cross_entropy_with_logits(labels, logits))
            loss += 1e-3 * ft.reduce_sum(ft.square(w1))
        grads = tape.gradient(loss, variables)
        grads = [ft.clip_by_norm(g, 1.0) for g in grads]
        optimizer.apply_gradients(zip(grads, variables, strict=True))
        return loss

    eager_vars = make()
    traced_vars = [ft.Variable(v.numpy()) for v in eager_vars]
    eager_opt, traced_opt = ft.keras.optimizers.Adam(0.05), ft.keras.optimizers.Adam(0.05)
    compiled = ft.function(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the step must trace, not fall back
        for _ in range(5):
            expected = step(eager_vars, eager_opt)
            got = compiled(traced_vars, traced_opt)
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    assert compiled.experimental_get_tracing_count() == 1
    for e, t in zip(eager_vars, traced_vars, strict=True):
        np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-5, atol=1e-7)
    assert int(traced_opt.iterations.numpy()) == 5
    # The learning rate is read when the step runs: a change shows in the next replay.
    eager_opt.learning_rate = 0.01
    traced_opt.learning_rate = 0.01
    step(eager_vars, eager_opt)
    compiled(traced_vars, traced_opt)
    for e, t in zip(eager_vars, traced_vars, strict=True):
        np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-5, atol=1e-7)


def test_a_keras_cnn_step_with_batch_norm_pooling_and_dropout():
    def model():
        ft.keras.utils.set_random_seed(3)
        return ft.keras.Sequential(
            [
                ft.keras.layers.Conv2D(4, 3, activation="relu"),
                ft.keras.layers.BatchNormalization(),
                ft.keras.layers.MaxPooling2D(),
                ft.keras.layers.Flatten(),
                ft.keras.layers.Dropout(0.0),
                ft.keras.layers.Dense(3),
            ]
        )

    x, y = rand(4, 8, 8, 2), ft.one_hot([0, 1, 2, 1], 3)

    def run(compile_it):
        m, opt = model(), ft.keras.optimizers.SGD(0.1, momentum=0.9)

        def step():
            with ft.GradientTape() as tape:
                loss = ft.reduce_mean(
                    ft.keras.losses.categorical_crossentropy(y, m(x, training=True), True)
                )
            grads = tape.gradient(loss, m.trainable_variables)
            opt.apply_gradients(zip(grads, m.trainable_variables, strict=True))
            return loss

        step = ft.function(step) if compile_it else step
        losses = [float(step()) for _ in range(4)]
        return losses, [w.numpy() for w in m.weights], step

    eager_losses, eager_weights, _ = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses, weights, compiled = run(True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for w, e in zip(weights, eager_weights, strict=True):  # moving statistics included
        np.testing.assert_allclose(w, e, rtol=1e-4, atol=1e-6)
    names = compiled.get_concrete_function().graph.node_names()
    assert "MaxPoolGrad" in names and "AssignMovingAvg" in names and "OptimizerStep" in names


def test_dropout_draws_a_fresh_mask_on_every_replay():
    layer = ft.keras.layers.Dropout(0.5, seed=1)
    f = ft.function(lambda x: layer(x, training=True))
    x = ft.ones((200,))
    first, second = f(x).numpy(), f(x).numpy()
    assert f.experimental_get_tracing_count() == 1
    assert set(np.unique(first)) <= {0.0, 2.0} and not np.array_equal(first, second)


def test_dead_computations_are_not_replayed():
    @ft.function
    def f(x):
        ft.exp(x) * 3.0  # unused
        return x + 1.0

    names = f.get_concrete_function(rand(3)).graph.node_names()
    assert names == ["Binary"]


def test_elementwise_chains_fuse_and_match_the_eager_bits():
    def f(x, y):
        return ft.sqrt(ft.abs(x * 2.0 - y)) / (y * y + 1.0)

    compiled = ft.function(f)
    rng = np.random.default_rng(0)
    x, y = (ft.constant(rng.normal(size=(300, 401)).astype(np.float32)) for _ in range(2))
    np.testing.assert_array_equal(compiled(x, y).numpy(), f(x, y).numpy())
    names = compiled.get_concrete_function(x, y).graph.node_names()
    assert names == ["FusedElementwise", "FusedElementwise"], names


def test_tf_print_runs_on_every_call(capsys):
    @ft.function
    def f(x):
        ft.print("x =", x, output_stream=sys.stdout)
        return x * 2

    f(ft.constant([1.0, 2.0]))
    f(ft.constant([3.0, 4.0]))
    assert capsys.readouterr().out == "x = [1 2]\nx = [3 4]\n"
    assert f.experimental_get_tracing_count() == 1


def test_reading_a_traced_value_into_python_runs_eagerly_and_says_where():
    @ft.function
    def f(x):
        if ft.reduce_sum(x) > 0:
            return x
        return -x

    a = ft.constant([1.0, 2.0])
    with pytest.warns(RuntimeWarning, match=r"f runs eagerly.*`if`.*test_function\.py:\d+"):
        np.testing.assert_array_equal(f(a).numpy(), [1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per reason
        np.testing.assert_array_equal(f(-a).numpy(), [1.0, 2.0])  # the other branch, eagerly
    with pytest.raises(ValueError, match="cannot be traced"):
        f.get_concrete_function(a)

    @ft.function
    def g(x):
        return x * float(x[0].numpy())

    with pytest.warns(RuntimeWarning, match="numpy"):
        np.testing.assert_array_equal(g(ft.constant([2.0, 3.0])).numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(g(ft.constant([3.0, 1.0])).numpy(), [9.0, 3.0])


def test_reading_an_argument_itself_into_python_runs_eagerly():
    # An argument read on the host (by the caller's code or by an op computed there, such as
    # sort) differs from call to call: a replay of the first call's value would be wrong.
    @ft.function
    def first(x):
        return x * float(x.numpy()[0])

    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        np.testing.assert_array_equal(first(ft.constant([2.0, 3.0])).numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(first(ft.constant([3.0, 1.0])).numpy(), [9.0, 3.0])

    sort = ft.function(lambda x: ft.sort(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(sort(ft.constant([3.0, 0.0])).numpy(), [0.0, 3.0])
        np.testing.assert_array_equal(sort(ft.constant([1.0, 5.0])).numpy(), [1.0, 5.0])
        np.testing.assert_array_equal(sort(ft.constant([9.0, 2.0])).numpy(), [2.0, 9.0])


def test_an_outer_tape_sees_the_operations_of_a_compiled_call():
    f = ft.function(lambda x: ft.reduce_sum(x**3))
    x = ft.Variable([1.0, 2.0])
    f(x)  # traced without a tape
    with ft.GradientTape() as outer:
        with ft.GradientTape() as inner:
            y = f(x)
        dy = inner.gradient(y, x)
    np.testing.assert_allclose(dy.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(outer.gradient(dy, x).numpy(), [6.0, 12.0])


def test_second_order_inside_a_compiled_function():
    @ft.function
    def hessian_diagonal(x):
        with ft.GradientTape() as outer:
            outer.watch(x)
            with ft.GradientTape() as inner:
                inner.watch(x)
                y = ft.reduce_sum(ft.sin(x) * x)
            g = inner.gradient(y, x)
        return outer.gradient(g, x)

    for values in ([0.5, 1.0], [2.0, -1.0]):
        x = ft.constant(values, dtype=ft.float64)
        v = np.array(values)
        expected = 2 * np.cos(v) - v * np.sin(v)
        np.testing.assert_allclose(hessian_diagonal(x).numpy(), expected, rtol=1e-12)
    assert hessian_diagonal.experimental_get_tracing_count() == 1


def test_run_functions_eagerly_switches_tracing_off():
    calls = []

    @ft.function
    def f(x):
        calls.append(1)
        return x + 1

    ft.config.run_functions_eagerly(True)
    try:
        f(ft.constant(1.0))
        f(ft.constant(1.0))
    finally:
        ft.config.run_functions_eagerly(False)
    assert len(calls) == 2 and f.experimental_get_tracing_count() == 0


def test_input_signature_is_checked():
    f = ft.function(lambda x: x * 2, input_signature=[ft.TensorSpec([None, 2], ft.float32)])
    np.testing.assert_array_equal(f(ft.ones((3, 2))).numpy(), np.full((3, 2), 2.0))
    with pytest.raises(ValueError, match="not compatible"):
        f(ft.ones((3, 3)))
    with pytest.raises(TypeError, match="int32"):
        f(ft.ones((3, 2), dtype=ft.int32))
    with pytest.raises(TypeError, match="TensorSpecs"):
        f(ft.ones((3, 2)), ft.ones((3, 2)))


def test_methods_trace_per_instance_and_variables_made_on_the_first_call():
    class Scaler(ft.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k
            self.w = None

        @ft.function
        def __call__(self, x):
            if self.w is None:
                self.w = ft.Variable(ft.fill([x.shape[-1]], float(self.k)))
            return x * self.w

    a, b = Scaler(2), Scaler(3)
    x = ft.ones((2, 3))
    for _ in range(2):
        np.testing.assert_array_equal(a(x).numpy(), np.full((2, 3), 2.0))
        np.testing.assert_array_equal(b(x).numpy(), np.full((2, 3), 3.0))
    a.w.assign([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(a(x).numpy(), np.ones((2, 3)))  # read at replay


def test_a_function_that_raises_leaves_no_trace_behind():
    @ft.function
    def f(x):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        f(ft.constant(1.0))
    assert not ft._core.is_tracing()
    np.testing.assert_array_equal(ft.function(lambda x: x + 1)(ft.constant(1.0)).numpy(), 2.0)


def test_decorator_forms_and_bad_arguments():
    @ft.function(jit_compile=True, reduce_retracing=True)
    def f(x):
        return x + 1

    assert float(f(ft.constant(1.0))) == 2.0
    assert f.__name__ == "f" and "Function f" in repr(f)
    with pytest.raises(TypeError, match="callable"):
        ft.function(3)


def test_replays_from_several_threads_at_once_stay_correct():
    # A replay runs on the compute pool (or, with a host callback, on its caller's thread):
    # concurrent callers must neither deadlock nor mix their values.
    from concurrent.futures import ThreadPoolExecutor

    @ft.function
    def step(x):
        h = ft.nn.relu(ft.matmul(x, ft.transpose(x)))
        return ft.reduce_sum(h * 2.0, axis=1) + ft.reduce_mean(x)

    @ft.function
    def printing(x):
        ft.print("sum", ft.reduce_sum(x), output_stream=sys.stderr)
        return ft.exp(x) * 2.0

    inputs = [
        np.random.default_rng(i).standard_normal((300, 200)).astype(np.float32) for i in range(8)
    ]
    expected = [(2.0 * np.maximum(x @ x.T, 0.0)).sum(axis=1) + x.mean() for x in inputs]
    step(ft.constant(inputs[0]))
    printing(ft.constant(inputs[0]))

    def work(i):
        x = ft.constant(inputs[i % 8])
        out = step(x).numpy()
        printed = printing(x).numpy()
        return i, out, printed

    with ThreadPoolExecutor(4) as pool:
        for i, out, printed in pool.map(work, range(32)):
            np.testing.assert_allclose(out, expected[i % 8], rtol=1e-4, atol=1e-2)
            np.testing.assert_allclose(printed, 2.0 * np.exp(inputs[i % 8]), rtol=1e-6)
    assert step.experimental_get_tracing_count() == 1
