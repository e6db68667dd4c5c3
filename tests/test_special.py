"""Special functions (``ft.math.lgamma``, ``digamma``, ``igamma``, ``betainc``, ``zeta``, the
Bessel functions, ``ft.math.special.*``): values against references that need no TensorFlow
(Python's ``math`` module, closed forms, tabulated values, identities), TensorFlow's values at
the awkward points (poles, outside the domain, infinities, NaN), dtypes, and the derivatives
TensorFlow leaves undefined. The gradients themselves are rows of ``tests/test_gradcheck.py``.

Tolerances are relative, stated per function: float64 results are checked to 1e-13 or 1e-12
(the iterated expansions of the incomplete gamma and beta functions) unless a comment says why.
"""

import math

import numpy as np
import pytest

import ferrotape as ft

EULER = 0.5772156649015329
ZETA3 = 1.2020569031595942
PI2_6 = math.pi**2 / 6


def f64(fn, *args):
    return fn(*[ft.constant(np.asarray(a, np.float64)) for a in args]).numpy()


def close(got, want, rtol, atol=0.0):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


GRID = np.linspace(-7.9, 9.7, 177)
POSITIVE = np.geomspace(1e-3, 60.0, 97)


def test_lgamma_and_erfc_match_pythons_math():
    x = np.concatenate([GRID[GRID != np.round(GRID)], POSITIVE, [171.5, 1e5]])
    close(f64(ft.math.lgamma, x), [math.lgamma(v) for v in x], 1e-13, atol=1e-15)
    close(f64(ft.math.erfc, GRID), [math.erfc(v) for v in GRID], 1e-14)


def test_digamma_and_polygamma_closed_forms():
    close(
        f64(ft.math.digamma, [1.0, 0.5, 2.0]), [-EULER, -EULER - 2 * math.log(2), 1 - EULER], 1e-15
    )
    got = f64(ft.math.polygamma, [1.0, 1.0, 2.0, 3.0], [1.0, 0.5, 1.0, 1.0])
    close(got, [PI2_6, math.pi**2 / 2, -2 * ZETA3, math.pi**4 / 15], 1e-14)
    x = GRID[GRID != np.round(GRID)]
    # The recurrence ψ(x + 1) = ψ(x) + 1/x, across the reflection at 0.5 and the poles.
    close(f64(ft.math.digamma, x + 1), f64(ft.math.digamma, x) + 1 / x, 1e-12, atol=1e-13)
    # ψ'(x) = Σ 1/(x+k)², summed directly (slowly, so only at a few points).
    for v in [0.3, 2.5, 7.0]:
        direct = sum(1 / (v + k) ** 2 for k in range(200_000)) + 1 / (v + 200_000)
        close(f64(ft.math.polygamma, 1.0, v), direct, 1e-9)


def test_zeta_closed_forms():
    got = f64(ft.math.zeta, [2.0, 4.0, 2.0, 3.0, 2.0], [1.0, 1.0, 0.5, 2.0, 3.0])
    want = [PI2_6, math.pi**4 / 90, math.pi**2 / 2, ZETA3 - 1, PI2_6 - 1.25]
    close(got, want, 1e-14)
    # A negative q is allowed where x is an integer: the sum from q = -1.5 is its first two terms
    # and the sum from 0.5.
    close(f64(ft.math.zeta, 2.0, -1.5), 1 / 2.25 + 1 / 0.25 + math.pi**2 / 2, 1e-14)


def test_erfinv_erfcinv_ndtri_invert_pythons_erf():
    y = np.linspace(-5.5, 5.5, 111)
    small = y[np.abs(y) < 3]
    close(f64(ft.math.erfinv, [math.erf(v) for v in small]), small, 1e-12)
    # erfc(y) for y < -2 is 2 minus a number too small for 2 - erfc(y) to say which y it was:
    # only the well-conditioned side (and likewise p = Φ(y) below 1).
    upper = y[y > -2]
    close(f64(ft.math.erfcinv, [math.erfc(v) for v in upper]), upper, 1e-13, atol=1e-15)
    lower = y[y < 2]
    p = [0.5 * math.erfc(-v / math.sqrt(2)) for v in lower]
    close(f64(ft.math.ndtri, p), lower, 1e-12, atol=1e-15)
    close(
        f64(ft.math.ndtri, [0.975, 0.5, 1e-300]), [1.959963984540054, 0.0, -37.0470962993612], 1e-11
    )


