"""Issue 9: one checked path for sizes, fallible allocation, zero-size tensors.

Oversized shapes must end in TensorFlow's exceptions (``InvalidArgumentError`` for a count past
2**63 - 1, ``ResourceExhaustedError``, also a ``MemoryError``, for one the machine cannot hold),
naming the op and the shape. Each reproducer runs in its own interpreter (``isolated.py``),
under an address-space limit so that a check that regresses fails the test instead of
exhausting the machine.
"""

import numpy as np
import pytest
from isolated import run_snippet

import ferrotape as tf

# A regressed check would try to allocate terabytes: cap the child's address space at 16 GiB.
_LIMIT = "import resource; resource.setrlimit(resource.RLIMIT_AS, (16 << 30, 16 << 30))\n"

TOO_MANY = "would have more than 2**63 - 1 elements"
OOM = "OOM when allocating tensor with shape"

# (code, exception class, substrings the message must contain: the op and the shape)
OVERSIZED = [
    (
        "tf.zeros([2**32, 2**32])",
        "InvalidArgumentError",
        ["Zeros", "[4294967296, 4294967296]", TOO_MANY],
    ),
    ("tf.ones([2**32, 2**32])", "InvalidArgumentError", ["Ones", TOO_MANY]),
    (
        "tf.fill([2**32, 2**32], 1.0)",
        "InvalidArgumentError",
        ["[4294967296, 4294967296]", TOO_MANY],
    ),
    (
        "tf.random.normal([2**32, 2**32])",
        "InvalidArgumentError",
        ["RandomStandardNormal", TOO_MANY],
    ),
    ("tf.random.uniform([2**32, 2**32])", "InvalidArgumentError", ["RandomUniform", TOO_MANY]),
    (
        "tf.random.truncated_normal([2**32, 2**32])",
        "InvalidArgumentError",
        ["TruncatedNormal", TOO_MANY],
    ),
    ("tf.constant(1.0, shape=[2**32, 2**32])", "InvalidArgumentError", ["Const", TOO_MANY]),
    ("tf.reshape(tf.ones([1]), [2**32, 2**32])", "InvalidArgumentError", ["Reshape", TOO_MANY]),
    ("tf.reshape(tf.zeros([0]), [2**32, 2**32, 0])", "InvalidArgumentError", ["Reshape", TOO_MANY]),
    ("tf.tile(tf.ones([1, 1]), [2**32, 2**32])", "InvalidArgumentError", ["Tile", TOO_MANY]),
    ("tf.Variable(tf.zeros([2**32, 2**32]))", "InvalidArgumentError", ["Zeros", TOO_MANY]),
    (
        "tf.keras.initializers.GlorotUniform()([2**32, 2**32])",
        "InvalidArgumentError",
        ["RandomUniform", TOO_MANY],
    ),
    ("tf.zeros([2**40])", "ResourceExhaustedError", ["Zeros", OOM, "[1099511627776]", "float32"]),
    ("tf.zeros([2**63 - 1])", "ResourceExhaustedError", ["Zeros", OOM, "[9223372036854775807]"]),
    ("tf.ones([2**40], dtype=tf.int64)", "ResourceExhaustedError", ["Ones", OOM, "int64"]),
    ("tf.fill([2**40], 1.0)", "ResourceExhaustedError", [OOM, "[1099511627776]"]),
    ("tf.broadcast_to(1.0, [2**40])", "ResourceExhaustedError", ["BroadcastTo", OOM]),
    ("tf.constant(1.0, shape=[2**40])", "ResourceExhaustedError", [OOM, "[1099511627776]"]),
    ("tf.random.normal([2**40])", "ResourceExhaustedError", ["RandomStandardNormal", OOM]),
    ("tf.random.uniform([2**40])", "ResourceExhaustedError", ["RandomUniform", OOM]),
    ("tf.Variable(tf.zeros([2**40]))", "ResourceExhaustedError", ["Zeros", OOM]),
    ("tf.keras.initializers.Zeros()([2**40])", "ResourceExhaustedError", [OOM, "[1099511627776]"]),
    (
        "tf.keras.layers.Dense(2**40)(tf.ones([1, 4]))",
        "ResourceExhaustedError",
        [OOM, "[4, 1099511627776]"],
    ),
    ("tf.one_hot([1], 2**40)", "ResourceExhaustedError", ["OneHot", OOM, "[1, 1099511627776]"]),
    ("tf.eye(2**30)", "ResourceExhaustedError", ["Eye", OOM, "[1073741824, 1073741824]"]),
    ("tf.tile(tf.ones([1]), [2**40])", "ResourceExhaustedError", ["Tile", OOM, "[1099511627776]"]),
    (
        "tf.pad(tf.ones([2]), [[0, 2**40]])",
        "ResourceExhaustedError",
        ["Pad", OOM, "[1099511627778]"],
    ),
    (
        "tf.linspace(0.0, 1.0, 2**40)",
        "ResourceExhaustedError",
        ["LinSpace", OOM, "[1099511627776]"],
    ),
    ("tf.range(2**40)", "ResourceExhaustedError", ["Range", OOM, "[1099511627776]"]),
    ("tf.range(0, 2**62, 1)", "ResourceExhaustedError", ["Range", OOM, "[4611686018427387904]"]),
    (
        "tf.matmul(tf.ones([2**20, 0]), tf.ones([0, 2**20]))",
        "ResourceExhaustedError",
        ["MatMul", OOM, "[1048576, 1048576]"],
    ),
    ("tf.ones([2**20, 1]) + tf.ones([1, 2**20])", "ResourceExhaustedError", ["AddV2", OOM]),
    (
        # im2col's patch matrix (positions x patch) is 256 GB here, though both operands are small
        "tf.nn.conv2d(tf.zeros([1, 4096, 4096, 1]), tf.zeros([64, 64, 1, 1]), 1, 'SAME')",
        "ResourceExhaustedError",
        ["Conv2D", OOM, "[4096, 4096, 64, 64, 1]"],
    ),
    (
        "tf.gather(tf.ones([1, 2**20]), tf.zeros([2**20], dtype=tf.int32))",
        "ResourceExhaustedError",
        [OOM, "[1048576, 1048576]"],
    ),
]


