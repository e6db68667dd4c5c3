"""Errors reach Python through one mapping (``rust/ferrotape-py/src/errors.rs``).

An op's argument rules live in the op (Rust, where ``cargo test`` checks them) and come out as
TensorFlow's ``InvalidArgumentError``, as TensorFlow 2.21 raises them in eager mode; the binding
itself only refuses Python values it cannot convert, through the constructors in errors.rs.
"""

import re
from pathlib import Path

import numpy as np
import pytest

import ferrotape as tf

BINDING = Path(__file__).resolve().parents[1] / "rust" / "ferrotape-py" / "src"
# Building a Python exception by hand: pyo3's `PyTypeError::new_err`, `PyErr::new::<T, _>`, ...
RAISE = re.compile(r"\bPy\w+::new_err\b|\bPyErr::(new|from_type|from_value)\b")
EXEMPT = {"errors.rs"}


def test_the_binding_builds_exceptions_only_in_errors_rs():
    assert (BINDING / "errors.rs").is_file()
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted(BINDING.glob("*.rs"))
        if path.name not in EXEMPT
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if RAISE.search(line)
    ]
    assert not found, "raise through crate::errors instead:\n" + "\n".join(found)


def test_the_pattern_finds_a_direct_raise():
    assert RAISE.search('Err(PyValueError::new_err("x"))')
    assert RAISE.search("pyo3::exceptions::PyOSError::new_err(e.to_string())")
    assert RAISE.search("PyErr::from_type(cls, msg)")
    assert not RAISE.search("errors::value_error(msg)")


# Op argument rules that lived in the binding and now live in the op: (call, op, message part).
OP_ARGUMENT_RULES = [
    (lambda: tf.split(tf.ones([4]), 3), "Split", "not divisible by num_split=3"),
    (lambda: tf.split(tf.ones([4]), 0), "Split", "num_split must be in [1, "),
    (lambda: tf.split(tf.ones([4]), [3, 3]), "SplitV", "fit in dimension 4"),
    (lambda: tf.split(tf.ones([4]), [-1, -1]), "SplitV", "at most one -1"),
    (lambda: tf.split(tf.ones([4]), [1, 2]), "Split", "do not sum to dimension 4"),
    (lambda: tf.pad(tf.ones([2, 2]), [[1, 1]]), "Pad", "must have shape [2, 2]"),
    (lambda: tf.pad(tf.ones([2, 2]), [[-1, 1], [0, 0]]), "Pad", "non-negative"),
    (lambda: tf.pad(tf.ones([2]), [[0.5, 1]]), "Pad", "int32 or int64 paddings"),
    (lambda: tf.pad(tf.ones([2]), [[1, 1]], mode="WRAP"), "Pad", 'received "WRAP"'),
    (lambda: tf.add_n([tf.ones([2]), tf.ones([3, 2])]), "AddN", "same shape"),
    (lambda: tf.add_n([tf.ones([2]), tf.ones([2], tf.float64)]), "AddN", "same dtype"),
    (lambda: tf.add_n([tf.constant(1), 2.5]), "AddN", "same dtype"),
    (lambda: tf.add_n([]), "AddN", "at least one tensor"),
    (lambda: tf.unstack(tf.ones([2, 3]), num=3), "Unpack", "num=3 must equal dimension 2"),
    (lambda: tf.unstack(tf.ones([2, 3]), num=-1), "Unpack", "num=-1"),
    (lambda: tf.one_hot([0, 1], -1), "OneHot", "depth must be >= 0"),
    (lambda: tf.fill([2], [1.0, 2.0]), "Fill", "value must be a scalar"),
    (lambda: tf.linspace(0.0, 1.0, -1), "LinSpace", "num must be >= 0"),
    (lambda: tf.linspace(0.0, 1.0, 3, axis=1), "LinSpace", "axis 1 is out of range"),
    (lambda: tf.range([1, 2]), "Range", "limit must be a scalar"),
    (lambda: tf.eye(-1), "Eye", "num_rows must be >= 0"),
    (lambda: tf.eye(2, num_columns=-1), "Eye", "num_columns must be >= 0"),
    (lambda: tf.zeros([-1, 2]), "Zeros", "received -1 in [-1, 2]"),
    (lambda: tf.tile(tf.ones([2]), [-1]), "Tile", "dimensions must be >= 0"),
    (lambda: tf.broadcast_to(tf.ones([2]), [-1]), "BroadcastTo", "dimensions must be >= 0"),
    (lambda: tf.scatter_nd([[0]], [1.0], [-1]), "ScatterNd", "dimensions must be >= 0"),
    (lambda: tf.random.normal([-2]), "RandomStandardNormal", "dimensions must be >= 0"),
    (lambda: tf.random.uniform([2], dtype=tf.int32), "RandomUniform", "maxval must be specified"),
    (lambda: tf.ones([2, 2])[..., ...], "StridedSlice", "a single ellipsis"),
]