def test_igamma_and_igammac_closed_forms_and_complement():
    x = POSITIVE
    close(f64(ft.math.igamma, 1.0, x), -np.expm1(-x), 1e-14)
    close(f64(ft.math.igammac, 1.0, x), np.exp(-x), 1e-13)
    close(f64(ft.math.igamma, 0.5, x), [math.erf(math.sqrt(v)) for v in x], 1e-14)
    close(f64(ft.math.igammac, 0.5, x), [math.erfc(math.sqrt(v)) for v in x], 1e-12)
    a = np.geomspace(0.05, 200.0, 40)[:, None]
    total = f64(ft.math.igamma, a, x) + f64(ft.math.igammac, a, x)
    close(total, np.ones_like(total), 0, atol=2e-15)


def test_betainc_closed_forms_and_symmetry():
    x = np.linspace(0.0, 1.0, 41)
    close(f64(ft.math.betainc, 1.0, 1.0, x), x, 1e-15, atol=1e-16)
    close(f64(ft.math.betainc, 3.5, 1.0, x), x**3.5, 1e-13, atol=1e-16)
    close(f64(ft.math.betainc, 1.0, 2.5, x), 1 - (1 - x) ** 2.5, 1e-13, atol=1e-16)
    close(f64(ft.math.betainc, 0.5, 0.5, x), 2 / math.pi * np.arcsin(np.sqrt(x)), 1e-13)
    a, b = np.meshgrid([0.3, 2.0, 17.0], [0.7, 5.0, 60.0])
    for v in [0.05, 0.4, 0.93]:
        left = f64(ft.math.betainc, a, b, v)
        close(left, 1 - f64(ft.math.betainc, b, a, 1 - v), 1e-12, atol=1e-15)


def bessel_i_series(nu, v):
    """I_ν(v) summed directly, in Python: Σ (v/2)^(2k+ν)/(k!(k+ν)!) (positive terms)."""
    term = (v / 2) ** nu / math.factorial(nu)
    terms = [term]
    for k in range(1, 150):
        term *= (v / 2) ** 2 / (k * (k + nu))
        terms.append(term)
    return math.fsum(terms)


def test_modified_bessel_functions_of_the_first_kind():
    x = np.linspace(-25.0, 25.0, 51)
    i0 = [bessel_i_series(0, abs(v)) for v in x]
    i1 = [math.copysign(bessel_i_series(1, abs(v)), v) for v in x]
    close(f64(ft.math.bessel_i0, x), i0, 1e-14)
    close(f64(ft.math.bessel_i1, x), i1, 1e-14)
    close(f64(ft.math.bessel_i0e, x), np.exp(-np.abs(x)) * i0, 1e-14)
    close(f64(ft.math.bessel_i1e, x), np.exp(-np.abs(x)) * i1, 1e-14)
    # Past the switch to the asymptotic expansion: the scaled forms stay finite and agree with
    # the unscaled ones where those are finite.
    big = np.array([35.0, 100.0, 700.0])
    close(f64(ft.math.bessel_i0e, big) * np.exp(big), f64(ft.math.bessel_i0, big), 1e-13)
    close(
        f64(ft.math.special.bessel_i1e, 1e4), 1 / math.sqrt(2 * math.pi * 1e4) * (1 - 3 / 8e4), 1e-8
    )


