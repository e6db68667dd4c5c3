"""``ft.function``: traces recorded once and replayed from Rust, with TensorFlow's semantics.

Every replayed result is compared with the same steps run eagerly; refused traces must run
eagerly (never replay something wrong) and say why once.
"""

import sys
import time
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
    # A branch on a floating-point value itself is not guarded (it would rarely repeat).
    @ft.function
    def f(x):
        if ft.reduce_sum(x):
            return x
        return -x

    a = ft.constant([1.0, 2.0])
    with pytest.warns(
        RuntimeWarning, match=r"f runs eagerly.*`if`.*float32.*test_function\.py:\d+"
    ):
        np.testing.assert_array_equal(f(a).numpy(), [1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per reason
        np.testing.assert_array_equal(f(a - a).numpy(), [0.0, 0.0])  # the other branch
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
    with pytest.raises(TypeError, match="not compatible"):  # TensorFlow's TypeError too
        f(ft.ones((3, 3)))
    with pytest.raises(TypeError, match="int32"):
        f(ft.ones((3, 2), dtype=ft.int32))
    with pytest.raises(TypeError, match="TensorSpecs"):
        f(ft.ones((3, 2)), ft.ones((3, 2)))
    # Python values are converted to the spec's dtype first, as TensorFlow binds them.
    np.testing.assert_array_equal(f([[1, 2]]).numpy(), [[2.0, 4.0]])
    assert f([[1, 2]]).dtype == ft.float32
    with pytest.raises(TypeError, match="not compatible"):
        f(3.0)


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


def test_a_python_if_on_a_tensor_traces_each_path_once_and_replays_it():
    paths = []

    @ft.function
    def f(x):
        if ft.reduce_sum(x) > 0:
            paths.append("positive")
            return x * 2
        paths.append("other")
        return -x

    a = ft.constant([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # traced, not run eagerly
        for scale in [1.0, -1.0, 3.0, -3.0, 0.5, -0.5]:
            x = a * scale
            expected = x * 2 if scale > 0 else -x
            np.testing.assert_array_equal(f(x).numpy(), expected.numpy())
    assert paths == ["positive", "other"] and f.experimental_get_tracing_count() == 2
    assert "Guard" in f.get_concrete_function(a).graph.node_names()


def test_nested_branches_find_the_trace_of_each_path():
    @ft.function
    def f(x, y):
        z = x + y
        if x > 0:
            z = z * 2
            if y > 0:
                z = z + 10
        elif y > 0:
            z = z - 10
        return z

    cases = [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)]
    for _ in range(3):
        for x, y in cases:
            expected = f.python_function(ft.constant(x), ft.constant(y)).numpy()
            assert f(ft.constant(x), ft.constant(y)).numpy() == expected
    assert f.experimental_get_tracing_count() == 4


def test_loops_on_tensor_counts_trace_per_count_up_to_a_limit():
    from ferrotape.polymorphic_function import MAX_PATHS

    @ft.function
    def f(x, n):
        i = ft.constant(0)
        while i < n:
            x = x * 2 + 1
            i += 1
        for _ in range(int(n)):  # int() of an integer tensor is guarded too
            x = x - 1
        return x

    def expected(x, n):
        for _ in range(n):
            x = x * 2 + 1
        return x - n

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in [1, 3, 2, 3, 1]:
            assert f(ft.constant(1.0), ft.constant(n)).numpy() == expected(1.0, n)
    assert f.experimental_get_tracing_count() == 3
    counts = list(range(4, MAX_PATHS + 3))
    with pytest.warns(RuntimeWarning, match=f"more than {MAX_PATHS} paths"):
        for n in counts:
            assert f(ft.constant(1.0), ft.constant(n)).numpy() == expected(1.0, n)
    traced = f.experimental_get_tracing_count()
    for n in [1, 5, 2, 40]:  # now eagerly, still right
        assert f(ft.constant(1.0), ft.constant(n)).numpy() == expected(1.0, n)
    assert f.experimental_get_tracing_count() == traced


def test_cond_and_while_loop_inside_a_function_with_first_and_second_order_gradients():
    @ft.function
    def f(x):
        with ft.GradientTape() as outer:
            outer.watch(x)
            with ft.GradientTape() as inner:
                inner.watch(x)
                y = ft.cond(x[0] > 0, lambda: ft.reduce_sum(x**3), lambda: ft.reduce_sum(ft.sin(x)))
                _, y = ft.while_loop(
                    lambda i, y: i < ft.cast(x[1], ft.int32), lambda i, y: (i + 1, y * x[0]), (0, y)
                )
            g = inner.gradient(y, x)
        return y, g, outer.gradient(g, x)

    for _ in range(2):
        for x0, x1 in [(1.5, 2.0), (-0.5, 3.0), (2.0, 1.0), (-1.0, 0.0)]:
            x = ft.constant([x0, x1], ft.float64)
            for got, want in zip(f(x), f.python_function(x), strict=True):
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    assert f.experimental_get_tracing_count() == 4


def test_variable_changes_before_a_branch_are_undone_when_a_replay_takes_another_path():
    # A replay that reaches a guard with another value stops there: what it wrote before (a
    # variable, an optimizer step) is undone, and the other path's trace runs instead.
    def make_step():
        v = ft.Variable(0.0)
        w = ft.Variable([1.0, -1.0])
        optimizer = ft.keras.optimizers.Adam(0.1)

        def step(x, n):
            v.assign_add(1.0)
            with ft.GradientTape() as tape:
                loss = ft.reduce_sum(w * x) ** 2
            optimizer.apply_gradients([(tape.gradient(loss, w), w)])
            total = ft.constant(0.0)
            for i in ft.range(n):  # a guard per iteration, after the writes
                v.assign_add(ft.cast(i, ft.float32))
                total += v
            return -total if x[0] > 0 else total

        return step, (v, w, optimizer.iterations)

    eager, eager_state = make_step()
    traced, traced_state = make_step()
    compiled = ft.function(traced)
    calls = [([1.0, 2.0], 2), ([-1.0, 2.0], 2), ([1.0, 2.0], 3), ([1.0, 2.0], 2), ([-1.0, 0.5], 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # traced, not run eagerly
        for x, n in calls * 2:
            got = compiled(ft.constant(x), ft.constant(n))
            expected = eager(ft.constant(x), ft.constant(n))
            assert got.numpy() == pytest.approx(float(expected), rel=1e-6)
            for t, e in zip(traced_state, eager_state, strict=True):
                np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-6)
    assert compiled.experimental_get_tracing_count() == 4  # (n, sign): (2,+) (2,-) (3,+) (3,-)
    assert int(traced_state[2].numpy()) == len(calls) * 2


def test_variable_changes_and_prints_after_a_branch_happen_once_per_call(capsys):
    v = ft.Variable(0.0)

    @ft.function
    def f(x):
        ft.print("x =", x, output_stream=sys.stdout)
        if x > 0:
            v.assign_add(x)
        else:
            v.assign_sub(1.0)
        ft.print("v =", v, output_stream=sys.stdout)
        return v.read_value()

    total, lines = 0.0, []
    for x in [2.0, -1.0, 3.0, -5.0, 1.0]:
        total = total + x if x > 0 else total - 1.0
        assert f(ft.constant(x)).numpy() == total
        lines += [f"x = {x:g}", f"v = {total:g}"]
    assert capsys.readouterr().out.splitlines() == lines
    assert f.experimental_get_tracing_count() == 2


def test_a_concrete_function_traces_the_other_path_of_a_branch_when_a_call_takes_it():
    # As TensorFlow's, whose graph holds both branches: the result is the code's.
    @ft.function
    def f(x):
        return x if x[0] > 0 else -x

    a = ft.constant([1.0, 2.0])
    concrete = f.get_concrete_function(a)
    np.testing.assert_array_equal(concrete(a * 3).numpy(), [3.0, 6.0])
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(concrete(-a).numpy(), [1.0, 2.0])
    assert f.experimental_get_tracing_count() == 2
    assert concrete.graph.guard_values() == ((0,),)  # the trace of the path taken last
    np.testing.assert_array_equal(f(-a * 2).numpy(), [2.0, 4.0])  # both paths replayed
    np.testing.assert_array_equal(concrete(a).numpy(), [1.0, 2.0])
    assert f.experimental_get_tracing_count() == 2


def test_a_concrete_function_made_from_tensor_specs_traces_on_its_first_call():
    bodies = []

    class Scorer:
        def __init__(self):
            self.w = ft.Variable([[1.0], [2.0]])

        @ft.function(input_signature=[ft.TensorSpec([None, 2], ft.float32)])
        def score(self, x):
            bodies.append(tuple(x.shape))
            return ft.matmul(x, self.w)

    scorer = Scorer()
    concrete = scorer.score.get_concrete_function()
    assert concrete is scorer.score.get_concrete_function(ft.TensorSpec([3, 2]))
    assert bodies == []
    with pytest.raises(ValueError, match="score: this concrete function has not been traced"):
        _ = concrete.graph
    x = ft.constant([[1.0, 1.0], [0.0, 2.0], [3.0, 0.0]])
    for n in (3, 1, 3, 2):
        np.testing.assert_array_equal(concrete(x[:n]).numpy(), [[3.0], [4.0], [3.0]][:n])
    # One trace for the None dimension, which it shows as None (as TensorFlow's), and one of
    # its own for size 1 (where TensorFlow's serves every size).
    assert bodies == [(None, 2), (None, 2)]
    assert concrete.graph.node_names() == ["ReadVariableOp", "BatchMatMulV2"]
    scorer.w.assign([[0.0], [1.0]])  # the variable is read on every call
    np.testing.assert_array_equal(concrete(x[:1]).numpy(), [[1.0]])
    with pytest.raises(TypeError, match=r"score: the argument x has shape \(2, 3\)"):
        concrete(ft.ones([2, 3]))
    with pytest.raises(ft.errors.InvalidArgumentError, match="x has dtype float64, not compat"):
        concrete(ft.ones([2, 2], ft.float64))
    with pytest.raises(TypeError, match="missing a required argument: 'x'"):
        concrete()
    with pytest.raises(TypeError, match="not compatible with the input_signature"):
        scorer.score.get_concrete_function(ft.TensorSpec([None, 3]))
    # Under a tape the call runs eagerly, so that the tape sees its operations.
    with ft.GradientTape() as tape:
        y = ft.reduce_sum(concrete(x))
    np.testing.assert_array_equal(tape.gradient(y, scorer.w).numpy(), [[4.0], [3.0]])
    assert len(bodies) == 3


def test_a_concrete_function_keeps_the_python_values_it_was_made_with():
    @ft.function
    def f(x, scale=2.0, *, shift=0.0):
        return x * scale + shift

    v = ft.constant([1.0, -1.0])
    by_three = f.get_concrete_function(ft.TensorSpec([None]), 3.0, shift=1.0)
    assert by_three.structured_input_signature == (
        (ft.TensorSpec([None], ft.float32, name="x"), 3.0),
        {"shift": 1.0},
    )
    np.testing.assert_array_equal(by_three(v).numpy(), [4.0, -2.0])
    np.testing.assert_array_equal(by_three(v, 3.0, shift=1.0).numpy(), [4.0, -2.0])
    with pytest.raises(TypeError, match="made for the argument value 1.0, received 2.0"):
        by_three(v, shift=2.0)
    with pytest.raises(TypeError, match="made for the argument value 3.0, received 3"):
        by_three(v, 3)  # an int where the float was bound: another trace key, as in TF
    np.testing.assert_array_equal(f(v, 3).numpy(), [3.0, -3.0])  # the function itself traces


SHAPE_ARGUMENTS = {
    "range": lambda n: ft.range(n) * 2,
    "fill": lambda n: ft.fill(ft.stack([n, 2]), 1.5),
    "zeros": lambda n: ft.zeros(ft.reshape(n, [1])),
    "one_hot": lambda n: ft.one_hot([0, 1], n),
    "reshape": lambda n: ft.reshape(ft.range(12), ft.stack([n, -1])),
    "tile": lambda n: ft.tile(ft.constant([1, 2]), ft.reshape(n, [1])),
    "slice": lambda n: ft.range(10)[:n],
}


@pytest.mark.parametrize("name", SHAPE_ARGUMENTS)
def test_integer_tensors_read_as_op_arguments_are_guarded(name):
    # The ops read these values on the host: a replay of the first call's value would be
    # silently wrong, so each value read is a guard of the trace.
    fn = SHAPE_ARGUMENTS[name]
    f = ft.function(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in [2, 3, 2, 4, 3]:
            np.testing.assert_array_equal(f(ft.constant(n)).numpy(), fn(ft.constant(n)).numpy())
    assert f.experimental_get_tracing_count() == 3


def test_a_float_tensor_read_as_an_op_argument_runs_eagerly():
    f = ft.function(lambda limit: ft.range(limit))
    with pytest.warns(RuntimeWarning, match="Range reads a traced float32"):
        np.testing.assert_array_equal(f(ft.constant(2.0)).numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(f(ft.constant(3.0)).numpy(), [0.0, 1.0, 2.0])


def _tensor_array_loop(x):
    written = ft.TensorArray(ft.float32, size=4)
    for i in ft.range(4):
        written = written.write(i, x[i] * ft.cast(i, ft.float32))
    return written.stack()


CONTROL_FLOW = {
    "map_fn with cond": lambda x: ft.map_fn(
        lambda r: ft.cond(r[0] > 0, lambda: r * 2, lambda: -r), x
    ),
    "scan": lambda x: ft.scan(lambda a, r: a + r, x),
    "foldl": lambda x: ft.foldl(lambda a, r: a * 0.5 + r, x),
    "vectorized_map": lambda x: ft.vectorized_map(lambda r: ft.reduce_sum(r**2), x),
    "TensorArray": _tensor_array_loop,
    "switch_case": lambda x: ft.switch_case(
        ft.cast(x[0, 0] > 0, ft.int32), [lambda: x, lambda: -x]
    ),
    "case": lambda x: ft.case([(x[0, 0] > 0, lambda: x)], default=lambda: x * 3),
}


@pytest.mark.parametrize("name", CONTROL_FLOW)
def test_control_flow_ops_are_traced_and_replayed(name):
    fn = CONTROL_FLOW[name]
    f = ft.function(fn)
    x = ft.constant(np.arange(12, dtype=np.float32).reshape(4, 3) - 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback
        for v in [x, -x, x * 2, -x * 3]:
            np.testing.assert_allclose(f(v).numpy(), fn(v).numpy(), rtol=1e-6)
    assert f.experimental_get_tracing_count() <= 2


def test_variables_may_be_created_on_the_first_trace_only():
    made = []

    @ft.function
    def f(x):
        if x.shape[0] == 3:
            made.append(ft.Variable(1.0))
        return x * 2

    f(ft.ones(2))
    with pytest.raises(ValueError, match="creating variables on a non-first call"):
        f(ft.ones(3))
    np.testing.assert_array_equal(f(ft.ones(2)).numpy(), [2.0, 2.0])  # the first trace stands


def test_python_numbers_returned_come_back_as_tensors():
    @ft.function
    def f(x):
        return 1, 2.5, True, None, "text", np.float64(0.5), x

    for _ in range(2):  # traced, then replayed
        i, r, b, nothing, text, n, x = f(ft.ones(2))
        assert [i.dtype, r.dtype, b.dtype, n.dtype] == [ft.int32, ft.float32, ft.bool, ft.float64]
        assert (i.numpy(), r.numpy(), b.numpy(), n.numpy()) == (1, 2.5, True, 0.5)
        assert nothing is None and text == "text" and isinstance(x, ft.Tensor)


def test_a_gan_step_replays_what_eager_computes():
    # Generator and discriminator trained from one persistent tape, each with its own Adam,
    # the noise drawn outside the step so that both runs see the same.
    def make():
        ft.keras.utils.set_random_seed(7)
        generator = ft.keras.Sequential(
            [
                ft.keras.Input((4,)),
                ft.keras.layers.Dense(16, activation="relu"),
                ft.keras.layers.Dense(6, activation="tanh"),
            ]
        )
        discriminator = ft.keras.Sequential(
            [
                ft.keras.Input((6,)),
                ft.keras.layers.Dense(16),
                ft.keras.layers.LeakyReLU(0.2),
                ft.keras.layers.Dense(1),
            ]
        )
        return (
            generator,
            discriminator,
            ft.keras.optimizers.Adam(1e-3),
            ft.keras.optimizers.Adam(2e-3),
        )

    entropy = ft.keras.losses.BinaryCrossentropy(from_logits=True)

    def step(models, real, noise):
        generator, discriminator, g_opt, d_opt = models
        with ft.GradientTape(persistent=True) as tape:
            fake = generator(noise, training=True)
            real_out = discriminator(real, training=True)
            fake_out = discriminator(fake, training=True)
            g_loss = entropy(ft.ones_like(fake_out), fake_out)
            d_loss = entropy(ft.ones_like(real_out), real_out) + entropy(
                ft.zeros_like(fake_out), fake_out
            )
        g_grads = tape.gradient(g_loss, generator.trainable_variables)
        d_grads = tape.gradient(d_loss, discriminator.trainable_variables)
        g_opt.apply_gradients(zip(g_grads, generator.trainable_variables, strict=True))
        d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables, strict=True))
        return g_loss, d_loss

    eager, traced = make(), make()
    compiled = ft.function(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the step must trace, not fall back
        for _ in range(4):
            real, noise = rand(32, 6), rand(32, 4)
            for got, want in zip(
                compiled(traced, real, noise), step(eager, real, noise), strict=True
            ):
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    assert compiled.experimental_get_tracing_count() == 1
    for model in (0, 1):
        for t, e in zip(traced[model].weights, eager[model].weights, strict=True):
            np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


def test_a_learning_rate_schedule_stays_in_order_with_branches():
    # A host callback that refills a variable (the scheduled rate) runs in order in a replay
    # with guards; only output (ft.print) waits for the guards.
    def make_step():
        ft.keras.utils.set_random_seed(11)
        w = ft.Variable([1.0, -1.0])
        schedule = ft.keras.optimizers.schedules.ExponentialDecay(0.1, 1, 0.5)
        optimizer = ft.keras.optimizers.SGD(schedule)

        def step(x):
            with ft.GradientTape() as tape:
                loss = ft.reduce_sum(w * x) ** 2
            grad = tape.gradient(loss, w)
            optimizer.apply_gradients([(grad if x[0] > 0 else -grad, w)])
            return loss

        return step, w

    eager, w_eager = make_step()
    traced, w_traced = make_step()
    compiled = ft.function(traced)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in [[1.0, 2.0], [-1.0, 2.0], [2.0, 1.0], [-2.0, 1.0], [1.0, 1.0]]:
            compiled(ft.constant(x))
            eager(ft.constant(x))
            np.testing.assert_allclose(w_traced.numpy(), w_eager.numpy(), rtol=1e-5)
    assert compiled.experimental_get_tracing_count() == 2


def test_a_gather_gradient_reads_each_calls_indices():
    # The backward pass of a gather scatters into the rows the indices name: a replay must
    # take them from each call's indices, not from the traced call's.
    def make_step():
        table = ft.Variable(np.arange(40, dtype=np.float32).reshape(10, 4) / 10)
        optimizer = ft.keras.optimizers.Adam(0.1)

        def step(ids):
            with ft.GradientTape() as tape:
                loss = ft.reduce_sum(ft.sin(ft.gather(table, ids)))
            optimizer.apply_gradients([(tape.gradient(loss, table), table)])
            return loss

        return step, table

    eager, eager_table = make_step()
    traced, traced_table = make_step()
    compiled = ft.function(traced)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for ids in [[1, 2, 2], [3, 0, 9], [5, 5, 5], [9, 8, 1]]:
            compiled(ft.constant(ids))
            eager(ft.constant(ids))
            np.testing.assert_allclose(traced_table.numpy(), eager_table.numpy(), rtol=1e-6)
    assert compiled.experimental_get_tracing_count() == 1


def test_random_crop_draws_a_new_window_on_every_replay():
    images = ft.constant(np.arange(2 * 6 * 8 * 3, dtype=np.float32).reshape(2, 6, 8, 3))
    eager_layer = ft.keras.layers.RandomCrop(4, 4, seed=1)
    traced_layer = ft.keras.layers.RandomCrop(4, 4, seed=1)
    compiled = ft.function(lambda x: traced_layer(x, training=True))
    corners = set()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(6):
            got = compiled(images).numpy()
            np.testing.assert_array_equal(got, eager_layer(images, training=True).numpy())
            corners.add(float(got[0, 0, 0, 0]))
    assert compiled.experimental_get_tracing_count() == 1 and len(corners) > 1


def test_numpy_and_py_functions_run_their_python_on_every_replay():
    calls = []

    def sort_on_host(a):
        calls.append(len(a))
        return np.sort(a)

    @ft.function
    def f(x):
        y = ft.numpy_function(sort_on_host, [x], ft.float32)
        z = ft.py_function(lambda a: a * 2, [x], ft.float32)
        return y + 1, z

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for values in ([3.0, 1.0, 2.0], [9.0, 5.0, 7.0], [0.0, -1.0, 4.0]):
            y, z = f(ft.constant(values))
            np.testing.assert_array_equal(y.numpy(), np.sort(values) + 1)
            np.testing.assert_array_equal(z.numpy(), np.array(values) * 2)
    assert calls == [3, 3, 3] and f.experimental_get_tracing_count() == 1

    # A host result whose shape changes from the traced one is an error, not a wrong value.
    g = ft.function(lambda x: ft.numpy_function(lambda a: a[: int(a[0])], [x], ft.float32))
    np.testing.assert_array_equal(g(ft.constant([2.0, 5.0, 6.0])).numpy(), [2.0, 5.0])
    with pytest.raises(ft.errors.InvalidArgumentError, match="host computation returned"):
        g(ft.constant([1.0, 5.0, 6.0]))


def test_a_hashing_layer_hashes_each_calls_inputs():
    layer = ft.keras.layers.Hashing(num_bins=7)
    compiled = ft.function(lambda ids: layer(ids))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # hashed on the host by a callback, not eagerly
        for ids in ([1, 2, 3], [40, 50, 60], [7, 7, 8]):
            np.testing.assert_array_equal(
                compiled(ft.constant(ids)).numpy(), layer(ft.constant(ids)).numpy()
            )
    assert compiled.experimental_get_tracing_count() == 1


def test_a_dataset_iterator_inside_a_traced_step_gives_the_next_batch_on_every_call():
    # The batch is fetched by every replay (the trace records no batch as a constant); a
    # smaller last batch takes a path of its own, and the end raises OutOfRangeError, as the
    # iterator op of TensorFlow does.
    iterator = iter(ft.data.Dataset.range(7).map(lambda v: v * 10).batch(3))

    @ft.function
    def step(it):
        batch = next(it)
        return ft.reduce_sum(batch), ft.shape(batch)[0]

    seen = [[int(t) for t in step(iterator)] for _ in range(3)]
    assert seen == [[30, 3], [120, 3], [60, 1]]
    with pytest.raises(ft.errors.OutOfRangeError, match="End of sequence"):
        step(iterator)
    assert step.experimental_get_tracing_count() == 3  # full batch, last batch, the end

    again = iter(ft.data.Dataset.range(4).batch(2))
    get = ft.function(lambda it: it.get_next())
    assert [get(again).numpy().tolist() for _ in range(2)] == [[0, 1], [2, 3]]
    with pytest.raises(ft.errors.OutOfRangeError):
        get(again)


def test_a_dataset_iterated_inside_a_traced_function_is_iterated_afresh_on_every_call():
    xs = np.arange(30, dtype=np.float32).reshape(10, 3) / 30.0
    ys = xs.sum(1, keepdims=True)

    def run(compile_it):
        w = ft.Variable(ft.zeros([3, 1]))
        opt = ft.keras.optimizers.SGD(0.5)
        data = ft.data.Dataset.from_tensor_slices((xs, ys)).shuffle(10, seed=3).batch(4)

        def epoch():
            total = ft.constant(0.0)
            for x, y in data:
                with ft.GradientTape() as tape:
                    loss = ft.reduce_mean((ft.matmul(x, w) - y) ** 2)
                opt.apply_gradients([(tape.gradient(loss, w), w)])
                total += loss
            return total

        epoch = ft.function(epoch) if compile_it else epoch
        return [float(epoch()) for _ in range(4)], w.numpy(), epoch

    eager_losses, eager_w, _ = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback
        losses, w, compiled = run(True)
    # Each epoch reshuffles (the same orders as eagerly), and trains on its own batches.
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(w, eager_w, rtol=1e-5)
    assert compiled.experimental_get_tracing_count() == 1

    shuffled = ft.data.Dataset.range(8).shuffle(8, reshuffle_each_iteration=True)
    order = ft.function(lambda: ft.stack(list(shuffled)))
    orders = {tuple(order().numpy().tolist()) for _ in range(6)}
    assert len(orders) > 1 and all(sorted(o) == list(range(8)) for o in orders)
    # Dataset.reduce iterates the same way: a number read in each call's order.
    digits = ft.function(lambda: shuffled.reduce(ft.constant(0, ft.int64), lambda s, x: s * 8 + x))
    assert len({int(digits()) for _ in range(6)}) > 1


def test_dataset_elements_a_replay_cannot_fetch_make_the_function_run_eagerly():
    windows = ft.data.Dataset.range(4).window(2)
    f = ft.function(lambda: ft.add_n([ft.reduce_sum(ft.stack(list(w))) for w in windows]))
    with pytest.warns(RuntimeWarning, match="holds datasets"):
        assert int(f()) == 6
    with pytest.raises(RuntimeError, match="only supported in eager mode"):
        ft.function(lambda: ft.data.Dataset.range(2).as_numpy_iterator())()


def test_generator_draws_inside_a_traced_function_move_the_generator_on_every_call():
    def draws(g, mean):
        return (
            g.normal([3], mean=mean),
            g.uniform([2], 0, 100, dtype=ft.int32),
            g.truncated_normal([2]),
            g.make_seeds(2),
        )

    mean = ft.constant(5.0)
    eager_g, traced_g = ft.random.Generator.from_seed(7), ft.random.Generator.from_seed(7)
    compiled = ft.function(lambda m: draws(traced_g, m))
    for _ in range(3):
        for expected, got in zip(draws(eager_g, mean), compiled(mean), strict=True):
            np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert compiled.experimental_get_tracing_count() == 1
    assert compiled(mean + 10.0)[0].numpy().min() > 10.0  # a tensor argument per call


def test_stateless_draws_from_a_seed_that_changes_every_call_trace_once():
    # TensorFlow's augmentation pattern: a new seed per call from a generator. Reading each
    # seed into Python would guard the trace on it (a new path every call, then eager); the
    # draw is a host computation instead.
    x = ft.reshape(ft.range(48, dtype=ft.float32), [4, 4, 3])

    def augment(g):
        seed = g.make_seeds(2)[0]
        return (
            ft.random.stateless_normal([3], seed=seed),
            ft.image.stateless_random_brightness(x, 0.5, seed),
            ft.image.stateless_random_crop(x, [2, 2, 3], seed),
        )

    eager_g, traced_g = ft.random.Generator.from_seed(5), ft.random.Generator.from_seed(5)
    compiled = ft.function(lambda: augment(traced_g))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback
        for _ in range(10):
            for expected, got in zip(augment(eager_g), compiled(), strict=True):
                np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert compiled.experimental_get_tracing_count() == 1
    # A constant seed stays a constant of the trace: the same numbers on every call.
    fixed = ft.function(lambda: ft.random.stateless_uniform([2], seed=[1, 2]))
    assert fixed().numpy().tolist() == fixed().numpy().tolist()
    assert "HostCallback" not in fixed.get_concrete_function().graph.node_names()


def test_timestamp_inside_a_traced_function_is_the_time_of_each_call():
    f = ft.function(lambda: ft.timestamp())
    first = float(f())
    time.sleep(0.01)
    assert float(f()) >= first + 0.01
    assert f.experimental_get_tracing_count() == 1


def test_a_variable_returned_by_a_traced_function_is_its_value_at_that_call():
    v = ft.Variable([1.0, 2.0])
    f = ft.function(lambda: {"v": v, "twice": v * 2})
    first = f()
    v.assign([5.0, 6.0])
    second = f()
    assert type(first["v"]) is ft.Tensor
    np.testing.assert_array_equal(first["v"].numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(second["v"].numpy(), [5.0, 6.0])


def test_what_tensorflow_code_asks_about_the_trace_it_runs_in():
    seen = []

    @ft.function
    def f(x):
        with ft.init_scope():
            seen.append(("init scope", ft.executing_eagerly()))
        seen.append((ft.executing_eagerly(), ft.inside_function()))
        seen.append(ft.get_static_value(x))  # unknown until a call gives it
        return x * 2

    assert ft.executing_eagerly() and not ft.inside_function()
    f(ft.constant(1))
    f(ft.constant(3))
    assert seen == [("init scope", True), (False, True), None]
    assert ft.get_static_value(ft.constant([1, 2])).tolist() == [1, 2]
    assert ft.autograph.to_graph(f.python_function) is f.python_function
    assert ft.autograph.experimental.do_not_convert()(len) is len
    assert isinstance(ft.TensorSpec([2]), ft.TypeSpec)


LABELS = [0, 1, 2, 1, 0, 2]
COMMON_OPS = {
    "unsorted_segment_sum": lambda x, i: ft.math.unsorted_segment_sum(x, i, 3),
    "segment_mean": lambda x, i: ft.math.segment_mean(x, ft.sort(i)),
    "bincount": lambda x, i: ft.math.bincount(i, minlength=3),
    "confusion_matrix": lambda x, i: ft.math.confusion_matrix(LABELS, i, num_classes=3),
    "scatter_nd": lambda x, i: ft.scatter_nd(ft.reshape(i, [-1, 1]), x, [3, 3]),
    "tensor_scatter_nd_add": lambda x, i: ft.tensor_scatter_nd_add(
        ft.zeros([3, 3]), ft.reshape(i, [-1, 1]), x
    ),
    "gather_nd": lambda x, i: ft.gather_nd(x, ft.stack([ft.range(6), i], 1)),
    "sparse_softmax_cross_entropy": lambda x, i: ft.nn.sparse_softmax_cross_entropy_with_logits(
        i, x
    ),
    "in_top_k": lambda x, i: ft.math.in_top_k(i, x, 2),
    "sort": lambda x, i: ft.sort(x, axis=0),
    "argsort": lambda x, i: ft.argsort(x, axis=0, direction="DESCENDING"),
    "top_k": lambda x, i: ft.math.top_k(x, 2),
    "pad": lambda x, i: ft.pad(x, [[1, 0], [0, 2]], mode="REFLECT"),
    "boolean_mask": lambda x, i: ft.boolean_mask(x, i > 0),
    "cholesky": lambda x, i: ft.linalg.cholesky(ft.matmul(x, x, transpose_a=True) + ft.eye(3)),
    "clip_by_global_norm": lambda x, i: ft.clip_by_global_norm([x, x * 2], x[0, 0] + 3.0)[0],
}


@pytest.mark.parametrize("name", COMMON_OPS)
def test_common_ops_of_training_steps_trace_and_replay_equal_to_eager(name):
    # Ops that read values on the host (an order, a check, positions) do it in a way a replay
    # repeats: none makes the function run eagerly, and each replay equals the eager call.
    fn = COMMON_OPS[name]
    compiled = ft.function(fn)
    rng = np.random.default_rng(0)
    calls = [
        (rng.normal(size=(6, 3)).astype(np.float32), ids)
        for ids in ([0, 1, 1, 2, 0, 2], [2, 2, 1, 0, 0, 1], [0, 1, 1, 2, 0, 2])
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback
        for x, ids in calls:
            got = compiled(ft.constant(x), ft.constant(ids))
            want = fn(ft.constant(x), ft.constant(ids))
            for g, w in zip(ft.nest.flatten(got), ft.nest.flatten(want), strict=True):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def _training_step(model, optimizer, loss_fn):
    def step(x, y):
        with ft.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True)) + ft.reduce_mean(ft.square(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss, ft.shape(x)[0], ft.size(y), ft.reduce_sum(ft.ones_like(y))

    return step


@pytest.mark.parametrize("kind", ["cnn", "mlp"])
def test_an_input_signature_with_none_traces_once_for_every_size(kind):
    keras = ft.keras

    def build():
        keras.utils.set_random_seed(3)
        if kind == "cnn":
            # Same padding, strides, both poolings, flatten: shapes follow the batch.
            layers = [
                keras.layers.Input((12, 12, 2)),
                keras.layers.Conv2D(4, 3, activation="relu", padding="same"),
                keras.layers.MaxPooling2D(),
                keras.layers.Conv2D(4, 3, strides=2),
                keras.layers.AveragePooling2D(2, padding="same"),
                keras.layers.Flatten(),
                keras.layers.Dropout(0.3),
                keras.layers.Dense(5),
            ]
        else:
            layers = [
                keras.layers.Input((6,)),
                keras.layers.Dense(8, activation="relu"),
                keras.layers.BatchNormalization(),
                keras.layers.Dropout(0.3),
                keras.layers.Dense(5),
            ]
        return keras.Sequential(layers)

    shape = (12, 12, 2) if kind == "cnn" else (6,)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    eager_model, traced_model = build(), build()
    eager = _training_step(eager_model, keras.optimizers.Adam(0.01), loss_fn)
    bodies = []

    def body(x, y):
        bodies.append((tuple(x.shape), tuple(y.shape)))
        return _training_step(traced_model, traced_optimizer, loss_fn)(x, y)

    traced_optimizer = keras.optimizers.Adam(0.01)
    signature = [ft.TensorSpec([None, *shape]), ft.TensorSpec([None], ft.int64)]
    traced = ft.function(body, input_signature=signature)
    for n in (6, 3, 9, 6, 4, 2, 1, 7):
        x = RNG.random((n, *shape), dtype=np.float32)
        y = RNG.integers(0, 5, n)
        for got, want in zip(traced(x, y), eager(x, y), strict=True):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    # One trace serves every size (the dropout masks drawn as eagerly: probing the sizes drew
    # nothing); size 1 has a trace of its own. The body sees None, as in TensorFlow.
    assert traced.experimental_get_tracing_count() == 2
    assert bodies == [((None, *shape), (None,))] * 2
    for a, b in zip(eager_model.weights, traced_model.weights, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert traced_optimizer.iterations.numpy() == 8  # probes skip the optimizer's step


def test_a_trace_serving_other_sizes_recomputes_what_follows_them():
    w = ft.Variable(RNG.standard_normal((4, 3)).astype(np.float32))

    def body(x):
        with ft.GradientTape() as tape:
            tape.watch(x)
            h = ft.nn.relu(ft.matmul(x, w))
            y = ft.reduce_mean(ft.square(h)) + ft.reduce_sum(ft.reshape(h, [-1, 1]) * 0.5)
        return {
            "rows": ft.shape(h)[0],
            "count": ft.size(h),
            "zeros": ft.zeros_like(x) + 1.0,
            "ones": ft.reduce_sum(ft.ones_like(h)),
            "softmax": ft.nn.softmax(h),
            "mean": ft.reduce_mean(h, axis=0),
            "grad": tape.gradient(y, x),
            "second": ft.reduce_mean(ft.concat([h, h], axis=0), axis=0),
            "arg": ft.argmax(h, axis=0),
        }

    f = ft.function(body, input_signature=[ft.TensorSpec([None, 4])])
    for n in (5, 2, 8, 3, 5):
        x = ft.constant(RNG.standard_normal((n, 4)).astype(np.float32))
        got, want = f(x), body(x)
        for k in want:
            np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-6, err_msg=k)
    assert f.experimental_get_tracing_count() == 1


def test_a_function_that_reads_a_size_in_python_traces_each_size():
    bodies = []

    def body(x, seen):
        h = x * 2.0
        seen.append(h.shape[0])  # the host computes with the batch size
        return ft.reduce_sum(h) / h.shape[0] + ft.constant(np.ones(h.shape[0], np.float32))

    f = ft.function(lambda x: body(x, bodies), input_signature=[ft.TensorSpec([None, 2])])
    for n in (3, 4, 3, 5):
        x = ft.constant(RNG.standard_normal((n, 2)).astype(np.float32))
        np.testing.assert_allclose(f(x).numpy(), body(x, []).numpy(), rtol=1e-6)
    assert bodies == [3, 4, 5] and f.experimental_get_tracing_count() == 3
    (reason,) = f._general.values()
    assert "Python read the shape [3, 2]" in reason and "test_function.py" in reason


def test_values_made_from_a_traced_size_keep_the_trace_to_it():
    # A constant made inside from a size, a slice resolved on the batch axis, an unstack: each
    # makes the trace serve its own size only (results equal to eager at every size).
    def made_from_shape(x):
        return ft.reduce_sum(ft.zeros(ft.shape(x)) + x)

    def sliced(x):
        return ft.reduce_sum(x[:-1, 0])  # the end resolved on the moving axis

    def unstacked(x):
        return ft.add_n(ft.unstack(x, axis=0))

    for fn in (made_from_shape, sliced, unstacked):
        f = ft.function(fn, input_signature=[ft.TensorSpec([None, 3])])
        for n in (4, 6, 4, 5):
            x = ft.constant(RNG.standard_normal((n, 3)).astype(np.float32))
            np.testing.assert_allclose(f(x).numpy(), fn(x).numpy(), rtol=1e-5, err_msg=fn.__name__)
        assert f.experimental_get_tracing_count() == 3, fn.__name__


def test_reduce_retracing_relaxes_the_sizes_that_changed():
    bodies = []

    @ft.function(reduce_retracing=True)
    def f(x, k=2.0):
        bodies.append(tuple(x.shape))
        return ft.reduce_sum(x, axis=0) * k

    for shape in [(2, 3), (5, 3), (7, 3), (4, 3), (4, 5), (6, 7), (2, 3)]:
        x = RNG.random(shape, dtype=np.float32)
        np.testing.assert_allclose(f(x).numpy(), x.sum(0) * 2.0, rtol=1e-6)
    assert bodies == [(2, 3), (None, 3), (None, None)]
    f(RNG.random((3, 3), dtype=np.float32), k=3.0)  # a new Python value still traces
    assert f.experimental_get_tracing_count() == 4


def test_slices_taking_the_batch_axis_whole_follow_it_with_their_gradients():
    w = ft.Variable(RNG.standard_normal((3, 2)).astype(np.float32))

    def body(x):
        with ft.GradientTape() as tape:
            h = ft.matmul(x, w)
            y = (
                ft.reduce_sum(h[:, 0] * 2.0)
                + ft.reduce_mean(x[..., 1:] ** 2)
                + ft.reduce_sum(h[:, None, -1])
            )
        return y, tape.gradient(y, w), x[:, ::-1]

    f = ft.function(body, input_signature=[ft.TensorSpec([None, 3])])
    for n in (4, 7, 2, 5):
        x = ft.constant(RNG.standard_normal((n, 3)).astype(np.float32))
        for got, want in zip(f(x), body(x), strict=True):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    assert f.experimental_get_tracing_count() == 1
