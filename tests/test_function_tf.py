"""``tf.function`` in TensorFlow 2.21 and ``ft.function`` in ferrotape, run on the same programs.

Each program takes the module (``tensorflow`` or ``ferrotape``) as ``tf`` and returns what a
user can observe: results, how many times the Python body ran, the tracing count, the kinds of
the errors raised. Branches on tensor values inside a compiled function are compared in
test_control_flow_tf.py.

Left out on purpose, where ferrotape traces more often than TensorFlow but computes the same
results (docs/coming-from-tensorflow.md says so): a ``None`` dimension of size 0 or 1, or of a
function whose Python reads a size that follows it (ferrotape traces those sizes on their own),
the same tensor passed for two
arguments, different variables of one shape passed as an argument, ``True`` where ``1`` was
traced, the second trace TensorFlow makes of a first call that creates variables, and a
concrete function made from ``TensorSpec`` s (TensorFlow traces it at once, ferrotape on its
first call).

Skipped without TensorFlow (``pip install tensorflow-cpu``).
"""

import os
import warnings

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
real_tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)"
)

import ferrotape  # noqa: E402 - after the skip

PROGRAMS = []


def program(fn):
    PROGRAMS.append(fn)
    return fn


def kind(fn):
    """Run fn; the kind of exception it raises, or 'no error'."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - the kind is the result being compared
        if type(err).__name__ == "InvalidArgumentError":
            return "InvalidArgumentError"  # ferrotape's is also a ValueError, TensorFlow's not
        for k in (TypeError, ValueError):
            if isinstance(err, k):
                return k.__name__
        return type(err).__name__
    return "no error"


def plain(x):
    """Tensors as (dtype name, shape, values); containers kept; the rest as it is."""
    if type(x).__name__ == "TensorSpec":
        return ("spec", x.shape.as_list(), x.dtype.name, x.name)
    if hasattr(x, "numpy") and hasattr(x, "dtype"):
        return ("tensor", x.dtype.name, tuple(x.shape), np.asarray(x.numpy()))
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    return x


@program
def side_effects_and_the_trace_key(tf):
    body_runs = []

    @tf.function
    def f(x, scale):
        body_runs.append(scale)
        return x * scale

    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    results = [
        f(a, 2.0),  # traces
        f(b, 2.0),  # other values, same shape and dtype: replays
        f(b, 3.0),  # a new Python value: traces
        f(tf.constant([1.0, 2.0, 3.0]), 3.0),  # a new shape: traces
        f(tf.constant([1.0, 2.0], tf.float64), 3.0),  # a new dtype: traces
        f(a, 3.0),  # replays
        f(np.array([5.0, 6.0], np.float32), 2.0),  # numpy arrays are keyed as tensors
    ]
    return results, list(body_runs), f.experimental_get_tracing_count()


@program
def python_arguments_of_several_kinds(tf):
    @tf.function
    def f(x, n=None, mode="a", pair=(1, 2)):
        del mode, pair
        return x if n is None else x * n

    a = tf.constant([1.0, 2.0])
    results = [f(a, 1), f(a, 2), f(a, 1), f(a), f(a, mode="b"), f(a, pair=(1, 3)), f(a, 2)]
    return results, f.experimental_get_tracing_count()


@program
def print_runs_on_every_call(tf, tmp_path):
    path = tmp_path / f"{tf.__name__}.txt"

    @tf.function
    def f(x):
        tf.print("x:", x, output_stream=f"file://{path}")
        return x + 1

    for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
        f(tf.constant(v))
    return path.read_text(), f.experimental_get_tracing_count()


@program
def input_signatures(tf):
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        return x * 2

    return (
        f(tf.ones((3, 2))),
        f([[1, 2]]),  # a Python list, converted to the spec's dtype
        kind(lambda: f(tf.ones((3, 3)))),
        kind(lambda: f(tf.ones((3, 2), tf.int32))),
        kind(lambda: f(tf.ones((3, 2)), tf.ones((3, 2)))),
        kind(lambda: f(3.0)),
        [(s.shape.as_list(), s.dtype.name) for s in f.input_signature],
    )


@program
def variables_on_the_first_call_only(tf):
    holder = []

    @tf.function
    def once(x):
        if not holder:
            holder.append(tf.Variable(2.0))
        return x * holder[0]

    made = []

    @tf.function
    def later(x):
        if x.shape[0] == 3:
            made.append(tf.Variable(1.0))
        return x * 2

    a = tf.constant([1.0, 2.0])
    results = [once(a), once(tf.constant([1.0, 2.0, 3.0])), once(a)]
    holder[0].assign(5.0)  # read again by every call
    results.append(once(a))
    return results, kind(lambda: later(a)), kind(lambda: later(tf.constant([1.0, 2.0, 3.0])))


@program
def captures(tf):
    scale = [2.0]
    captured = tf.constant(1.0)
    variable = tf.Variable(1.0)

    @tf.function
    def f(x):
        return x * scale[0] + captured + variable

    a = tf.constant([1.0, 2.0])
    first = f(a)
    scale[0], captured = 5.0, tf.constant(10.0)  # Python values and tensors: frozen when traced
    variable.assign(100.0)  # a variable: read on every call
    return first, f(a)


@program
def methods_trace_per_instance(tf):
    class Scaler(tf.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k
            self.body_runs = 0

        @tf.function
        def __call__(self, x):
            self.body_runs += 1
            return x * self.k

    one, two = Scaler(2.0), Scaler(3.0)
    a = tf.constant([1.0, 2.0])
    results = [one(a), one(a + 1), two(a), one(a)]
    return results, one.body_runs, two.body_runs


@program
def run_functions_eagerly(tf):
    body_runs = []

    @tf.function
    def f(x):
        body_runs.append(1)
        return x

    a = tf.constant(1.0)
    f(a)
    tf.config.run_functions_eagerly(True)
    try:
        f(a)
        f(a)
        during = tf.config.functions_run_eagerly()
    finally:
        tf.config.run_functions_eagerly(False)
    f(a)
    return len(body_runs), during, f.experimental_get_tracing_count()


@program
def returned_structures(tf):
    @tf.function
    def f(x):
        return {"tensor": x, "numbers": (1, 2.5, True), "none": None, "list": [x * 2]}

    a = tf.constant([1.0, 2.0])
    return f(a), f(a + 1)


@program
def python_function_and_concrete_functions(tf):
    body_runs = []

    @tf.function
    def f(x):
        body_runs.append(1)
        return x * 3

    a = tf.constant([1.0, 2.0])
    concrete = f.get_concrete_function(a)
    count_after_concrete = f.experimental_get_tracing_count()
    return (
        f.python_function(a),
        concrete(tf.constant([2.0, 5.0])),
        f(a),  # the trace get_concrete_function made
        count_after_concrete,
        f.experimental_get_tracing_count(),
        len(body_runs),
    )


@program
def concrete_functions_from_tensor_specs(tf):
    # The serving pattern: a concrete function made from an input_signature or TensorSpecs,
    # called on batches of several sizes. Tracing counts are left out (TensorFlow traces
    # when the concrete function is made, ferrotape on each new shape's first call).
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def serve(x):
        return tf.nn.softmax(x * 2.0)

    @tf.function
    def scaled(x, scale=2.0, offsets=None):
        return x * scale if offsets is None else x * scale + offsets["b"]

    @tf.function
    def pair(a, b):
        return {"sum": a + b, "difference": a - b}

    rows = tf.constant([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0], [4.0, 4.0, 0.0]])
    serving = serve.get_concrete_function()
    by_default = scaled.get_concrete_function(tf.TensorSpec([None], tf.float32))
    by_three = scaled.get_concrete_function(tf.TensorSpec([None], tf.float32), 3.0)
    with_dict = scaled.get_concrete_function(tf.TensorSpec([2]), offsets={"b": tf.TensorSpec([2])})
    by_keyword = scaled.get_concrete_function(x=tf.TensorSpec([2], tf.int32), scale=2)
    sums = pair.get_concrete_function(tf.TensorSpec([None]), tf.TensorSpec([None]))
    v = tf.constant([1.0, -2.0])
    return (
        serving.structured_input_signature,
        by_keyword.structured_input_signature,
        [serving(rows[:n]) for n in (1, 3, 2)],
        serving(x=rows[:2]),
        serving([[1.0, 1.0, 2.0]]),  # a Python list converted to the spec's dtype
        serve.get_concrete_function(tf.TensorSpec([5, 3])) is serving,
        scaled.get_concrete_function(tf.TensorSpec([None])) is by_default,
        by_default(v),
        by_three(v),
        by_three(tf.constant([1.0, 2.0, 3.0])),
        with_dict(v, 2.0, offsets={"b": tf.constant([10.0, 20.0])}),
        by_keyword(tf.constant([1, 2])),
        sums(v, v),
        kind(lambda: serving(tf.ones([2, 3], tf.float64))),  # another dtype
        kind(lambda: serving()),  # missing argument
        kind(lambda: serving(rows, rows)),  # too many
        kind(lambda: by_default(v, 3.0)),  # another Python value than the bound one
        # `scale` may be left out only when no tensor argument follows it
        kind(lambda: with_dict(v, offsets={"b": v})),
        kind(lambda: serve.get_concrete_function(tf.TensorSpec([None, 4]))),
    )


@program
def datasets_generators_and_variables_inside(tf):
    # What a replay must fetch or draw again on every call (tracing counts left out: a
    # smaller last batch and the end of the data are paths of their own in ferrotape).
    iterator = iter(tf.data.Dataset.range(7).map(lambda v: v * 10).batch(3))

    @tf.function
    def step(it):
        batch = next(it)
        return tf.reduce_sum(batch), tf.shape(batch)[0]

    batches = [step(iterator) for _ in range(3)]
    end = kind(lambda: step(iterator))

    xs = np.arange(30, dtype=np.float32).reshape(10, 3) / 30.0
    data = tf.data.Dataset.from_tensor_slices((xs, xs.sum(1, keepdims=True))).batch(4)
    w = tf.Variable(tf.zeros([3, 1]))
    opt = tf.keras.optimizers.SGD(0.5)

    @tf.function
    def epoch():
        total = tf.constant(0.0)
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
            opt.apply_gradients([(tape.gradient(loss, w), w)])
            total += loss
        return total

    losses = [epoch() for _ in range(3)]

    g = tf.random.Generator.from_seed(1)
    draw = tf.function(lambda: g.normal([4]))
    different_draws = len({tuple(draw().numpy().tolist()) for _ in range(4)})

    v = tf.Variable([1.0, 2.0])
    read = tf.function(lambda: v)
    first = read()
    v.assign([3.0, 4.0])
    second = read()

    asked = []

    @tf.function
    def ask(x):
        asked.append((tf.executing_eagerly(), tf.inside_function(), tf.get_static_value(x)))
        return x

    ask(tf.constant(1))
    return (
        batches,
        end,
        losses,
        w,
        epoch.experimental_get_tracing_count(),
        different_draws,
        first,
        second,
        isinstance(first, tf.Variable),
        asked,
        tf.executing_eagerly(),
    )


@program
def stateful_recurrent_layers_in_compiled_steps(tf):
    # A stateful layer's states carry from call to call through a compiled function and
    # through fit's compiled step (both replayed), and reset_states reaches them.
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 6, 2)).astype(np.float32)
    y = rng.normal(size=(4, 1)).astype(np.float32)

    def weights_for(layer):
        return [rng.normal(scale=0.5, size=w.shape).astype(np.float32) for w in layer.weights]

    layer = tf.keras.layers.SimpleRNN(3, stateful=True)
    layer(x[:, :3])
    layer.set_weights(weights_for(layer))
    layer.reset_states()
    compiled = tf.function(lambda t: layer(t))
    calls = [compiled(x[:, :3]), compiled(x[:, 3:])]
    layer.reset_states()
    calls.append(compiled(x[:, :3]))

    model = tf.keras.Sequential(
        [tf.keras.Input((3, 2), batch_size=4), tf.keras.layers.LSTM(2, stateful=True)]
    )
    model.add(tf.keras.layers.Dense(1))
    model.set_weights(weights_for(model))
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    losses = [
        model.fit(x[:, s : s + 3], y, batch_size=4, epochs=1, shuffle=False, verbose=0).history[
            "loss"
        ][0]
        for s in (0, 3, 0)
    ]
    return calls, np.array(losses), model.get_weights()


@program
def variables_updated_and_tapes_inside(tf):
    w = tf.Variable([0.5, -1.0])
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(x):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.sin(w * x) ** 2)
            g = tape.gradient(loss, w)
            curvature = tf.reduce_sum(g * g)
        h = outer.gradient(curvature, w)
        opt.apply_gradients([(g, w)])
        return loss, g, h

    results = [step(tf.constant([1.0, 2.0])) for _ in range(3)]
    return results, w, step.experimental_get_tracing_count()


def _run(fn, module, tmp_path):
    if "tmp_path" in fn.__code__.co_varnames[: fn.__code__.co_argcount]:
        return plain(fn(module, tmp_path))
    return plain(fn(module))


def agree(got, expected):
    """Equal, with float values within float32 rounding of each other."""
    if isinstance(got, np.ndarray) and isinstance(expected, np.ndarray):
        if got.dtype.kind == "f" and expected.dtype.kind == "f":
            return got.shape == expected.shape and np.allclose(got, expected, rtol=1e-5, atol=1e-6)
        return np.array_equal(got, expected)
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(agree(got[k], expected[k]) for k in got)
    if isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple)):
        return (
            type(got) is type(expected)
            and len(got) == len(expected)
            and all(agree(g, e) for g, e in zip(got, expected, strict=True))
        )
    return type(got) is type(expected) and got == expected


@program
def none_dimensions_of_an_input_signature_trace_once(tf):
    body_runs = []
    w = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2) / 8)

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def f(x):
        body_runs.append(tuple(x.shape))  # None where the signature has None
        h = tf.nn.relu(tf.matmul(x, w) - 0.5)
        return {
            "mean": tf.reduce_mean(h, axis=0),
            "rows": tf.shape(x)[0],
            "size": tf.size(x),
            "ones": tf.reduce_sum(tf.ones_like(h)),
            "flat": tf.reshape(h, [-1]),
            "centred": x - tf.reduce_mean(x),
        }

    rng = np.random.default_rng(5)
    results = [f(rng.standard_normal((n, 4)).astype(np.float32)) for n in (3, 5, 7, 3, 2)]
    return results, body_runs, f.experimental_get_tracing_count()


@program
def a_training_step_with_a_none_batch_traces_once(tf):
    rng = np.random.default_rng(6)
    w1 = tf.Variable(rng.standard_normal((5, 8)).astype(np.float32) * 0.3)
    b1 = tf.Variable(np.zeros(8, np.float32))
    w2 = tf.Variable(rng.standard_normal((8, 3)).astype(np.float32) * 0.3)
    body_runs = []

    @tf.function(
        input_signature=[tf.TensorSpec([None, 5], tf.float32), tf.TensorSpec([None], tf.int32)]
    )
    def step(x, y):
        body_runs.append((tuple(x.shape), tuple(y.shape)))
        with tf.GradientTape() as tape:
            logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
        grads = tape.gradient(loss, [w1, b1, w2])
        for v, g in zip([w1, b1, w2], grads, strict=True):
            v.assign_sub(0.1 * g)
        return loss

    losses = []
    for n in (8, 5, 8, 3, 6):
        x = rng.standard_normal((n, 5)).astype(np.float32)
        y = rng.integers(0, 3, n).astype(np.int32)
        losses.append(step(x, y))
    return losses, [w1, b1, w2], body_runs, step.experimental_get_tracing_count()


@program
def reduce_retracing_relaxes_the_shapes_that_changed(tf):
    body_runs = []

    @tf.function(reduce_retracing=True)
    def f(x):
        body_runs.append(tuple(x.shape))
        return tf.reduce_sum(x, axis=0) * 2.0

    shapes = [(2, 3), (5, 3), (7, 3), (4, 3), (4, 5), (6, 7), (2, 3)]
    results = [f(np.ones(s, np.float32)) for s in shapes]
    return results, body_runs, f.experimental_get_tracing_count()


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_same_observations_as_tensorflow(fn, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TensorFlow's retracing warnings
        expected = _run(fn, real_tf, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no eager fallback in ferrotape
        got = _run(fn, ferrotape, tmp_path)
    assert agree(got, expected), f"ferrotape: {got}\nTensorFlow: {expected}"