def test_bessel_functions_of_the_second_kind_and_integer_order_tables():
    s = ft.math.special
    one = [1.0]
    # Tabulated values (Abramowitz and Stegun, table 9.1 and 9.8, to their 10+ digits).
    close(f64(s.bessel_j0, one), 0.7651976865579666, 1e-15)
    close(f64(s.bessel_j1, one), 0.44005058574493355, 1e-15)
    close(f64(s.bessel_y0, one), 0.08825696421567697, 1e-14)
    close(f64(s.bessel_y1, one), -0.7812128213002887, 1e-15)
    close(f64(s.bessel_k0, one), 0.42102443824070834, 1e-14)
    close(f64(s.bessel_k1, one), 0.6019072301972346, 1e-14)
    close(f64(s.bessel_k0e, [0.5]), 1.5241093857739095, 1e-14)
    close(f64(s.bessel_k1e, [2.0]), 1.0334768470686886, 1e-14)
    # The Wronskian I₀K₁ + I₁K₀ = 1/x ties the kinds together over the whole range.
    x = np.geomspace(1e-4, 600.0, 80)
    w = f64(s.bessel_i0e, x) * f64(s.bessel_k1e, x) + f64(s.bessel_i1e, x) * f64(s.bessel_k0e, x)
    close(w, 1 / x, 1e-13)
    # J₀' = -J₁ with the recurrence J₀ + J₂ = (2/x)J₁ unavailable, check J₀² + Y₀² decays as 2/(πx).
    big = np.array([200.0, 500.0])
    amplitude = f64(s.bessel_j0, big) ** 2 + f64(s.bessel_y0, big) ** 2
    close(amplitude, 2 / (math.pi * big), 2e-3)


def test_dawsn_expint_fresnel_spence():
    s = ft.math.special
    close(f64(s.dawsn, [1.0, -1.0]), [0.5380795069127684, -0.5380795069127684], 1e-15)
    # Past the switch to the asymptotic series F(x) ≈ 1/(2x) + 1/(4x³) + 3/(8x⁵).
    asymptotic = sum(
        math.prod(range(1, 2 * k, 2)) / (2 ** (k + 1) * 50.0 ** (2 * k + 1)) for k in range(8)
    )
    close(f64(s.dawsn, [50.0]), asymptotic, 1e-14)
    close(f64(s.expint, [1.0]), 1.8951178163559368, 1e-15)
    close(
        f64(s.expint, [60.0]),
        math.exp(60) / 60 * sum(math.factorial(k) / 60**k for k in range(40)),
        1e-10,
    )
    close(f64(s.fresnel_cos, [1.0, 3.0]), [0.7798934003768228, 0.6057207892976856], 1e-14)
    close(f64(s.fresnel_sin, [1.0, 3.0]), [0.4382591473903548, 0.4963129989673750], 1e-14)
    ln2 = math.log(2)
    got = f64(s.spence, [0.0, 0.5, 1.0, 2.0])
    close(got, [PI2_6, math.pi**2 / 12 - ln2**2 / 2, 0.0, -(math.pi**2) / 12], 1e-15, atol=1e-16)


def test_lbeta_is_the_log_of_the_multivariate_beta():
    x = np.array([[1.0, 1.0], [2.0, 3.0], [0.5, 0.5]])
    want = [0.0, math.log(1 / 12), math.log(math.pi)]
    close(ft.math.lbeta(ft.constant(x)).numpy(), want, 1e-14, atol=1e-15)
    assert ft.math.lbeta(ft.zeros([2, 0])).numpy().tolist() == [-np.inf, -np.inf]
    with pytest.raises(ft.errors.InvalidArgumentError, match="lbeta"):
        ft.math.lbeta(ft.constant(1.0))


