"""Control flow, ``print`` and ``TensorSpec`` run in TensorFlow 2.21 and in ferrotape, compared.

Each program takes the module (``tensorflow`` or ``ferrotape``) as ``tf`` and returns a nest of
results: tensors become (dtype name, shape, values), an expected error becomes its kind.
``while_loop`` programs run TensorFlow inside ``tf.function``: ferrotape's eager loop follows
``tf.function``'s rules (result structure, dtype and shape checks), because eager TensorFlow's
loop has quirks programs cannot rely on (it fails on its own documented ``[i]`` example).

Left out on purpose, where TensorFlow's error is an accident of its internals: ``map_fn``/``scan``
with a non-callable ``fn`` (TF: AttributeError from ``fn.__name__``; ferrotape: TypeError) and
``scan``/``foldl``/``vectorized_map`` over scalars (TF: IndexError; ferrotape: ValueError).

Skipped without TensorFlow (``pip install tensorflow-cpu``).
"""

import collections
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
real_tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)"
)

import ferrotape  # noqa: E402 - after the skip

PROGRAMS = []
GRAPH = []  # programs TensorFlow runs inside tf.function


def program(fn=None, graph=False):
    def add(f):
        PROGRAMS.append(f)
        if graph:
            GRAPH.append(f)
        return f

    return add(fn) if fn is not None else add