@pytest.mark.parametrize("call, op, part", OP_ARGUMENT_RULES)
def test_op_argument_errors_are_tensorflows_invalid_argument_error(call, op, part):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        call()
    assert str(info.value).startswith(f"{op}: ") and part in str(info.value), str(info.value)
    # ferrotape's InvalidArgumentError is also the builtin ValueError (python/ferrotape/errors.py).
    assert isinstance(info.value, ValueError)


def test_a_bad_split_is_caught_as_a_bad_matmul_is():
    for call in (
        lambda: tf.matmul(tf.ones([2, 3]), tf.ones([2, 3])),
        lambda: tf.split(tf.ones([4]), 3),
    ):
        try:
            call()
        except tf.errors.InvalidArgumentError:
            continue
        pytest.fail("not an InvalidArgumentError")


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: tf.Variable(1.0, constraint=lambda x: x), "Variable"),
    ],
)
def test_what_tensorflow_has_and_ferrotape_not_is_unimplemented(call, op):
    with pytest.raises(tf.errors.UnimplementedError, match=f"^{op}: ") as info:
        call()
    assert isinstance(info.value, NotImplementedError)


@pytest.mark.parametrize(
    "call, exc, part",
    [
        # A value of the wrong Python type: TypeError, as TensorFlow.
        (lambda: tf.add_n(3), TypeError, "add_n: expected an iterable of tensors, received int"),
        (lambda: tf.stack(None, 0), TypeError, "stack: expected an iterable of tensors"),
        (lambda: tf.pad(tf.ones([2]), [[1, 1]], mode=3), TypeError, "expected a string"),
        (lambda: tf.constant(3.5, dtype=tf.int32), TypeError, "Cannot convert 3.5"),
        (lambda: tf.as_dtype("nope"), TypeError, 'dtype "nope"'),
        (lambda: len(tf.constant(1.0)), TypeError, "rank-0"),
        # A value TensorFlow's Python layer refuses with ValueError.
        (lambda: tf.constant(2**70), ValueError, "out of int64 range"),
        (lambda: tf.ones([2])[True], ValueError, "a mask cannot be scalar"),
        (lambda: tf.Variable(), ValueError, "Variable: initial_value must be specified"),
    ],
)
def test_conversion_errors_keep_tensorflows_python_types(call, exc, part):
    with pytest.raises(exc) as info:
        call()
    assert part in str(info.value)
    assert not isinstance(info.value, tf.errors.OpError), "conversion is not an op error"


def test_silu_beta_is_computed_by_the_op():
    x = np.array([-1.5, 0.0, 2.0], "float32")
    want = x / (1 + np.exp(-2.5 * x))
    np.testing.assert_allclose(tf.nn.silu(tf.constant(x), beta=2.5).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(tf.nn.silu(x).numpy(), x / (1 + np.exp(-x)), rtol=1e-6)


def test_split_and_pad_still_accept_what_tensorflow_accepts():
    assert [t.shape for t in tf.split(tf.ones([6]), [1, -1, 2])] == [(1,), (3,), (2,)]
    assert [t.shape for t in tf.split(tf.ones([0]), 3)] == [(0,), (0,), (0,)]
    assert len(tf.split(tf.ones([4]), 2, num=-1)) == 2  # eager TensorFlow ignores num
    padded = tf.pad(tf.constant([1, 2, 3]), [[2, 2]], mode="reflect")
    assert padded.numpy().tolist() == [3, 2, 1, 2, 3, 2, 1]
    assert tf.linspace(0.0, 1.0, 3, axis=-1).numpy().tolist() == [0.0, 0.5, 1.0]


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: tf.expand_dims(tf.ones([2]), "a"), "axis"),
        (lambda: tf.concat([tf.ones([2])], "a"), "axis"),
        (lambda: tf.split(tf.ones([2]), "a"), "num_or_size_splits"),
        (lambda: tf.reshape(tf.ones([2]), "a"), "shape"),
        (lambda: tf.transpose(tf.ones([2]), perm="a"), "perm"),
        (lambda: tf.slice(tf.ones([2]), [0], "a"), "size"),
        (lambda: tf.reduce_sum(tf.ones([2]), axis="a"), "axis"),
        (lambda: tf.argmax(tf.ones([2]), axis="a"), "axis"),
        (lambda: tf.one_hot([0], "x"), "depth"),
        (lambda: tf.linspace(0.0, 1.0, "x"), "num"),
        (lambda: tf.range("a"), "limit"),
        (lambda: tf.range(0, 3, "a"), "delta"),
        (lambda: tf.constant([1, 2], shape="a"), "shape"),
    ],
)
def test_values_converted_inside_an_op_name_their_argument(call, argument):
    # PyO3 names the arguments it converts in a note; values an op converts itself get the same.
    with pytest.raises(TypeError) as info:
        call()
    assert f"while processing '{argument}'" in getattr(info.value, "__notes__", []), getattr(
        info.value, "__notes__", None
    )