INF, NAN = math.inf, math.nan
# TensorFlow 2.21's float32 results at the awkward points (printed from TF, kept here so that
# the test runs without it; test_tf_reference-style checks below compare live where TF is
# installed).
EDGES = [
    (ft.math.lgamma, [0.0, -1.0, INF, -INF, NAN], [INF, INF, INF, INF, NAN]),
    (ft.math.digamma, [0.0, -1.0, INF, -INF, NAN], [NAN, NAN, INF, NAN, NAN]),
    (ft.math.erfinv, [1.0, -1.0, 1.5, 0.0, NAN], [INF, -INF, NAN, 0.0, NAN]),
    (ft.math.erfcinv, [0.0, 2.0, -0.5, 2.5, 1.0], [INF, -INF, NAN, NAN, 0.0]),
    (ft.math.ndtri, [0.0, 1.0, -0.5, 1.5, 0.5], [-INF, INF, NAN, NAN, 0.0]),
    (ft.math.erfc, [INF, -INF, NAN, 30.0], [0.0, 2.0, NAN, 0.0]),
    (ft.math.bessel_i0, [0.0, INF, -INF, NAN, 800.0], [1.0, NAN, NAN, NAN, INF]),
    (ft.math.bessel_i0e, [0.0, INF, -INF, NAN], [1.0, 0.0, 0.0, NAN]),
    (ft.math.bessel_i1, [0.0, INF, -INF, 800.0], [0.0, NAN, NAN, INF]),
    (ft.math.bessel_i1e, [0.0, INF, -INF], [0.0, 0.0, 0.0]),
    (ft.math.special.bessel_j0, [0.0, INF, -INF], [1.0, NAN, NAN]),
    (ft.math.special.bessel_j1, [0.0, INF, -INF], [0.0, NAN, NAN]),
    (ft.math.special.bessel_y0, [0.0, -1.0, INF, -INF], [-INF, -INF, NAN, -INF]),
    (ft.math.special.bessel_y1, [0.0, -1.0, INF, -INF], [NAN, -INF, NAN, -INF]),
    (ft.math.special.bessel_k0, [0.0, -1.0, INF, -INF, 1000.0], [INF, INF, 0.0, INF, 0.0]),
    (ft.math.special.bessel_k0e, [0.0, -1.0, INF], [INF, INF, 0.0]),
    (ft.math.special.bessel_k1, [0.0, -1.0, INF, -INF], [INF, INF, 0.0, INF]),
    (ft.math.special.bessel_k1e, [0.0, -1.0, INF], [INF, INF, 0.0]),
    (ft.math.special.dawsn, [0.0, INF, -INF, NAN], [0.0, 0.0, 0.0, NAN]),
    (ft.math.special.expint, [0.0, -1.0, INF, -INF, 1000.0], [-INF, NAN, NAN, NAN, INF]),
    (ft.math.special.fresnel_cos, [0.0, INF, -INF], [0.0, 0.5, -0.5]),
    (ft.math.special.fresnel_sin, [0.0, INF, -INF], [0.0, 0.5, -0.5]),
    (ft.math.special.spence, [0.0, 1.0, -1.0, INF, -INF], [PI2_6, 0.0, NAN, NAN, NAN]),
]
BINARY_EDGES = [
    (
        ft.math.igamma,
        [0.0, -1.0, 1.0, 1.0, 1.0, INF, 1.0, 2.0],
        [1.0, 1.0, 0.0, -1.0, INF, 1.0, NAN, INF],
        [NAN, NAN, 0.0, NAN, 1.0, 0.0, NAN, 1.0],
    ),
    (
        ft.math.igammac,
        [0.0, -1.0, 1.0, 1.0, 1.0, INF, 1.0],
        [1.0, 1.0, 0.0, -1.0, INF, 1.0, NAN],
        [NAN, NAN, 1.0, NAN, 0.0, 1.0, NAN],
    ),
    (
        ft.math.polygamma,
        [-1.0, 1.5, 0.0, 1.0, 1.0, 2.0],
        [1.0, 1.0, 0.0, 0.0, -1.0, INF],
        [NAN, NAN, NAN, INF, INF, 0.0],
    ),
    (
        ft.math.zeta,
        [1.0, 0.5, 2.0, 2.5, 2.0, INF, INF, 2.0],
        [1.0, 1.0, 0.0, -1.5, -2.0, 1.0, 2.0, INF],
        [INF, NAN, INF, NAN, INF, 1.0, 0.0, 0.0],
    ),
]


@pytest.mark.parametrize("fn, x, want", EDGES, ids=lambda v: getattr(v, "__name__", ""))
def test_awkward_points_give_tensorflows_values(fn, x, want):
    got = fn(ft.constant(x, ft.float32)).numpy()
    np.testing.assert_array_equal(got, np.float32(want))


@pytest.mark.parametrize("fn, a, x, want", BINARY_EDGES, ids=lambda v: getattr(v, "__name__", ""))
def test_awkward_points_of_two_argument_functions(fn, a, x, want):
    got = fn(ft.constant(a, ft.float32), ft.constant(x, ft.float32)).numpy()
    np.testing.assert_array_equal(got, np.float32(want))


def test_betainc_outside_its_domain():
    got = ft.math.betainc(
        [0.0, 1.0, 1.0, 1.0, 1.0, -1.0],
        [1.0, 0.0, 1.0, 1.0, 1.0, 1.0],
        [0.5, 0.5, 0.0, 1.0, 1.5, 0.5],
    )
    np.testing.assert_array_equal(got.numpy(), np.float32([NAN, NAN, 0.0, 1.0, NAN, NAN]))