def kind(fn):
    """Run fn; the kind of exception it raises, or 'no error'."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - the kind is the result being compared
        name = type(err).__name__
        if name in ("InvalidArgumentError", "OutOfRangeError"):
            return name
        for k in (TypeError, ValueError):
            if isinstance(err, k):
                return k.__name__
        return name
    return "no error"


def plain(x, tf):
    if isinstance(x, tf.Tensor) and x.dtype.name == "string":  # tf.function made it a tensor
        return x.numpy().decode()
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return ("tensor", x.dtype.name, tuple(x.shape), np.asarray(x.numpy()).tolist())
    if isinstance(x, dict):
        return {k: plain(v, tf) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v, tf) for v in x])
    return x


X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)


@program
def cond_and_case(tf):
    t, f = tf.constant(True), tf.constant(False)
    return (
        tf.cond(tf.constant(2) < 5, lambda: tf.constant(1), lambda: tf.constant(2)),
        tf.cond(tf.constant([False]), lambda: 1, lambda: [2]),
        tf.case([(f, lambda: 1), (t, lambda: 2)], default=lambda: 3),
        tf.case([(t, lambda: [7])]),
        tf.case([(f, lambda: 1), (t, lambda: [7])]),
        tf.case([(t, lambda: 1), (t, lambda: 2)], exclusive=True),
        tf.switch_case(tf.constant(1), [lambda: 10, lambda: 11]),
        tf.switch_case(tf.constant(5), [lambda: 10, lambda: 11]),
        tf.switch_case(tf.constant(-1), [lambda: 10, lambda: 11], default=lambda: 9),
        kind(lambda: tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2)),
        kind(lambda: tf.cond(True, 1, lambda: 2)),
        kind(lambda: tf.case([(f, lambda: 1), (f, lambda: 2)])),
        kind(lambda: tf.case([(t, lambda: 1), (t, lambda: 2)], default=lambda: 3, exclusive=True)),
        kind(lambda: tf.case([(True, lambda: 1)], default=lambda: 3)),
        kind(lambda: tf.case([t], default=lambda: 3)),
        kind(lambda: tf.case(3)),
        kind(lambda: tf.switch_case(1, [lambda: 1])),
        kind(lambda: tf.switch_case(tf.constant(1.0), [lambda: 1])),
        kind(lambda: tf.switch_case(tf.constant(0), {0: lambda: 1, 2: lambda: 2})),
    )


@program(graph=True)
def while_loops(tf):
    i = tf.constant(0)
    pair = collections.namedtuple("Pair", "j k")
    return (
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [i]),
        tf.while_loop(lambda i: i < 3, lambda i: (i + 1,), (i,)),
        tf.while_loop(lambda i, j: i < 3, lambda i, j: [i + 1, j * 2], (0, 1.5)),
        tf.while_loop(
            lambda i, p: i < 3,
            lambda i, p: (i + 1, pair(p.j + p.k, p.j - p.k)),
            (i, pair(tf.constant(1), tf.constant(2))),
        )[1].j,
        tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i], maximum_iterations=4),
        tf.while_loop(lambda i, j: i < 10, lambda i, j: (i + 1, j), (i, i), maximum_iterations=0),
        tf.while_loop(
            lambda i, m: i < 3,
            lambda i, m: (i + 1, tf.concat([m, m], 0)),
            (i, tf.ones([1, 2])),
            shape_invariants=(tf.TensorShape([]), tf.TensorShape([None, 2])),
        ),
    )


@program(graph=True)
def while_loop_errors(tf):
    return (
        kind(lambda: tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1,), (0, 0))),
        kind(lambda: tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, p[0]), (0, (0, 0)))),
        kind(
            lambda: tf.while_loop(
                lambda i, m: i < 3, lambda i, m: (i + 1, tf.concat([m, m], 0)), (0, tf.ones([1]))
            )
        ),
        kind(
            lambda: tf.while_loop(
                lambda i, m: i < 3, lambda i, m: (i + 1, tf.cast(m, tf.float64)), (0, tf.ones([1]))
            )
        ),
        kind(lambda: tf.while_loop(1, lambda i: i, [0])),
        kind(lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], parallel_iterations=0)),
        kind(lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=2.5)),
    )


@program
def map_fns(tf):
    x = tf.constant(X)
    return (
        tf.map_fn(lambda r: r * 2, x),
        tf.map_fn(tf.reduce_sum, x),
        tf.map_fn(lambda p: p[0] * p[1], [x, x], fn_output_signature=tf.float32),
        tf.map_fn(lambda p: (p[0], p[1] + 1), (x, x)),
        tf.map_fn(lambda r: tf.cast(r, tf.int32), x, dtype=tf.int32),
        tf.map_fn(
            lambda r: {"a": r, "b": r[0]}, x, fn_output_signature={"a": tf.float32, "b": tf.float32}
        ),
        tf.map_fn(tf.reduce_sum, x, fn_output_signature=tf.TensorSpec([], tf.float32)),
        tf.map_fn(lambda r: 1, tf.constant([1, 2])),
        tf.map_fn(lambda r: r * 2, np.arange(3)),
        tf.map_fn(lambda r: r * 2, tf.zeros([0, 3])),
        tf.map_fn(lambda r: r * 2, tf.zeros([0, 3]), fn_output_signature=tf.TensorSpec([3])),
        tf.map_fn(lambda r: r, tf.zeros([0, 3]), fn_output_signature=tf.int32),
    )


@program
def map_fn_errors(tf):
    x = tf.constant(X)
    uneven = tf.constant([[1.0, 2.0], [2.0, 2.0]])
    return (
        kind(lambda: tf.map_fn(lambda r: r[0] * r[1], [x, x])),
        kind(lambda: tf.map_fn(lambda r: [r[0], r[1]], (x, x))),
        kind(lambda: tf.map_fn(lambda r: tf.cast(r, tf.int32), x)),
        kind(lambda: tf.map_fn(lambda r: r, x, fn_output_signature=tf.TensorSpec([3]))),
        kind(lambda: tf.map_fn(lambda r: r, x, fn_output_signature=(tf.float32, tf.float32))),
        kind(lambda: tf.map_fn(lambda r: r[: tf.cast(r[0], tf.int32)], uneven)),
        kind(lambda: tf.map_fn(lambda r: r[: tf.cast(r[0], tf.int32)], uneven, infer_shape=False)),
        kind(lambda: tf.map_fn(lambda r: r, tf.constant(3.0))),
        kind(lambda: tf.map_fn(lambda r: r, [])),
        kind(lambda: tf.map_fn(lambda r: r[0], (tf.zeros([3]), tf.zeros([4])))),
        kind(lambda: tf.map_fn(lambda r: 1.5, tf.constant([1, 2]))),
    )


@program
def scans_and_folds(tf):
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    m = tf.reshape(tf.range(8.0), [2, 2, 2])
    return (
        tf.scan(lambda a, e: a + e, x),
        tf.scan(lambda a, e: a + e, x, reverse=True),
        tf.scan(lambda a, e: a * e, x, initializer=10.0, reverse=True),
        tf.scan(lambda a, e: (a[0] + e, a[1] * e), x, initializer=(0.0, 1.0)),
        tf.scan(lambda a, e: (a[0] + e[0], a[1] + e[1]), (x, x)),
        tf.scan(lambda a, e: tf.matmul(a, e), m),
        tf.scan(lambda a, e: a + e, tf.zeros([0]), initializer=1.0),
        tf.foldl(lambda a, e: a * 10 + e, x),
        tf.foldr(lambda a, e: a * 10 + e, x),
        tf.foldl(lambda a, e: (a[0] + e[0], a[1] * e[1]), (x, x)),
        tf.foldr(lambda a, e: a - e, x, initializer=10.0),
        tf.foldl(lambda a, e: a + e, tf.zeros([0]), initializer=1.0),
        tf.foldl(lambda a, e: tf.cast(a, tf.int32), x),
        kind(lambda: tf.scan(lambda a, e: a + e, tf.zeros([0]))),
        kind(lambda: tf.scan(lambda a, e: tf.cast(a, tf.int32), x)),
        kind(lambda: tf.scan(lambda a, e: tf.concat([a, a], 0), tf.ones([3, 1]))),
        kind(lambda: tf.scan(lambda a, e: [a[0], a[1]], x, initializer=(0.0, 1.0))),
        kind(lambda: tf.scan(lambda a, e: a[0] + e[0], (x, x))),
        kind(lambda: tf.foldl(lambda a, e: a + e, tf.zeros([0]))),
        kind(lambda: tf.foldr(lambda a, e: a + e, tf.zeros([0]))),
        kind(lambda: tf.foldl(lambda a, e: a[0], (x, x))),
    )


@program
def vectorized_maps_and_graph_names(tf):
    x = tf.constant(X)
    return (
        tf.vectorized_map(lambda r: r * 2, x),
        tf.vectorized_map(lambda p: (p[0] + p[1], p[0][0]), (x, x)),
        tf.vectorized_map(lambda r: tf.constant(1.0), x),
        tf.vectorized_map(lambda r: {"a": r["a"] * 2}, {"a": x}),
        tf.vectorized_map(lambda r: r * 2, tf.zeros([0, 3])),
        kind(lambda: tf.vectorized_map(lambda r: r[0], (tf.zeros([3]), tf.zeros([4])))),
        tf.identity_n([tf.constant(1), 2.0, tf.Variable([3.0])]),
        tf.identity_n(tf.constant([4, 5])),
        tf.no_op(),
        tf.group(tf.constant(1)),
        tf.get_static_value(tf.constant([1, 2])).tolist(),
        tf.get_static_value(tf.Variable(1.0)),
        tf.get_static_value([1, 2]),
    )


@program
def tensor_specs(tf):
    spec = tf.TensorSpec([None, 2], tf.float32, name="x")
    other = tf.TensorSpec([2], tf.float32, "b")
    return (
        repr(spec),
        repr(tf.TensorSpec([], tf.int64)),
        repr(tf.TensorSpec.from_tensor(tf.zeros([2, 3], tf.int32), name="t")),
        repr(tf.TensorSpec.from_spec(spec, name="z")),
        spec == tf.TensorSpec([None, 2], tf.float32, name="x"),
        other == tf.TensorSpec([2], tf.float32, "a"),
        hash(other) == hash(tf.TensorSpec([2], tf.float32, "a")),
        spec.is_compatible_with(tf.zeros([3, 2])),
        spec.is_compatible_with(tf.zeros([3, 3])),
        spec.is_compatible_with(tf.TensorSpec([5, 2], name="q")),
        spec.is_compatible_with(np.zeros([3, 2], np.float32)),
        spec.is_compatible_with(tf.Variable(np.zeros([3, 2], np.float32))),
        tf.TensorSpec([2, 3]).is_subtype_of(tf.TensorSpec([None, 3])),
        repr(tf.TensorSpec([2, 3]).most_specific_common_supertype([tf.TensorSpec([2, 4])])),
        kind(lambda: tf.TensorSpec([2], "foo")),
        kind(lambda: tf.TensorSpec([-1])),
        kind(lambda: tf.TensorSpec("ab")),
        kind(lambda: tf.TensorSpec.from_tensor(np.zeros([2]))),
    )


def _run(fn, module):
    if fn in GRAPH and module is real_tf:
        # Run TensorFlow's loop as tf.function runs it (see the module doc).
        return plain(real_tf.function(lambda: fn(module))(), module)
    return plain(fn(module), module)


def _normalise(x):
    if isinstance(x, tuple) and len(x) == 4 and x[0] == "tensor":
        return ("tensor", x[1], x[2], np.asarray(x[3], np.float64).round(5).tolist())
    if isinstance(x, dict):
        return {k: _normalise(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_normalise(v) for v in x)
    return x.replace("tf.", "") if isinstance(x, str) else x


def _agree(got, expected):
    """Equal, except that ferrotape's InvalidArgumentError (a ValueError subclass) stands for
    TensorFlow's ValueError: code catching ValueError catches both."""
    if got == "InvalidArgumentError" and expected == "ValueError":
        return True
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(_agree(got[k], expected[k]) for k in got)
    if isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple)):
        return (
            type(got) is type(expected)
            and len(got) == len(expected)
            and all(_agree(g, e) for g, e in zip(got, expected, strict=True))
        )
    return got == expected


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_same_results_as_tensorflow(fn):
    expected = _normalise(_run(fn, real_tf))
    got = _normalise(_run(fn, ferrotape))
    assert _agree(got, expected), f"ferrotape: {got}\nTensorFlow: {expected}"