@pytest.mark.parametrize(("code", "exc", "parts"), OVERSIZED, ids=[c for c, _, _ in OVERSIZED])
def test_oversized_shapes_raise_typed_errors(code, exc, parts):
    outcome = run_snippet(_LIMIT + code)
    assert outcome.kind == "raised", f"{code}: {outcome}"
    assert exc in outcome.exc_types, f"{code}: {outcome}"
    if exc == "ResourceExhaustedError":
        assert "MemoryError" in outcome.exc_types and "OpError" in outcome.exc_types
    for part in parts:
        assert part in outcome.message, f"{code}: {part!r} not in {outcome.message!r}"


def test_resource_exhausted_is_catchable_as_memory_error():
    assert issubclass(tf.errors.ResourceExhaustedError, MemoryError)
    assert issubclass(tf.errors.ResourceExhaustedError, tf.errors.OpError)
    assert "ResourceExhaustedError" in tf.errors.__all__
    with pytest.raises(MemoryError, match="OOM when allocating"):
        tf.zeros([2**40])


def test_empty_shapes_with_huge_dims_are_valid():
    # TensorFlow counts from the left: a leading 0 keeps the count at 0 (a valid empty tensor).
    x = tf.zeros([0, 2**32, 2**32])
    assert x.shape == (0, 2**32, 2**32)
    assert int(tf.size(x)) == 0
    assert float(tf.reduce_sum(x)) == 0.0


def _grad(f, x0):
    x = tf.Variable(x0)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(f(x))
    return f(tf.constant(x0)), tape.gradient(y, x)


# (name, function of ft or np module and input, input shape)
ZERO_SIZE = [
    ("slice_rows", lambda m, x: x[1:], [2, 0]),
    ("slice_cols", lambda m, x: x[:, 1:], [2, 0]),
    ("slice_empty", lambda m, x: x[1:], [0, 0]),
    ("slice_step", lambda m, x: x[::-1, :], [2, 0]),
    ("gather", lambda m, x: m.take(x, [1, 0], axis=0) if m is np else tf.gather(x, [1, 0]), [2, 0]),
    (
        "gather_nd",
        lambda m, x: x[np.array([1, 0])] if m is np else tf.gather_nd(x, [[1], [0]]),
        [2, 0],
    ),
    ("pad", lambda m, x: m.pad(x, [[1, 1], [0, 0]]), [2, 0]),
    ("split", lambda m, x: m.split(x, 2)[0], [2, 0]),
    ("unstack", lambda m, x: list(x)[0] if m is np else tf.unstack(x)[0], [2, 0]),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, [3, 2, 0]), [2, 0]),
    ("concat", lambda m, x: m.concatenate([x, x]) if m is np else tf.concat([x, x], 0), [2, 0]),
    ("tile", lambda m, x: m.tile(x, [2, 3]), [2, 0]),
    ("reshape", lambda m, x: m.reshape(x, [0, 5]), [2, 0]),
    ("transpose", lambda m, x: m.transpose(x), [2, 0]),
    ("matmul", lambda m, x: m.matmul(x, np.zeros([0, 3], np.float32)), [2, 0]),
    ("stack", lambda m, x: m.stack([x, x]), [2, 0]),
]


