"""ft.debugging: the eager assertions and check_numerics, with TensorFlow 2.21's exception types
(InvalidArgumentError for conditions on values, ValueError for static shapes)."""

import numpy as np
import pytest

import ferrotape as tf
from ferrotape.errors import InvalidArgumentError

dbg = tf.debugging


def test_assert_equal_passes_and_fails_like_tf():
    assert dbg.assert_equal([1, 2], [1, 2]) is None
    assert dbg.assert_equal(tf.constant([1.0, 2.0]), tf.constant(1.0) + [0.0, 1.0]) is None
    with pytest.raises(InvalidArgumentError) as info:
        dbg.assert_equal(tf.constant([1, 2, 3]), [1, 5, 3])
    text = str(info.value)
    assert "assert_equal: Condition x == y did not hold." in text
    assert "Indices of first 1 different values:\n[[1]]" in text
    assert "Corresponding x values:\n[2]" in text and "Corresponding y values:\n[5]" in text
    # A Python number on the right takes the tensor's dtype; the message comes first.
    with pytest.raises(InvalidArgumentError, match=r"^hello\nassert_equal"):
        dbg.assert_equal(tf.constant([1.0, 2.0]), 2, message="hello")
    assert tf.assert_equal is dbg.assert_equal


def test_assert_equal_bad_operands_name_the_op():
    with pytest.raises(InvalidArgumentError, match="Equal: incompatible shapes"):
        dbg.assert_equal(tf.constant([1, 2]), [1, 2, 3])
    with pytest.raises(InvalidArgumentError, match="Equal: operands must have the same dtype"):
        dbg.assert_equal(tf.constant([1, 2]), tf.constant([1.0, 2.0]))


@pytest.mark.parametrize(
    "check, x, y, holds",
    [
        ("assert_less", [1, 2], [2, 3], True),
        ("assert_less", [1, 3], [2, 3], False),
        ("assert_less_equal", [1, 3], [2, 3], True),
        ("assert_greater", [3, 4], [2, 3], True),
        ("assert_greater", [3, 3], [2, 3], False),
        ("assert_greater_equal", [3, 3], [2, 3], True),
        ("assert_none_equal", [1, 2], [2, 1], True),
        ("assert_none_equal", [1, 2], [2, 2], False),
    ],
)
def test_comparisons(check, x, y, holds):
    fn = getattr(dbg, check)
    if holds:
        assert fn(tf.constant(x), y) is None
    else:
        with pytest.raises(InvalidArgumentError, match=f"{check}: Condition"):
            fn(tf.constant(x), y)


@pytest.mark.parametrize(
    "check, good, bad",
    [
        ("assert_positive", [1.0, 2.0], [1.0, 0.0]),
        ("assert_negative", [-1.0], [-1.0, 0.0]),
        ("assert_non_negative", [0.0, 2.0], [-1e-30]),
        ("assert_non_positive", [0.0, -2.0], [1e-30]),
    ],
)
def test_sign_assertions(check, good, bad):
    fn = getattr(dbg, check)
    assert fn(tf.constant(good)) is None
    with pytest.raises(InvalidArgumentError, match=check):
        fn(tf.constant(bad))


def test_assert_near_default_and_given_tolerances():
    # TF's defaults: rtol = atol = 10 * eps of the dtype.
    eps32 = float(np.finfo(np.float32).eps)
    assert dbg.assert_near(tf.constant([1.0, 2.0]), [1.0 + 5 * eps32, 2.0]) is None
    with pytest.raises(InvalidArgumentError, match="assert_near: Condition"):
        dbg.assert_near(tf.constant([1.0, 2.0]), [1.0001, 2.0])
    assert dbg.assert_near(tf.constant([1.0, 2.0]), [1.1, 2.0], atol=0.2) is None
    assert dbg.assert_near(tf.constant([10.0]), [11.0], rtol=0.1) is None
    # float64 has a tighter default: 1e-13 is far above 20 * its eps, 1e-16 below.
    x64 = tf.constant([1.0], dtype=tf.float64)
    assert dbg.assert_near(x64, tf.constant([1.0 + 1e-16], dtype=tf.float64)) is None
    with pytest.raises(InvalidArgumentError):
        dbg.assert_near(x64, tf.constant([1.0 + 1e-13], dtype=tf.float64))
    with pytest.raises(InvalidArgumentError, match="same dtype"):
        dbg.assert_near(tf.constant([1.0]), x64)