PRINT_INPUTS = [
    lambda tf: (tf.constant([1 / 3, 2 / 3, 1e-7, 12345678.0, 1e20, -0.0]),),
    lambda tf: (tf.constant([1 / 3, 1e16, 123456789012.0], tf.float64),),
    lambda tf: (tf.constant([np.nan, np.inf, -np.inf, 0.1]),),
    lambda tf: (tf.constant([0.1, 1.5, 65504.0], tf.float16),),
    lambda tf: (tf.reshape(tf.range(8 * 8 * 8), [8, 8, 8]),),
    lambda tf: (tf.reshape(tf.range(12), [3, 4]), tf.constant([True, False])),
    lambda tf: (tf.zeros([2, 0]), tf.zeros([0, 2]), tf.zeros([0]), tf.zeros([0], tf.bool)),
    lambda tf: ("loss:", tf.constant(1.5), 3, 2.5, None, True, np.array([1.0])),
    lambda tf: ([tf.constant(1), "x", 2.0], {"b": tf.constant([1, 2]), "a": "s"}),
    lambda tf: ({"k": [tf.constant(1.0), (2, tf.constant([3, 4]))]}, (tf.constant(1),)),
    lambda tf: ("100% {}", tf.constant(1), [tf.constant(i) for i in range(30)]),
    lambda tf: (tf.Variable([[1.0, 2.0]]), tf.constant(7, tf.int64)),
]