@pytest.mark.parametrize("dtype", [ft.float16, ft.bfloat16, ft.float32, ft.float64])
def test_dtypes_are_kept(dtype):
    x = ft.constant([0.5, 1.5], dtype)
    for fn in [ft.math.lgamma, ft.math.digamma, ft.math.bessel_i0e, ft.math.special.spence]:
        assert fn(x).dtype == dtype
    assert ft.math.igamma(x, x).dtype == dtype
    assert ft.math.betainc(x, x, ft.constant([0.5, 0.5], dtype)).dtype == dtype
    close(
        ft.cast(ft.math.lgamma(x), ft.float64).numpy(), [math.lgamma(0.5), math.lgamma(1.5)], 1e-2
    )


def test_float32_is_computed_through_float64():
    # lgamma near its zero at 2: a float32 evaluation in float32 would lose most digits.
    x = np.float32(2.001)
    close(ft.math.lgamma(ft.constant(x)).numpy(), math.lgamma(float(x)), 1e-6)


def test_integer_inputs_are_refused():
    with pytest.raises(ft.errors.InvalidArgumentError, match="Lgamma"):
        ft.math.lgamma(ft.constant([1, 2]))
    with pytest.raises(ft.errors.InvalidArgumentError, match="Igamma"):
        ft.math.igamma(ft.constant([1, 2]), ft.constant([1, 2]))


def test_keyword_arguments_use_tensorflows_names():
    close(ft.math.igamma(a=1.0, x=2.0).numpy(), 1 - math.exp(-2), 1e-6)
    close(ft.math.zeta(x=2.0, q=1.0).numpy(), PI2_6, 1e-6)
    close(ft.math.polygamma(a=1.0, x=1.0).numpy(), PI2_6, 1e-6)
    close(ft.math.betainc(a=1.0, b=1.0, x=0.25).numpy(), 0.25, 1e-6)


def gradients(fn, *args):
    ts = [ft.constant(np.float64(a)) for a in args]
    with ft.GradientTape() as tape:
        tape.watch(ts)
        y = fn(*ts)
    return tape.gradient(y, ts)


def test_no_gradient_where_tensorflow_defines_none():
    assert gradients(ft.math.polygamma, 1.0, 2.0)[0] is None
    assert gradients(ft.math.zeta, 2.0, 3.0)[0] is None
    ga, gb, gx = gradients(ft.math.betainc, 2.0, 3.0, 0.3)
    assert ga is None and gb is None
    close(gx.numpy(), 1.764, 1e-12)  # 12·x(1-x)² at 0.3, TF's value


def test_igamma_gradient_in_a_matches_finite_differences_and_has_no_second_order():
    for a, x in [(0.5, 0.1), (2.0, 1.5), (10.0, 12.0), (3.0, 30.0)]:
        h = 1e-6 * a
        # Differenced in whichever of P and Q = 1 - P is the smaller (no cancellation).
        fn, sign = (ft.math.igamma, 1) if x < a else (ft.math.igammac, -1)
        fd = sign * (f64(fn, a + h, x) - f64(fn, a - h, x)) / (2 * h)
        ga, _ = gradients(ft.math.igamma, a, x)
        close(ga.numpy(), fd, 1e-7)
        gca, _ = gradients(ft.math.igammac, a, x)
        close(gca.numpy(), -fd, 1e-7)
    # TF's value at (2, 1.5) is -0.31348863782507946.
    close(gradients(ft.math.igamma, 2.0, 1.5)[0].numpy(), -0.31348863782507946, 1e-12)
    a, x = ft.constant(2.0, ft.float64), ft.constant(1.5, ft.float64)
    with ft.GradientTape() as outer:
        outer.watch(a)
        with ft.GradientTape() as inner:
            inner.watch(a)
            y = ft.math.igamma(a, x)
        ga = inner.gradient(y, a)
    # TensorFlow raises LookupError ("gradient registry has no entry for: IgammaGradA").
    with pytest.raises(NotImplementedError, match="IgammaGradA"):
        outer.gradient(ga, a)


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