def test_rank_assertions_raise_value_error():
    x = tf.zeros((2, 3))
    assert dbg.assert_rank(x, 2) is None and dbg.assert_rank(x, tf.constant(2)) is None
    with pytest.raises(ValueError, match=r"must have rank 3.  Received rank 2, shape \(2, 3\)"):
        dbg.assert_rank(x, 3)
    with pytest.raises(ValueError, match=r"^mm\.  assert_rank"):
        dbg.assert_rank(x, 3, message="mm")
    assert dbg.assert_rank_at_least(x, 1) is None
    with pytest.raises(ValueError, match="at least 3"):
        dbg.assert_rank_at_least(x, 3)
    assert dbg.assert_rank_in(x, (1, 2)) is None
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        dbg.assert_rank_in(x, (0, 1))
    with pytest.raises(ValueError, match="scalar integer"):
        dbg.assert_rank(x, 2.5)
    assert dbg.assert_scalar(tf.constant(1.0)) is None
    with pytest.raises(ValueError, match="assert_scalar"):
        dbg.assert_scalar(x)
    assert tf.assert_rank is dbg.assert_rank


def test_assert_type():
    assert dbg.assert_type(tf.constant([1.0]), tf.float32) is None
    with pytest.raises(TypeError, match="must be of type int32; got float32"):
        dbg.assert_type(tf.constant([1.0]), tf.int32)


def test_assert_shapes_symbols_sizes_and_wildcards():
    a, b = tf.zeros((2, 3)), tf.zeros((2,))
    assert dbg.assert_shapes([(a, ("N", "Q")), (b, ("N",))]) is None
    assert dbg.assert_shapes([(a, "NQ"), (b, [2])]) is None
    assert dbg.assert_shapes([(a, (".", 3)), (b, (None,))]) is None
    assert dbg.assert_shapes([(tf.constant(1.0), [])]) is None
    with pytest.raises(
        ValueError, match="symbol 'N'.*dimension 0 must have size 2.  Received size 3"
    ):
        dbg.assert_shapes([(a, ("N", "Q")), (tf.zeros((3,)), ("N",))])
    with pytest.raises(ValueError, match="Specified explicitly.*dimension 1 must have size 4"):
        dbg.assert_shapes([(a, (2, 4))])
    with pytest.raises(ValueError, match="must have rank 1"):
        dbg.assert_shapes([(a, (2,))])
    with pytest.raises(ValueError, match="a shape must be"):
        dbg.assert_shapes([(a, 3)])


@pytest.mark.parametrize(
    "values, kinds",
    [([1.0, np.nan], "NaN"), ([np.inf, 1.0], "Inf"), ([-np.inf, np.nan], "Inf and NaN")],
)
@pytest.mark.parametrize("fn", ["check_numerics", "assert_all_finite"])
def test_check_numerics_names_what_it_found(fn, values, kinds):
    with pytest.raises(InvalidArgumentError) as info:
        getattr(dbg, fn)(tf.constant(values), "mymsg")
    assert str(info.value) == f"mymsg : Tensor had {kinds} values [Op:CheckNumerics]"


def test_check_numerics_passes_values_and_rejects_integers():
    x = tf.constant([1.0, -2.0], dtype=tf.float64)
    out = dbg.check_numerics(x, "m")
    assert out.dtype == tf.float64
    np.testing.assert_array_equal(out.numpy(), x.numpy())
    with pytest.raises(InvalidArgumentError, match="floating-point.*int32"):
        dbg.check_numerics(tf.constant([1, 2]), "m")


def test_check_numerics_gradient_is_identity_and_checked():
    x = tf.Variable([0.5, -1.5, 2.0], dtype=tf.float64)

    def f(v):
        return tf.reduce_sum(tf.sin(dbg.check_numerics(v * v, "m")))

    with tf.GradientTape() as tape:
        y = f(x)
    grad = tape.gradient(y, x).numpy()
    h, base = 1e-6, x.numpy()
    numeric = [
        (f(tf.constant(base + h * e)).numpy() - f(tf.constant(base - h * e)).numpy()) / (2 * h)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-7)
    # A NaN arriving from above is caught on the way back, as TF's CheckNumericsGrad does.
    with tf.GradientTape() as tape:
        y = dbg.check_numerics(x, "w") * tf.constant([np.nan, 1.0, 1.0], dtype=tf.float64)
    with pytest.raises(InvalidArgumentError, match="detected in gradient. w : Tensor had NaN"):
        tape.gradient(y, x)