@pytest.mark.parametrize(("name", "f", "shape"), ZERO_SIZE, ids=[z[0] for z in ZERO_SIZE])
def test_zero_size_forward_and_gradient_match_numpy(name, f, shape):
    x0 = np.zeros(shape, np.float32)
    y, g = _grad(lambda x: f(tf, x), x0)
    expected = f(np, x0)
    assert y.shape == expected.shape, name
    np.testing.assert_array_equal(y.numpy(), expected)
    assert g is not None and g.shape == tuple(shape), name


def test_determinant_of_empty_matrices_is_one():
    np.testing.assert_array_equal(
        tf.linalg.det(tf.zeros([0, 0])).numpy(), np.linalg.det(np.zeros([0, 0]))
    )
    np.testing.assert_array_equal(
        tf.linalg.det(tf.zeros([3, 0, 0])).numpy(), np.ones([3], np.float32)
    )
    a = tf.Variable(tf.zeros([0, 0]))
    with tf.GradientTape() as tape:
        d = tf.linalg.det(a)
    assert tape.gradient(d, a).shape == (0, 0)


def test_inverse_and_solve_of_empty_matrices_are_empty():
    assert tf.linalg.inv(tf.zeros([0, 0])).shape == np.linalg.inv(np.zeros([0, 0])).shape
    x = tf.linalg.solve(tf.zeros([0, 0]), tf.zeros([0, 2]))
    assert x.shape == np.linalg.solve(np.zeros([0, 0]), np.zeros([0, 2])).shape


# Inputs whose arithmetic overflowed (a PanicException): each must end in an ordinary error.
OVERFLOWING = [
    ("tf.split(tf.zeros([4]), [2**62, -(2**62) + 4])", "Split"),
    ("tf.split(tf.zeros([4]), [2**62] * 4)", "Split"),
    ("tf.split(tf.zeros([4]), [-1, 5])", "Split"),
    ("tf.split(tf.zeros([4]), [-1, -1])", "Split"),
    ("tf.split(tf.zeros([0]), 2**40)", "Split"),
    ("tf.split(tf.zeros([4]), 0)", "Split"),
    ("tf.range(float('inf'))", "Range"),
    ("tf.reshape(tf.zeros([0]), [2**32, 2**32, 0])", "Reshape"),
]


@pytest.mark.parametrize(("code", "op"), OVERFLOWING, ids=[c for c, _ in OVERFLOWING])
def test_overflowing_arguments_raise_ordinary_errors(code, op):
    outcome = run_snippet(_LIMIT + code)
    assert outcome.kind == "raised" and "ValueError" in outcome.exc_types, f"{code}: {outcome}"
    assert op in outcome.message, f"{code}: {outcome}"


def test_split_with_one_inferred_size():
    parts = tf.split(tf.range(4), [-1, 3])
    assert [p.numpy().tolist() for p in parts] == [[0], [1, 2, 3]]


def test_reducing_an_empty_axis_checks_the_remaining_shape():
    code = "x = tf.zeros([0, 2**20, 2**20])\nassert float(tf.reduce_sum(x)) == 0.0\n"
    outcome = run_snippet(_LIMIT + code + "tf.reduce_sum(x, axis=0)")
    assert outcome.kind == "raised", outcome
    assert "ResourceExhaustedError" in outcome.exc_types, outcome
    assert "Sum: OOM" in outcome.message and "[1048576, 1048576]" in outcome.message, outcome


@pytest.mark.parametrize(
    "code",
    [
        "tf.fill([2**31], 2**31)",
        "tf.constant(0, shape=[2**31])",
        "tf.tile(tf.ones([2], tf.bfloat16), [2**31])",
        "tf.zeros([2**31])",
        "tf.ones([3 * 2**28])",
    ],
)
def test_allocations_past_an_address_space_limit_raise(code):
    # Under `ulimit -v` (4 GiB here) a tensor the machine could hold is still refused cleanly
    # instead of aborting the process when the allocator says no.
    outcome = run_snippet(code, timeout=60, memory_limit=4 << 30)
    assert outcome.kind == "raised", str(outcome)
    assert "ResourceExhaustedError" in outcome.exc_types, str(outcome)
    assert "OOM when allocating tensor" in outcome.message