@pytest.mark.parametrize("summarize", [3, 1, 0, -1, None, 20])
@pytest.mark.parametrize("make", PRINT_INPUTS)
def test_print_text_matches_tensorflow(make, summarize, tmp_path):
    texts = []
    for module in (real_tf, ferrotape):
        path = tmp_path / f"{module.__name__}.txt"
        module.print(*make(module), summarize=summarize, sep=" | ", output_stream=f"file://{path}")
        texts.append(path.read_text())
    assert texts[1] == texts[0]


# Branches on tensor values inside a compiled function: TensorFlow converts them to graph ops
# (autograph), ferrotape guards its traces on them. Each program makes a compiled step and
# calls it on inputs that take every path more than once; the results and the variables after
# each call must agree.
BRANCH_INPUTS = [([1.0, 2.0], 2), ([-1.0, 0.5], 3), ([2.0, -1.0], 0), ([1.0, 2.0], 2)] * 2


def branches_then_updates(tf):
    v = tf.Variable(0.0)

    @tf.function
    def step(x, n):
        y = x * 2.0 if tf.reduce_sum(x) > 0 else -x
        i = tf.constant(0)
        while i < n:
            y = y + 1.0
            i += 1
        z = tf.cond(y[0] > 3.0, lambda: y * 10.0, lambda: y)
        _, w = tf.while_loop(lambda k, w: k < n, lambda k, w: (k + 1, w * 0.5), (0, z))
        for j in tf.range(n):
            w = w + tf.cast(j, tf.float32)
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.cond(x[0] > 0, lambda: tf.reduce_sum(x**3), lambda: tf.reduce_sum(tf.sin(x)))
        g = tape.gradient(loss, x)
        if w[1] > 0:
            v.assign_add(tf.reduce_sum(w))
        else:
            v.assign_sub(1.0)
        return w, g

    return step, v


def an_update_then_a_branch(tf):
    v = tf.Variable(1.0)

    @tf.function
    def step(x, n):
        v.assign(v * 0.5 + tf.reduce_sum(x))
        total = tf.zeros_like(x)
        for _ in tf.range(n):
            total = total + v
        return total

    return step, v


def an_if_on_a_variable_read(tf):
    counter = tf.Variable(0)

    @tf.function
    def step(x, n):
        del n
        y = x * 2.0 if counter % 3 == 1 else x
        counter.assign_add(1)
        return (y,)

    return step, counter


BRANCH_PROGRAMS = [branches_then_updates, an_update_then_a_branch, an_if_on_a_variable_read]


@pytest.mark.parametrize("make", BRANCH_PROGRAMS, ids=[make.__name__ for make in BRANCH_PROGRAMS])
def test_branches_inside_a_compiled_function_agree_with_tensorflow(make):
    import warnings

    runs = []
    for module in (real_tf, ferrotape):
        step, variable = make(module)
        with warnings.catch_warnings():
            # TensorFlow's retracing warnings; in ferrotape, no eager fallback.
            warnings.simplefilter("ignore" if module is real_tf else "error")
            runs.append(
                [
                    _normalise(
                        plain((*step(module.constant(x), module.constant(n)), variable), module)
                    )
                    for x, n in BRANCH_INPUTS
                ]
            )
    assert runs[1] == runs[0]
