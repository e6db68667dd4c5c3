"""Bad input raises a Python exception (an ``Exception``, never the ``BaseException`` a Rust
panic would surface as): every public function and operator is called with odd arguments."""

import itertools
import operator
import random

import numpy as np
import pytest

import ferrotape as tf

ODD_VALUES = [
    tf.constant(1.0),
    tf.zeros([0]),
    tf.zeros([2, 0]),
    tf.zeros([2, 0])[1],  # an empty view with an offset
    tf.ones([1, 0, 2])[:, :, ::-1],
    tf.ones([2, 3]),
    tf.constant([1, 2]),
    tf.constant([True, False]),
    tf.constant(np.array([[1.0, 2.0], [3.0, 4.0]])),
    tf.Variable([1.0, 2.0]),
    3,
    -1,
    2.5,
    [1, 2],
    [[0, 1]],
    None,
    np.array([-5]),
    "text",
]
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy-to-numpy pairs

SKIP = {"function", "device", "custom_gradient", "executing_eagerly"}


def public_functions():
    spaces = {"": tf, "math.": tf.math, "nn.": tf.nn, "linalg.": tf.linalg, "random.": tf.random}
    for prefix, module in spaces.items():
        for name in module.__all__:
            fn = getattr(module, name)
            if callable(fn) and not isinstance(fn, type) and name not in SKIP:
                yield prefix + name, fn


def calls_without_panic(fn, argument_lists):
    for args in argument_lists:
        try:
            fn(*args)
        except Exception:
            pass  # a clear Python exception is the point


@pytest.mark.parametrize("name, fn", list(public_functions()), ids=lambda x: x)
def test_functions_never_panic(name, fn):
    rng = random.Random(name)
    singles = [(v,) for v in ODD_VALUES]
    pairs = list(itertools.product(ODD_VALUES[:10], repeat=2))
    triples = [tuple(rng.sample(ODD_VALUES, 3)) for _ in range(20)]
    calls_without_panic(fn, singles + pairs + triples)


BINARY = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.matmul,
    operator.lt,
    operator.eq,
    operator.and_,
]
INDICES = [
    0,
    -1,
    5,
    slice(None, None, -1),
    slice(1, None, 2),
    None,
    ...,
    (0, 0),
    (None, ..., 0),
    True,
    1.5,
    [0],
    tf.constant(1),
    tf.constant([0, 1]),
    (slice(0, 0),),
    (0, ..., ...),
]


def test_operators_and_indexing_never_panic():
    for a, b in itertools.product(ODD_VALUES, ODD_VALUES):
        for op in BINARY:
            calls_without_panic(op, [(a, b)])
    for a in ODD_VALUES:
        calls_without_panic(operator.getitem, [(a, i) for i in INDICES])
        for convert in (len, float, bool, repr, np.asarray):
            calls_without_panic(convert, [(a,)])


def test_empty_views_join_and_transpose_errors_are_clear():
    rows = tf.unstack(tf.zeros([2, 0]))
    assert tf.concat(rows, 0).shape == (0,)
    assert tf.add_n(rows).shape == (0,)
    with pytest.raises(tf.errors.InvalidArgumentError, match="MatrixTranspose"):
        tf.linalg.matrix_transpose(tf.ones([3]))