UNARY_TF = [
    ("lgamma", np.linspace(-9.7, 30.0, 400)),
    ("digamma", np.linspace(-9.7, 30.0, 400)),
    ("erfc", np.linspace(-6.0, 10.0, 400)),
    ("erfinv", np.linspace(-0.999, 0.999, 400)),
    ("erfcinv", np.linspace(0.001, 1.999, 400)),
    ("ndtri", np.linspace(0.0005, 0.9995, 400)),
    ("bessel_i0", np.linspace(-80.0, 80.0, 400)),
    ("bessel_i0e", np.linspace(-80.0, 80.0, 400)),
    ("bessel_i1", np.linspace(-80.0, 80.0, 400)),
    ("bessel_i1e", np.linspace(-80.0, 80.0, 400)),
    ("special.bessel_j0", np.linspace(0.0, 30.0, 400)),
    ("special.bessel_j1", np.linspace(0.0, 30.0, 400)),
    ("special.bessel_y0", np.linspace(0.1, 30.0, 400)),
    ("special.bessel_y1", np.linspace(0.1, 30.0, 400)),
    ("special.bessel_k0", np.linspace(0.01, 60.0, 400)),
    ("special.bessel_k0e", np.linspace(0.01, 60.0, 400)),
    ("special.bessel_k1", np.linspace(0.01, 60.0, 400)),
    ("special.bessel_k1e", np.linspace(0.01, 60.0, 400)),
    ("special.dawsn", np.linspace(-20.0, 20.0, 400)),
    ("special.expint", np.linspace(0.01, 80.0, 400)),
    ("special.fresnel_cos", np.linspace(-8.0, 8.0, 400)),
    ("special.fresnel_sin", np.linspace(-8.0, 8.0, 400)),
    ("special.spence", np.linspace(0.0, 40.0, 400)),
]


def lookup(module, name):
    for part in name.split("."):
        module = getattr(module, part)
    return module


def tf_float64(fn, *args):
    return fn(*[np.asarray(a, np.float64) for a in args]).numpy()


# The worst relative error allowed against TensorFlow in float64, with an absolute floor near the
# functions' zeros (J, Y, digamma, lgamma and the Fresnel integrals cross zero on these grids,
# where a relative error means nothing).
@pytest.mark.parametrize("name, x", UNARY_TF, ids=[n for n, _ in UNARY_TF])
def test_matches_tensorflow_in_float64(tf, name, x):
    if name in ("digamma", "lgamma"):
        x = x[np.abs(x - np.round(x)) > 1e-3]
    got = tf_float64(lookup(ft.math, name), x)
    want = tf_float64(lookup(tf.math, name), x)
    close(got, want, 1e-12, atol=1e-13)


def test_two_and_three_argument_functions_match_tensorflow(tf):
    a = np.geomspace(0.05, 80.0, 25)[:, None]
    x = np.geomspace(0.01, 120.0, 30)
    for name in ["igamma", "igammac"]:
        close(
            tf_float64(getattr(ft.math, name), a, x),
            tf_float64(getattr(tf.math, name), a, x),
            1e-11,
            atol=1e-15,
        )
    n = np.arange(0.0, 5.0)[:, None]
    q = np.linspace(0.1, 20.0, 40)
    close(tf_float64(ft.math.polygamma, n, q), tf_float64(tf.math.polygamma, n, q), 1e-12)
    s = np.linspace(1.1, 12.0, 20)[:, None]
    close(tf_float64(ft.math.zeta, s, q), tf_float64(tf.math.zeta, s, q), 1e-12)
    # TensorFlow's Betainc wants equal shapes (or scalars): broadcast first.
    abx = np.broadcast_arrays(
        np.geomspace(0.1, 50.0, 9)[:, None, None],
        np.geomspace(0.1, 50.0, 9)[:, None],
        np.linspace(0.0, 1.0, 21),
    )
    close(tf_float64(ft.math.betainc, *abx), tf_float64(tf.math.betainc, *abx), 1e-11, atol=1e-15)


@pytest.mark.parametrize("fn, x, want", EDGES, ids=lambda v: getattr(v, "__name__", ""))
def test_awkward_points_match_tensorflow_live(tf, fn, x, want):
    name = fn.__name__
    tf_fn = getattr(tf.math, name, None) or getattr(tf.math.special, name)
    np.testing.assert_array_equal(
        fn(ft.constant(x, ft.float32)).numpy(), tf_fn(np.float32(x)).numpy()
    )
