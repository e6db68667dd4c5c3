"""The gradient-check table: every differentiable op is a row, and the table is the op inventory.

For each row (STYLE.md item 7), in float64:
1. the forward matches a NumPy reference;
2. ``tape.gradient`` of ``reduce_sum(f(x) * w)`` (fixed random ``w``) matches central finite
   differences of the NumPy reference;
3. the second derivative from nested tapes (``t2.gradient(reduce_sum(g * v), x)`` with ``g`` the
   first gradient) matches finite differences of the first gradient. A ``None`` second gradient
   counts as zero (TF returns ``None`` where the first gradient does not depend on ``x``).

Kink and tie conventions (TF 2.21) are pinned down in ``test_kink``. The inventory is derived:
a differentiable binding row (``_core.op_table()``) without a row here fails, and so does a Rust op
that records a derivative (``_core.recording_ops()``) that no row's tapes record.
"""

import math
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import special_reference as sp

import ferrotape as tf

# ----------------------------------------------------------------------------- input domains


def U(lo, hi):
    """Uniform on (lo, hi)."""
    return lambda rng, s: rng.uniform(lo, hi, s)


def AWAY(*kinks, lo=-2.0, hi=2.0, gap=0.1):
    """Uniform on (lo, hi) but at least ``gap`` away from each kink, so that finite
    differences never straddle one."""

    def draw(rng, s):
        x = np.asarray(rng.uniform(lo, hi, s))
        while True:
            bad = np.zeros(x.shape, bool)
            for k in kinks:
                bad |= np.abs(x - k) < gap
            if not bad.any():
                return x
            x = np.where(bad, rng.uniform(lo, hi, s), x)

    return draw


SYM = U(-2.0, 2.0)
POS = U(0.5, 2.0)
UNIT = U(-0.9, 0.9)
NZ = AWAY(0.0)
NZ_HALF = AWAY(0.0, gap=0.5)  # for 1/x: |x| in [0.5, 2]


def WELL(rng, s):
    """Well-conditioned (batched) square matrices."""
    return rng.uniform(-1.0, 1.0, s) + 3.0 * np.eye(s[-1])


def PROBS(rng, s):
    """Rows of a probability distribution along the last axis."""
    p = rng.uniform(0.1, 1.0, s)
    return p / p.sum(-1, keepdims=True)


# ----------------------------------------------------------------------------- numpy references

erf = np.vectorize(math.erf, otypes=[float])
SELU_SCALE, SELU_ALPHA = (
    1.0507009873554804934193349852946,
    1.6732632423543772848170429916717,
)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def log_softmax(x, axis=-1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis, keepdims=True))


def softmax(x, axis=-1):
    return np.exp(log_softmax(x, axis))


def np_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def scatter_nd(idx, upd, shape):
    out = np.zeros(shape)
    np.add.at(out, tuple(np.asarray(idx).T), upd)
    return out


def clip_by_global_norm(c, *xs):
    g = np.sqrt(sum(np.sum(x * x) for x in xs))
    return [x * c / max(g, c) for x in xs], g


def clip_by_norm(x, c, axes=None):
    n = np.sqrt(np.sum(x * x, axis=np_axis(axes), keepdims=True))
    return x * c / np.maximum(n, c)


# ----------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Row:
    name: str  # "op" or "op[variant]"; the part before "[" is the inventory name
    fn: Callable  # ferrotape: tensors -> tensor or list of tensors
    ref: Callable  # numpy: arrays -> array or list of arrays
    shapes: tuple  # one shape per differentiable input
    domains: tuple  # one sampler per input
    no_second: str = ""  # why the second-order check does not apply ("" = it does)
    eps: float = 1e-6
    rtol: float = 1e-5
    ftol: float = 1e-9  # forward rtol


ROWS: list[Row] = []


def row(name, fn, ref, *shapes, dom=SYM, no_second="", **tol):
    doms = tuple(dom) if isinstance(dom, (list, tuple)) else (dom,) * len(shapes)
    assert len(doms) == len(shapes), name
    ROWS.append(Row(name, fn, ref, tuple(shapes), doms, no_second, **tol))


def label(*shapes):
    return ",".join("x".join(map(str, s)) or "scalar" for s in shapes)


# Binary elementwise ops, each over same-shape and broadcasting shape pairs.
BSHAPES = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((3, 1), (1, 4)),
    ((2, 1, 3), (4, 1)),
    ((2, 3), ()),
]
BINARY = [
    ("add", lambda x, y: tf.add(x, y), np.add, (SYM, SYM)),
    ("subtract", lambda x, y: tf.subtract(x, y), np.subtract, (SYM, SYM)),
    ("multiply", lambda x, y: tf.multiply(x, y), np.multiply, (SYM, SYM)),
    ("divide", lambda x, y: tf.divide(x, y), np.divide, (SYM, NZ_HALF)),
    ("pow", lambda x, y: tf.pow(x, y), np.power, (POS, SYM)),
    ("maximum", lambda x, y: tf.maximum(x, y), np.maximum, (SYM, SYM)),
    ("minimum", lambda x, y: tf.minimum(x, y), np.minimum, (SYM, SYM)),
    (
        "squared_difference",
        lambda x, y: tf.math.squared_difference(x, y),
        None,
        (SYM, SYM),
    ),
]
for _name, _fn, _ref, _doms in BINARY:
    _ref = _ref or (lambda x, y: (x - y) ** 2)
    for _s in BSHAPES:
        row(f"{_name}[{label(*_s)}]", _fn, _ref, *_s, dom=_doms)

# Operator spellings and Python-scalar operands (the scalar adopts the tensor's float64).
row("add[+]", lambda x, y: x + y, np.add, (2, 3), (3,))
row("add[x+1.5]", lambda x: x + 1.5, lambda x: x + 1.5, (2, 3))
row("subtract[-]", lambda x, y: x - y, np.subtract, (2, 3), (3,))
row("subtract[2.0-x]", lambda x: 2.0 - x, lambda x: 2.0 - x, (2, 3))
row("multiply[*]", lambda x, y: x * y, np.multiply, (2, 3), (3,))
row("multiply[3.0*x]", lambda x: 3.0 * x, lambda x: 3.0 * x, (2, 3))
row("divide[/]", lambda x, y: x / y, np.divide, (2, 3), (3,), dom=(SYM, NZ_HALF))
row("divide[1.0/x]", lambda x: 1.0 / x, lambda x: 1.0 / x, (2, 3), dom=NZ_HALF)
row(
    "divide[math.divide]",
    lambda x, y: tf.math.divide(x, y),
    np.divide,
    (2, 3),
    (2, 3),
    dom=(SYM, NZ_HALF),
)
row("pow[**]", lambda x, y: x**y, np.power, (2, 3), (3,), dom=(POS, SYM))
row("pow[x**3]", lambda x: x**3, lambda x: x**3, (2, 3))
# the same tensor feeding both operands: the two gradient contributions must add up
row("multiply[x*x]", lambda x: x * x, np.square, (2, 3))
row("add[x+x]", lambda x: tf.add(x, x), lambda x: 2 * x, (2, 3))
row("divide[x/x**2]", lambda x: x / tf.square(x), lambda x: 1 / x, (2, 3), dom=NZ_HALF)
row("truediv", lambda x, y: tf.truediv(x, y), np.divide, (2, 3), (3,), dom=(SYM, NZ_HALF))
row("realdiv", lambda x, y: tf.math.realdiv(x, y), np.divide, (2, 3), (3,), dom=(SYM, NZ_HALF))
row(
    "floormod",
    lambda x, y: tf.math.floormod(x, y),
    np.mod,
    (2, 3),
    (2, 3),
    dom=(NZ, U(2.0, 3.0)),
)
row("add_n", lambda x, y: tf.add_n([x, y, x]), lambda x, y: 2 * x + y, (2, 3), (2, 3))
row("pow[x**0.5]", lambda x: x**0.5, np.sqrt, (2, 3), dom=POS)
row("pow[2.0**x]", lambda x: 2.0**x, lambda x: 2.0**x, (2, 3))

# Unary elementwise ops: (name, ferrotape, numpy, domain).
UNARY = [
    ("negative", lambda x: tf.negative(x), np.negative, SYM),
    ("negative[-x]", lambda x: -x, np.negative, SYM),
    ("abs", lambda x: tf.abs(x), np.abs, NZ),
    ("square", lambda x: tf.square(x), np.square, SYM),
    ("reciprocal", lambda x: tf.math.reciprocal(x), lambda x: 1.0 / x, NZ_HALF),
    ("exp", lambda x: tf.exp(x), np.exp, SYM),
    ("expm1", lambda x: tf.math.expm1(x), np.expm1, SYM),
    ("log", lambda x: tf.math.log(x), np.log, POS),
    ("log1p", lambda x: tf.math.log1p(x), np.log1p, U(-0.5, 2.0)),
    ("sqrt", lambda x: tf.sqrt(x), np.sqrt, POS),
    ("rsqrt", lambda x: tf.math.rsqrt(x), lambda x: 1.0 / np.sqrt(x), POS),
    ("sin", lambda x: tf.sin(x), np.sin, SYM),
    ("cos", lambda x: tf.cos(x), np.cos, SYM),
    ("tan", lambda x: tf.tan(x), np.tan, U(-1.2, 1.2)),
    ("asin", lambda x: tf.asin(x), np.arcsin, UNIT),
    ("acos", lambda x: tf.acos(x), np.arccos, UNIT),
    ("atan", lambda x: tf.atan(x), np.arctan, SYM),
    ("sinh", lambda x: tf.sinh(x), np.sinh, SYM),
    ("cosh", lambda x: tf.cosh(x), np.cosh, SYM),
    ("asinh", lambda x: tf.math.asinh(x), np.arcsinh, SYM),
    ("acosh", lambda x: tf.math.acosh(x), np.arccosh, U(1.2, 3.0)),
    ("atanh", lambda x: tf.math.atanh(x), np.arctanh, UNIT),
    ("tanh", lambda x: tf.tanh(x), np.tanh, SYM),
    ("sigmoid", lambda x: tf.sigmoid(x), sigmoid, U(-4.0, 4.0)),
    ("sigmoid[nn]", lambda x: tf.nn.sigmoid(x), sigmoid, U(-4.0, 4.0)),
    ("erf", lambda x: tf.math.erf(x), erf, SYM),
    (
        "softplus",
        lambda x: tf.math.softplus(x),
        lambda x: np.log1p(np.exp(x)),
        U(-4.0, 4.0),
    ),
    ("softplus[nn]", lambda x: tf.nn.softplus(x), lambda x: np.log1p(np.exp(x)), SYM),
    ("relu", lambda x: tf.nn.relu(x), lambda x: np.maximum(x, 0.0), NZ),
    (
        "relu6",
        lambda x: tf.nn.relu6(x),
        lambda x: np.clip(x, 0.0, 6.0),
        AWAY(0, 6, lo=-2, hi=8),
    ),
    (
        "leaky_relu",
        lambda x: tf.nn.leaky_relu(x),
        lambda x: np.where(x > 0, x, 0.2 * x),
        NZ,
    ),
    (
        "leaky_relu[alpha=0.1]",
        lambda x: tf.nn.leaky_relu(x, alpha=0.1),
        lambda x: np.where(x > 0, x, 0.1 * x),
        NZ,
    ),
    ("elu", lambda x: tf.nn.elu(x), lambda x: np.where(x > 0, x, np.expm1(x)), NZ),
    (
        "selu",
        lambda x: tf.nn.selu(x),
        lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
        NZ,
    ),
    (
        "gelu[exact]",
        lambda x: tf.nn.gelu(x),
        lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2))),
        SYM,
    ),
    (
        "gelu[approximate=False]",
        lambda x: tf.nn.gelu(x, approximate=False),
        lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2))),
        SYM,
    ),
    (
        "gelu[approximate=True]",
        lambda x: tf.nn.gelu(x, approximate=True),
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
        SYM,
    ),
    ("silu", lambda x: tf.nn.silu(x), lambda x: x * sigmoid(x), SYM),
    ("swish", lambda x: tf.nn.swish(x), lambda x: x * sigmoid(x), SYM),
    ("identity", lambda x: tf.identity(x), lambda x: x, SYM),
    ("sign", lambda x: tf.sign(x), np.sign, NZ),
    ("matrix_transpose", lambda x: tf.linalg.matrix_transpose(x), np.transpose, SYM),
]
# TF evaluates leaky_relu's alpha and gelu's constants in float32 even for float64 inputs.
LOOSE_FORWARD = ("leaky_relu", "gelu")
for _name, _fn, _ref, _dom in UNARY:
    _ftol = 1e-7 if _name.startswith(LOOSE_FORWARD) else 1e-9
    row(_name, _fn, _ref, (2, 3), dom=_dom, ftol=_ftol)

# Special functions: references in tests/special_reference.py (plain-Python series), so the finite
# differences are of an independent evaluation. Domains keep clear of poles and of |x| kinks.
SPECIAL = [
    ("lgamma", tf.math.lgamma, sp.lgamma, U(0.3, 4.0)),
    ("lgamma[negative]", tf.math.lgamma, sp.lgamma, U(-2.8, -2.2)),
    ("digamma", tf.math.digamma, sp.digamma, U(0.3, 4.0)),
    ("erfc", tf.math.erfc, sp.erfc, SYM),
    ("erfinv", tf.math.erfinv, sp.erfinv, UNIT),
    ("erfcinv", tf.math.erfcinv, sp.erfcinv, U(0.1, 1.9)),
    ("ndtri", tf.math.ndtri, sp.ndtri, U(0.05, 0.95)),
    ("bessel_i0", tf.math.bessel_i0, sp.bessel_i0, SYM),
    ("bessel_i0e", tf.math.bessel_i0e, sp.bessel_i0e, NZ),
    ("bessel_i1", tf.math.bessel_i1, sp.bessel_i1, SYM),
    ("bessel_i1e", tf.math.bessel_i1e, sp.bessel_i1e, NZ),
    ("math.special.bessel_j0", tf.math.special.bessel_j0, sp.bessel_j0, SYM),
    ("math.special.bessel_j1", tf.math.special.bessel_j1, sp.bessel_j1, SYM),
    ("math.special.bessel_y0", tf.math.special.bessel_y0, sp.bessel_y0, POS),
    ("math.special.bessel_y1", tf.math.special.bessel_y1, sp.bessel_y1, POS),
    ("math.special.bessel_k0", tf.math.special.bessel_k0, sp.bessel_k0, POS),
    ("math.special.bessel_k0e", tf.math.special.bessel_k0e, sp.bessel_k0e, POS),
    ("math.special.bessel_k1", tf.math.special.bessel_k1, sp.bessel_k1, POS),
    ("math.special.bessel_k1e", tf.math.special.bessel_k1e, sp.bessel_k1e, POS),
    ("math.special.dawsn", tf.math.special.dawsn, sp.dawsn, SYM),
    ("math.special.expint", tf.math.special.expint, sp.expint, POS),
    ("math.special.fresnel_cos", tf.math.special.fresnel_cos, sp.fresnel_cos, SYM),
    ("math.special.fresnel_sin", tf.math.special.fresnel_sin, sp.fresnel_sin, SYM),
    ("math.special.spence", tf.math.special.spence, sp.spence, U(0.6, 1.8)),
]
for _name, _fn, _ref, _dom in SPECIAL:
    row(_name, _fn, _ref, (2, 3), dom=_dom)
# Only the differentiable argument is a row input: TF gives None for polygamma's order, zeta's
# exponent and betainc's a and b (test_special.py checks the None).
row("polygamma", lambda x: tf.math.polygamma(1.0, x), sp.trigamma, (2, 3), dom=U(0.3, 4.0))
row("zeta", lambda q: tf.math.zeta(3.0, q), lambda q: sp.zeta(3.0, q), (2, 3), dom=U(0.5, 3.0))
row(
    "betainc",
    lambda x: tf.math.betainc(2.0, 3.5, x),
    lambda x: sp.betainc(2.0, 3.5, x),
    (2, 3),
    dom=U(0.1, 0.7),
)
NO_SECOND_IN_A = "TF defines no derivative of IgammaGradA (test_special.py checks that it raises)"
for _name, _ref in [("igamma", sp.igamma), ("igammac", sp.igammac)]:
    _fn = getattr(tf.math, _name)
    row(_name, _fn, _ref, (2, 3), (2, 3), dom=(U(0.5, 3.0), U(0.3, 4.0)), no_second=NO_SECOND_IN_A)
    row(
        f"{_name}[x]",
        lambda x, f=_fn: f(1.7, x),
        lambda x, r=_ref: r(1.7, x),
        (3,),
        dom=U(0.3, 4.0),
    )
row(
    "lbeta",
    tf.math.lbeta,
    lambda x: sp.lgamma(x).sum(-1) - sp.lgamma(x.sum(-1)),
    (2, 3),
    dom=U(0.3, 3.0),
)
row("exp[3d]", lambda x: tf.exp(x), np.exp, (2, 3, 2))
row("tanh[scalar]", lambda x: tf.tanh(x), np.tanh, ())

for _ax, _s in [(-1, (2, 5)), (0, (3, 4))]:
    row(
        f"softmax[axis={_ax}]",
        lambda x, a=_ax: tf.nn.softmax(x, axis=a),
        lambda x, a=_ax: softmax(x, a),
        _s,
    )
    row(
        f"log_softmax[axis={_ax}]",
        lambda x, a=_ax: tf.nn.log_softmax(x, axis=a),
        lambda x, a=_ax: log_softmax(x, a),
        _s,
    )
row("softmax[3d]", lambda x: tf.nn.softmax(x), softmax, (2, 2, 3))

COND = np.random.default_rng(7).random((2, 3)) > 0.5
row(
    "where",
    lambda x, y: tf.where(tf.constant(COND), x, y),
    lambda x, y: np.where(COND, x, y),
    (2, 3),
    (2, 3),
)
row(
    "where[broadcast]",
    lambda x, y: tf.where(tf.constant(COND), x, y),
    lambda x, y: np.where(COND, x, y),
    (3,),
    (2, 1),
)
row(
    "clip_by_value",
    lambda x: tf.clip_by_value(x, -0.5, 0.7),
    lambda x: np.clip(x, -0.5, 0.7),
    (3, 4),
    dom=AWAY(-0.5, 0.7, gap=0.05),
)

# Reductions, each with axis=None, an int axis, a list of axes and keepdims.
REDUCE = [
    ("reduce_sum", lambda: tf.reduce_sum, np.sum, SYM),
    ("reduce_mean", lambda: tf.reduce_mean, np.mean, SYM),
    ("reduce_max", lambda: tf.reduce_max, np.max, SYM),
    ("reduce_min", lambda: tf.reduce_min, np.min, SYM),
    (
        "reduce_prod",
        lambda: tf.reduce_prod,
        np.prod,
        AWAY(0.0, lo=-1.5, hi=1.5, gap=0.5),
    ),
    (
        "reduce_logsumexp",
        lambda: tf.reduce_logsumexp,
        lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis, keepdims=keepdims)),
        SYM,
    ),
]
REDUCE_VARIANTS = [
    ("axis=None", None, False),
    ("axis=1", 1, False),
    ("axis=-1", -1, False),
    ("axis=[0,2]", [0, 2], False),
    ("keepdims", 1, True),
    ("axis=None,keepdims", None, True),
]
for _name, _get, _ref, _dom in REDUCE:
    for _v, _ax, _kd in REDUCE_VARIANTS:
        row(
            f"{_name}[{_v}]",
            lambda x, g=_get, a=_ax, k=_kd: g()(x, axis=a, keepdims=k),
            lambda x, r=_ref, a=_ax, k=_kd: r(x, axis=np_axis(a), keepdims=k),
            (2, 3, 4),
            dom=_dom,
        )
row("reduce_sum[math]", lambda x: tf.math.reduce_sum(x, 0), lambda x: x.sum(0), (3, 4))
row("reduce_max[math]", lambda x: tf.math.reduce_max(x, 0), lambda x: x.max(0), (3, 4))

# Matrix products.
MATMUL = [
    ("matmul", lambda a, b: tf.matmul(a, b), lambda a, b: a @ b, (3, 4), (4, 5)),
    ("matmul[@]", lambda a, b: a @ b, lambda a, b: a @ b, (3, 4), (4, 5)),
    (
        "matmul[linalg]",
        lambda a, b: tf.linalg.matmul(a, b),
        lambda a, b: a @ b,
        (3, 4),
        (4, 2),
    ),
    (
        "matmul[transpose_a]",
        lambda a, b: tf.matmul(a, b, transpose_a=True),
        lambda a, b: a.T @ b,
        (4, 3),
        (4, 5),
    ),
    (
        "matmul[transpose_b]",
        lambda a, b: tf.matmul(a, b, transpose_b=True),
        lambda a, b: a @ b.T,
        (3, 4),
        (5, 4),
    ),
    (
        "matmul[transpose_a,transpose_b]",
        lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
        lambda a, b: a.T @ b.T,
        (4, 3),
        (5, 4),
    ),
    ("matmul[batched]", lambda a, b: tf.matmul(a, b), np.matmul, (2, 3, 4), (2, 4, 5)),
    (
        "matmul[batch_broadcast]",
        lambda a, b: tf.matmul(a, b),
        np.matmul,
        (2, 1, 3, 4),
        (5, 4, 2),
    ),
    (
        "matmul[batched,2d_rhs]",
        lambda a, b: tf.matmul(a, b),
        np.matmul,
        (2, 3, 4),
        (4, 2),
    ),
    (
        "matmul[batched,transpose_b]",
        lambda a, b: tf.matmul(a, b, transpose_b=True),
        lambda a, b: a @ np.swapaxes(b, -1, -2),
        (2, 3, 4),
        (2, 5, 4),
    ),
]
for _name, _fn, _ref, *_s in MATMUL:
    row(_name, _fn, _ref, *_s)
# strided views (transposed / sliced tensors) as op inputs
row(
    "matmul[view inputs]",
    lambda a, b: tf.matmul(tf.transpose(a), b[::2]),
    lambda a, b: a.T @ b[::2],
    (4, 3),
    (8, 5),
)
row(
    "reduce_sum[view input]",
    lambda x: tf.reduce_sum(tf.transpose(x)[::-1, 1:], 0),
    lambda x: x.T[::-1, 1:].sum(0),
    (3, 4),
)
row(
    "exp[view input]",
    lambda x: tf.exp(tf.transpose(x, [2, 0, 1])[:, ::2]),
    lambda x: np.exp(x.transpose(2, 0, 1)[:, ::2]),
    (3, 2, 4),
)

# Shape ops.
row("reshape", lambda x: tf.reshape(x, [6, -1]), lambda x: x.reshape(6, -1), (2, 3, 4))
row("reshape[flat]", lambda x: tf.reshape(x, [-1]), lambda x: x.reshape(-1), (3, 4))
row("transpose", lambda x: tf.transpose(x), lambda x: x.T, (2, 3, 4))
row(
    "transpose[perm]",
    lambda x: tf.transpose(x, perm=[2, 0, 1]),
    lambda x: x.transpose(2, 0, 1),
    (2, 3, 4),
)
row("expand_dims[axis=1]", lambda x: tf.expand_dims(x, 1), lambda x: x[:, None], (2, 3))
row(
    "expand_dims[axis=-1]",
    lambda x: tf.expand_dims(x, -1),
    lambda x: x[..., None],
    (2, 3),
)
row("squeeze", lambda x: tf.squeeze(x), np.squeeze, (2, 1, 3, 1))
row(
    "squeeze[axis=[1]]",
    lambda x: tf.squeeze(x, axis=[1]),
    lambda x: x[:, 0],
    (2, 1, 3, 1),
)
row(
    "concat[axis=1]",
    lambda x, y: tf.concat([x, y], axis=1),
    lambda x, y: np.concatenate([x, y], 1),
    (2, 3),
    (2, 4),
)
row(
    "concat[axis=0,three]",
    lambda x, y, z: tf.concat([x, y, z], 0),
    lambda x, y, z: np.concatenate([x, y, z], 0),
    (1, 3),
    (2, 3),
    (1, 3),
)
row(
    "stack[axis=0]",
    lambda x, y: tf.stack([x, y]),
    lambda x, y: np.stack([x, y]),
    (2, 3),
    (2, 3),
)
row(
    "stack[axis=-1]",
    lambda x, y: tf.stack([x, y], axis=-1),
    lambda x, y: np.stack([x, y], -1),
    (2, 3),
    (2, 3),
)
row(
    "unstack",
    lambda x: tf.unstack(x, axis=1),
    lambda x: [x[:, i] for i in range(3)],
    (2, 3, 4),
)
row("unstack[axis=0]", lambda x: tf.unstack(x), list, (3, 2))
row(
    "split[num=2]",
    lambda x: tf.split(x, 2, axis=1),
    lambda x: np.split(x, 2, 1),
    (2, 4, 3),
)
row(
    "split[sizes]",
    lambda x: tf.split(x, [1, 3], axis=1),
    lambda x: np.split(x, [1], 1),
    (2, 4, 3),
)
row("tile", lambda x: tf.tile(x, [2, 3]), lambda x: np.tile(x, (2, 3)), (2, 3))
PADS = [[1, 2], [2, 1]]
for _mode, _np_mode in [
    ("CONSTANT", "constant"),
    ("REFLECT", "reflect"),
    ("SYMMETRIC", "symmetric"),
]:
    row(
        f"pad[{_mode}]",
        lambda x, m=_mode: tf.pad(x, PADS, mode=m),
        lambda x, m=_np_mode: np.pad(x, PADS, mode=m),
        (3, 4),
    )
row(
    "pad[constant_values]",
    lambda x: tf.pad(x, [[0, 1], [1, 0]], constant_values=0.5),
    lambda x: np.pad(x, [[0, 1], [1, 0]], constant_values=0.5),
    (2, 3),
)
row(
    "broadcast_to",
    lambda x: tf.broadcast_to(x, [2, 3, 4]),
    lambda x: np.broadcast_to(x, (2, 3, 4)),
    (3, 1),
)
row("slice", lambda x: tf.slice(x, [0, 1], [2, 2]), lambda x: x[0:2, 1:3], (3, 4))
row(
    "slice[size=-1]",
    lambda x: tf.slice(x, [1, 0], [-1, 2]),
    lambda x: x[1:, 0:2],
    (3, 4),
)
SLICES = [
    ("x[0]", lambda x: x[0]),
    ("x[1:3]", lambda x: x[1:3]),
    ("x[:,0]", lambda x: x[:, 0]),
    ("x[...,None]", lambda x: x[..., None]),
    ("x[::-1]", lambda x: x[::-1]),
    ("x[::2,1:]", lambda x: x[::2, 1:]),
    ("x[-1,:,1:3]", lambda x: x[-1, :, 1:3]),
    ("x[:,None,::-2]", lambda x: x[:, None, ::-2]),
    ("x[1,2,3]", lambda x: x[1, 2, 3]),
]
for _lbl, _f in SLICES:
    row(f"strided_slice[{_lbl}]", _f, _f, (3, 4, 5))
row(
    "strided_slice[tf.strided_slice]",
    lambda x: tf.strided_slice(x, [0, 1], [3, 4], [2, 2]),
    lambda x: x[0:3:2, 1:4:2],
    (3, 4),
)
row("gather", lambda x: tf.gather(x, [2, 0, 2]), lambda x: x[[2, 0, 2]], (3, 4))
row(
    "gather[axis=1]",
    lambda x: tf.gather(x, [3, 1, 3], axis=1),
    lambda x: x[:, [3, 1, 3]],
    (3, 4),
)
row(
    "gather[2d_indices]",
    lambda x: tf.gather(x, [[0, 1], [2, 2]]),
    lambda x: x[np.array([[0, 1], [2, 2]])],
    (3, 4),
)
row(
    "gather_nd",
    lambda x: tf.gather_nd(x, [[0, 1], [2, 3], [0, 1]]),
    lambda x: x[[0, 2, 0], [1, 3, 1]],
    (3, 4),
)
row(
    "gather_nd[slices]",
    lambda x: tf.gather_nd(x, [[1], [0], [1]]),
    lambda x: x[[1, 0, 1]],
    (3, 4),
)
BATCH_IDX = np.array([[0, 2, 2], [1, 0, 1]])
row(
    "gather[batch_dims=1]",
    lambda x: tf.gather(x, BATCH_IDX, batch_dims=1),
    lambda x: np.stack([x[k][BATCH_IDX[k]] for k in range(2)]),
    (2, 3, 4),
)
row(
    # Squared, so the second derivative goes through the gradient's own scatter (TakeGrad).
    "gather[batch_dims=1,squared]",
    lambda x: tf.gather(x, BATCH_IDX, batch_dims=1) ** 2,
    lambda x: np.stack([x[k][BATCH_IDX[k]] for k in range(2)]) ** 2,
    (2, 3, 4),
)
row(
    "gather[batch_dims=1,axis=2]",
    lambda x: tf.gather(x, BATCH_IDX, axis=2, batch_dims=-1),
    lambda x: np.stack([x[k][:, BATCH_IDX[k]] for k in range(2)]),
    (2, 3, 4),
)
row(
    "gather_nd[batch_dims=1]",
    lambda x: tf.gather_nd(x, [[[0, 1], [2, 3]], [[1, 1], [0, 0]]], batch_dims=1),
    lambda x: np.stack([x[0][[0, 2], [1, 3]], x[1][[1, 0], [1, 0]]]),
    (2, 3, 4),
)
SC_IDX = [[0], [2], [0]]
row(
    "scatter_nd",
    lambda u: tf.scatter_nd(SC_IDX, u, [4, 3]),
    lambda u: scatter_nd(SC_IDX, u, (4, 3)),
    (3, 3),
)
row(
    "scatter_nd[elements]",
    lambda u: tf.scatter_nd([[0, 1], [2, 0], [0, 1]], u, [3, 2]),
    lambda u: scatter_nd([[0, 1], [2, 0], [0, 1]], u, (3, 2)),
    (3,),
)
# float32 rounding makes the slope noisy at eps=1e-6: use a wider step (the function is linear).
row(
    "cast[float64->float32->float64]",
    lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64),
    lambda x: x.astype(np.float32).astype(np.float64),
    (2, 3),
    eps=1e-2,
    rtol=1e-4,
)

# Convolution and pooling (NHWC images, HWIO filters).


def same_pads(size, window, stride, dilation=1):
    """TensorFlow's SAME padding along one axis: (before, after)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (window - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def windows(x, kh, kw, stride, dilation, padding, fill=0.0):
    """x padded per TF and cut into windows: shape (n, out_h, out_w, kh, kw, c)."""
    (sh, sw), (dh, dw) = stride, dilation
    if padding == "SAME":
        ph, pw = same_pads(x.shape[1], kh, sh, dh), same_pads(x.shape[2], kw, sw, dw)
        x = np.pad(x, [(0, 0), ph, pw, (0, 0)], constant_values=fill)
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    oh, ow = (x.shape[1] - eh) // sh + 1, (x.shape[2] - ew) // sw + 1
    out = np.empty((x.shape[0], oh, ow, kh, kw, x.shape[3]), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, i, j] = x[:, i * sh : i * sh + eh : dh, j * sw : j * sw + ew : dw]
    return out


def conv_ref(x, f, stride=(1, 1), padding="SAME", dilation=(1, 1)):
    return np.einsum("nijabc,abcd->nijd", windows(x, *f.shape[:2], stride, dilation, padding), f)


def conv_case(name, xs, fs, stride, padding, dilation=(1, 1)):
    row(
        f"conv2d[{name}]",
        lambda x, f: tf.nn.conv2d(x, f, stride, padding, dilations=dilation),
        lambda x, f: conv_ref(x, f, stride, padding, dilation),
        xs,
        fs,
    )


conv_case("same", (2, 4, 5, 2), (3, 3, 2, 3), (1, 1), "SAME")
conv_case("valid,stride2", (1, 5, 6, 2), (2, 3, 2, 2), (2, 2), "VALID")
conv_case("same,stride2,odd", (2, 5, 5, 1), (3, 3, 1, 2), (2, 2), "SAME")
conv_case("dilation2", (1, 6, 5, 2), (2, 2, 2, 2), (1, 1), "SAME", (2, 2))
conv_case("pointwise", (2, 3, 3, 3), (1, 1, 3, 2), (1, 1), "VALID")


def conv_transpose_ref(y, f, x_shape, stride):
    """Scatters each output gradient back through the filter, by the definition."""
    kh, kw = f.shape[:2]
    ph, pw = same_pads(x_shape[1], kh, stride[0]), same_pads(x_shape[2], kw, stride[1])
    hp, wp = x_shape[1] + sum(ph), x_shape[2] + sum(pw)
    out = np.zeros((x_shape[0], hp, wp, x_shape[3]))
    for i in range(y.shape[1]):
        for j in range(y.shape[2]):
            patch = np.einsum("nd,abcd->nabc", y[:, i, j], f)
            out[:, i * stride[0] : i * stride[0] + kh, j * stride[1] : j * stride[1] + kw] += patch
    return out[:, ph[0] : ph[0] + x_shape[1], pw[0] : pw[0] + x_shape[2]]


row(
    "conv2d_transpose",
    lambda y, f: tf.nn.conv2d_transpose(y, f, [2, 5, 5, 2], 2, "SAME"),
    lambda y, f: conv_transpose_ref(y, f, (2, 5, 5, 2), (2, 2)),
    (2, 3, 3, 3),
    (3, 3, 2, 3),
)


def pool_ref(kind, x, k, stride, padding):
    w = windows(x, *k, stride, (1, 1), padding, fill=np.nan)
    return np.nanmax(w, axis=(3, 4)) if kind == "max" else np.nanmean(w, axis=(3, 4))


# Distinct values keep max pooling away from ties, where finite differences are meaningless.
def DISTINCT(rng, s):
    return rng.permutation(np.arange(np.prod(s)))[: np.prod(s)].reshape(s) * 0.1 - 1.0


# TensorFlow's top-level rearrangements (sort_ops.py, array_ops.py, scatter_ops.py): gathers
# and scatters with host-computed indices. Sorting and min/max are checked on distinct values,
# away from the ties where the order (and so the derivative) jumps.
def np_tensor_scatter(kind, x, idx, u):
    out = x.copy()
    for i, v in zip(idx, u, strict=True):
        out[tuple(i)] = {"add": out[tuple(i)] + v, "sub": out[tuple(i)] - v, "update": v}.get(
            kind, np.maximum(out[tuple(i)], v)
        )
    return out


row("sort", lambda x: tf.sort(x, axis=0), lambda x: np.sort(x, axis=0), (4, 3), dom=DISTINCT)
row(
    "sort[descending]",
    lambda x: tf.sort(x, direction="DESCENDING"),
    lambda x: -np.sort(-x, axis=-1),
    (3, 4),
    dom=DISTINCT,
)
row("roll", lambda x: tf.roll(x, [1, -2], [0, 1]), lambda x: np.roll(x, (1, -2), (0, 1)), (3, 4))
row(
    "repeat",
    lambda x: tf.repeat(x, [2, 0, 1], axis=0),
    lambda x: np.repeat(x, [2, 0, 1], 0),
    (3, 2),
)
row("repeat[axis=None]", lambda x: tf.repeat(x, 2), lambda x: np.repeat(x, 2), (2, 3))
row("reverse", lambda x: tf.reverse(x, [0, 2]), lambda x: np.flip(x, (0, 2)), (2, 3, 2))
row(
    "reverse_sequence",
    lambda x: tf.reverse_sequence(x, [3, 1], seq_axis=1),
    lambda x: np.stack([np.concatenate([x[0, 2::-1], x[0, 3:]]), x[1]]),
    (2, 4),
)
BMASK = np.array([[True, False, True], [False, True, True]])
row("boolean_mask", lambda x: tf.boolean_mask(x, BMASK), lambda x: x[BMASK], (2, 3, 2))
row(
    "meshgrid",
    lambda x, y: tf.meshgrid(x, y),
    lambda x, y: np.meshgrid(x, y),
    (3,),
    (2,),
)
row(
    "dynamic_partition",
    lambda x: tf.dynamic_partition(x, [1, 0, 1], 2),
    lambda x: [x[[1]], x[[0, 2]]],
    (3, 2),
)
row(
    "dynamic_stitch",
    lambda a, b: tf.dynamic_stitch([[2, 0], [1]], [a, b]),
    lambda a, b: np.stack([a[1], b[0], a[0]]),
    (2, 3),
    (1, 3),
)
TS_IDX = [[1, 0], [2, 1], [0, 1]]


def DISTINCT_OFF(rng, s):
    """Distinct values that never equal DISTINCT's (no tie between a tensor and its updates)."""
    return DISTINCT(rng, s) + 0.05


for _kind in ("add", "sub", "update", "max"):
    row(
        f"tensor_scatter_nd_{_kind}",
        lambda x, u, k=_kind: getattr(tf, f"tensor_scatter_nd_{k}")(x, TS_IDX, u),
        lambda x, u, k=_kind: np_tensor_scatter(k, x, TS_IDX, u),
        (3, 2),
        (3,),
        dom=[DISTINCT, DISTINCT_OFF],
    )

for kind in ("max", "avg"):
    for label_, k, stride, padding in [
        ("2x2", (2, 2), (2, 2), "VALID"),
        ("3x3,same,odd", (3, 3), (2, 2), "SAME"),
        ("2x3,stride1,same", (2, 3), (1, 1), "SAME"),
    ]:
        fn = tf.nn.max_pool2d if kind == "max" else tf.nn.avg_pool2d
        row(
            f"{kind}_pool2d[{label_}]",
            lambda x, fn=fn, k=k, stride=stride, padding=padding: fn(x, k, stride, padding),
            lambda x, kind=kind, k=k, stride=stride, padding=padding: pool_ref(
                kind, x, k, stride, padding
            ),
            (2, 5, 5, 2),
            dom=DISTINCT,
        )


def adjoint(f, shape):
    """The input gradient of a linear ``f`` (at any point) as a function of the output gradient:
    its backward op, whose own derivative is then checked."""

    def backward(dy):
        x = tf.constant(np.zeros(shape))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return dense(tape.gradient(y, x, output_gradients=dy))

    return backward


def adjoint_ref(ref, shape):
    """NumPy: the transposed matrix of the linear reference, applied to ``dy``."""
    n = int(np.prod(shape))
    matrix = np.stack([np.ravel(ref(np.eye(n)[i].reshape(shape))) for i in range(n)], axis=1)
    return lambda dy: (matrix.T @ np.ravel(dy)).reshape(shape)


row(
    "avg_pool2d[adjoint]",
    adjoint(lambda x: tf.nn.avg_pool2d(x, (2, 2), (1, 1), "SAME"), (1, 4, 4, 1)),
    adjoint_ref(lambda x: pool_ref("avg", x, (2, 2), (1, 1), "SAME"), (1, 4, 4, 1)),
    (1, 4, 4, 1),
)


def max_pool_backward(x0, k, stride, padding):
    """Max pooling's input gradient at the fixed point ``x0`` as a function of the output
    gradient (linear in it): its backward op, whose own derivative (the gather of each window's
    maximum) is then checked."""

    def backward(dy):
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.max_pool2d(x, k, stride, padding)
        return tape.gradient(y, x, output_gradients=dy)

    return backward


def max_pool_gather_ref(x0, k, stride, padding):
    """NumPy: the linear map that gradient transposes, x -> x at each window's maximum of x0."""
    index = np.arange(x0.size, dtype=np.float64).reshape(x0.shape)
    values, positions = (windows(a, *k, stride, (1, 1), padding, fill=np.nan) for a in (x0, index))
    n, oh, ow, kh, kw, c = values.shape

    def flat(a):
        return a.transpose(0, 1, 2, 5, 3, 4).reshape(n, oh, ow, c, kh * kw)

    pick = np.nanargmax(flat(values), axis=-1)[..., None]
    at = np.take_along_axis(flat(positions), pick, axis=-1)[..., 0].astype(int)
    return lambda x: np.ravel(x)[at]


def max_pool_gather(x0, k, stride, padding):
    """The adjoint of that gradient, as a second derivative computes it: ``g`` (shaped as
    ``x0``) gathered at each window's maximum."""
    backward = max_pool_backward(x0, k, stride, padding)

    def gather(g):
        dy = tf.zeros_like(tf.nn.max_pool2d(tf.constant(x0), k, stride, padding))
        with tf.GradientTape() as tape:
            tape.watch(dy)
            dx = backward(dy)
        return tape.gradient(dx, dy, output_gradients=g)

    return gather


# Overlapping windows (stride 1), so windows sharing a maximum add their gradients.
POOLED = DISTINCT(np.random.default_rng(5), (1, 4, 4, 2))
row(
    "max_pool2d[adjoint]",
    max_pool_backward(POOLED, (2, 2), (1, 1), "SAME"),
    adjoint_ref(max_pool_gather_ref(POOLED, (2, 2), (1, 1), "SAME"), (1, 4, 4, 2)),
    (1, 4, 4, 2),
)
row(
    "max_pool2d[adjoint of the adjoint]",
    max_pool_gather(POOLED, (2, 2), (1, 1), "SAME"),
    max_pool_gather_ref(POOLED, (2, 2), (1, 1), "SAME"),
    (1, 4, 4, 2),
)
row(
    "gather[adjoint]",
    adjoint(lambda x: tf.gather(x, [2, 0, 2]), (3, 4)),
    adjoint_ref(lambda x: x[[2, 0, 2]], (3, 4)),
    (3, 4),
)


def batch_norm(training):
    """Keras's BatchNormalization (its fused native op) with gamma = 1, beta = 0 and the initial
    moving statistics (mean 0, variance 1), in float64."""
    layer = tf.keras.layers.BatchNormalization(epsilon=1e-3, dtype="float64")
    return lambda x: layer(x, training=training)


row(
    "keras.layers.BatchNormalization[training]",
    batch_norm(True),
    lambda x: (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3),
    (5, 3),
)
row(
    "keras.layers.BatchNormalization[inference]",
    batch_norm(False),
    lambda x: x / np.sqrt(1.0 + 1e-3),
    (5, 3),
)
row(
    "batch_normalization",
    lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3),
    lambda x, m, v, o, s: (x - m) / np.sqrt(v + 1e-3) * s + o,
    (4, 3),
    (3,),
    (3,),
    (3,),
    (3,),
    dom=[SYM, SYM, POS, SYM, SYM],
)

# Norms and clipping.
row("norm", lambda x: tf.norm(x), lambda x: np.sqrt(np.sum(x * x)), (3, 4))
row(
    "norm[axis=1]",
    lambda x: tf.norm(x, axis=1),
    lambda x: np.sqrt(np.sum(x * x, 1)),
    (3, 4),
)
row(
    "norm[axis=-1,keepdims]",
    lambda x: tf.norm(x, axis=-1, keepdims=True),
    lambda x: np.sqrt(np.sum(x * x, -1, keepdims=True)),
    (3, 4),
)
row(
    "norm[ord=1]",
    lambda x: tf.norm(x, ord=1),
    lambda x: np.sum(np.abs(x)),
    (3, 4),
    dom=NZ,
)
row(
    "norm[ord=inf]",
    lambda x: tf.norm(x, ord=np.inf),
    lambda x: np.max(np.abs(x)),
    (3, 4),
    dom=NZ,
)
for _ord in [1, np.inf, "fro"]:  # matrix norms over both axes
    row(
        f"norm[ord={_ord},axis=[0,1]]",
        lambda x, o=_ord: tf.norm(x, ord=o, axis=[0, 1]),
        lambda x, o=_ord: np.linalg.norm(x, o),
        (3, 4),
        dom=NZ,
    )
row(
    "norm[ord=3]",
    lambda x: tf.norm(x, ord=3),
    lambda x: np.sum(np.abs(x) ** 3) ** (1 / 3),
    (3, 4),
    dom=NZ,
)
row(
    "norm[linalg]",
    lambda x: tf.linalg.norm(x),
    lambda x: np.sqrt(np.sum(x * x)),
    (3, 4),
)
row(
    "clip_by_norm[clipped]",
    lambda x: tf.clip_by_norm(x, 1.0),
    lambda x: clip_by_norm(x, 1.0),
    (2, 3),
)
row(
    "clip_by_norm[unclipped]",
    lambda x: tf.clip_by_norm(x, 10.0),
    lambda x: clip_by_norm(x, 10.0),
    (2, 3),
)
row(
    "clip_by_norm[axes=[1]]",
    lambda x: tf.clip_by_norm(x, 2.0, axes=[1]),
    lambda x: clip_by_norm(x, 2.0, [1]),
    (4, 3),
    dom=U(-1.8, 1.8),
)
row(
    "clip_by_global_norm[clipped]",
    lambda x, y: tf.clip_by_global_norm([x, y], 1.0)[0],
    lambda x, y: clip_by_global_norm(1.0, x, y)[0],
    (2, 3),
    (4,),
)
row(
    "clip_by_global_norm[unclipped]",
    lambda x, y: tf.clip_by_global_norm([x, y], 50.0)[0],
    lambda x, y: clip_by_global_norm(50.0, x, y)[0],
    (2, 3),
    (4,),
)
row(
    "clip_by_global_norm[global_norm]",
    lambda x, y: tf.clip_by_global_norm([x, y], 1.0)[1],
    lambda x, y: clip_by_global_norm(1.0, x, y)[1],
    (2, 3),
    (4,),
)

# einsum and tensordot.
EINSUM = [
    ("ij,jk->ik", (3, 4), (4, 2)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 2)),
    ("ij->ji", (3, 4)),
    ("bxby->bxy", (3, 2, 3, 4)),
    ("i,j->ij", (3,), (4,)),
    ("ii->", (4, 4)),
    ("ij->", (3, 4)),
    ("ij,ij->i", (3, 4), (3, 4)),
]
for _eq, *_s in EINSUM:
    row(
        f"einsum[{_eq}]",
        lambda *xs, e=_eq: tf.einsum(e, *xs),
        lambda *xs, e=_eq: np.einsum(e, *xs),
        *_s,
    )
row(
    "einsum[linalg]",
    lambda a, b: tf.linalg.einsum("ij,jk->ik", a, b),
    lambda a, b: a @ b,
    (2, 3),
    (3, 2),
)
TENSORDOT = [
    ("axes=1", 1, (3, 4), (4, 5)),
    ("axes=2", 2, (2, 3, 4), (3, 4, 2)),
    ("axes=[[0,2],[2,0]]", [[0, 2], [2, 0]], (3, 2, 4), (4, 5, 3)),
    ("axes=0", 0, (2, 3), (2,)),
]
for _lbl, _axes, *_s in TENSORDOT:
    row(
        f"tensordot[{_lbl}]",
        lambda a, b, ax=_axes: tf.tensordot(a, b, axes=ax),
        lambda a, b, ax=_axes: np.tensordot(a, b, axes=ax),
        *_s,
    )
row(
    "tensordot[linalg]",
    lambda a, b: tf.linalg.tensordot(a, b, 1),
    lambda a, b: a @ b,
    (2, 3),
    (3, 2),
)

# Linear algebra (well-conditioned matrices).
row(
    "linalg.solve",
    lambda a, b: tf.linalg.solve(a, b),
    np.linalg.solve,
    (3, 3),
    (3, 2),
    dom=(WELL, SYM),
)
row(
    "linalg.solve[batched]",
    lambda a, b: tf.linalg.solve(a, b),
    np.linalg.solve,
    (2, 3, 3),
    (2, 3, 1),
    dom=(WELL, SYM),
)
row("linalg.inv", lambda a: tf.linalg.inv(a), np.linalg.inv, (3, 3), dom=WELL)
row(
    "linalg.inv[batched]",
    lambda a: tf.linalg.inv(a),
    np.linalg.inv,
    (2, 3, 3),
    dom=WELL,
)
row("linalg.det", lambda a: tf.linalg.det(a), np.linalg.det, (3, 3), dom=WELL)
row(
    "linalg.det[batched]",
    lambda a: tf.linalg.det(a),
    np.linalg.det,
    (2, 3, 3),
    dom=WELL,
)


def SPREAD(rng, s):
    """Matrices whose eigen- and singular values stay apart (their derivatives are smooth)."""
    spread = np.zeros(s[-2:])
    k = min(s[-2:])
    spread[np.arange(k), np.arange(k)] = 3.0 * np.arange(k, 0, -1)
    return rng.uniform(-0.5, 0.5, s) + spread


row(
    "linalg.eigvalsh",
    lambda a: tf.linalg.eigvalsh(a),
    lambda a: np.linalg.eigvalsh(a, UPLO="L"),
    (2, 3, 3),
    dom=SPREAD,
)
row(
    "linalg.svd[values]",
    lambda a: tf.linalg.svd(a, compute_uv=False),
    lambda a: np.linalg.svd(a, compute_uv=False),
    (3, 2),
    dom=SPREAD,
)
row("linalg.pinv", lambda a: tf.linalg.pinv(a), np.linalg.pinv, (2, 3), dom=SPREAD)

# Losses.
LABELS = PROBS(np.random.default_rng(11), (4, 5))
SPARSE = np.array([1, 0, 4, 2], np.int32)
row(
    "softmax_cross_entropy_with_logits[logits]",
    lambda z: tf.nn.softmax_cross_entropy_with_logits(labels=tf.constant(LABELS), logits=z),
    lambda z: -np.sum(LABELS * log_softmax(z), -1),
    (4, 5),
)
row(
    "softmax_cross_entropy_with_logits[labels,logits]",
    lambda y, z: tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z),
    lambda y, z: -np.sum(y * log_softmax(z), -1),
    (4, 5),
    (4, 5),
    dom=(PROBS, SYM),
    no_second="TF's fused op drops the labels-logits mixed term (TF gives 0 there); "
    "second order w.r.t. logits is checked in the [logits] row",
)
row(
    "sparse_softmax_cross_entropy_with_logits",
    lambda z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(SPARSE), logits=z),
    lambda z: -log_softmax(z)[np.arange(4), SPARSE],
    (4, 5),
)
row(
    "sigmoid_cross_entropy_with_logits",
    lambda y, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z),
    lambda y, z: np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))),
    (3, 4),
    (3, 4),
    dom=(U(0.0, 1.0), NZ),
)

# Complex ops, checked through real inputs and real outputs: z = complex(x, y) in, the parts or
# a real function of them out, so finite differences over x and y check TensorFlow's convention
# (the gradient w.r.t. z is dL/dx + i dL/dy) end to end.


def C(x, y):
    return tf.complex(x, y)


row(
    "complex[parts]",
    lambda x, y: [tf.math.real(C(x, y)), tf.math.imag(C(x, y))],
    lambda x, y: [x + 0 * y, y + 0 * x],  # the parts broadcast
    (2, 3),
    (3,),
)
row(
    "real[z*z]",
    lambda x, y: tf.math.real(C(x, y) * C(x, y)),
    lambda x, y: ((x + 1j * y) ** 2).real,
    (2, 3),
    (2, 3),
)
row(
    "imag[z*w]",
    lambda x, y: tf.math.imag(C(x, y) * C(y, x)),
    lambda x, y: ((x + 1j * y) * (y + 1j * x)).imag,
    (2, 3),
    (2, 3),
)
row(
    "conj",
    lambda x, y: tf.math.imag(tf.math.conj(C(x, y)) * C(y, x)),
    lambda x, y: (np.conj(x + 1j * y) * (y + 1j * x)).imag,
    (2, 3),
    (2, 3),
)
row(
    "angle",
    lambda x, y: tf.math.angle(C(x, y)),
    lambda x, y: np.angle(x + 1j * y),
    (2, 3),
    (2, 3),
    dom=(POS, SYM),
)
row(
    "abs[complex]",
    lambda x, y: tf.abs(C(x, y)),
    lambda x, y: np.abs(x + 1j * y),
    (2, 3),
    (2, 3),
    dom=(POS, SYM),
)
row(
    "divide[complex]",
    lambda x, y: tf.math.imag(C(x, y) / C(y, x)),
    lambda x, y: ((x + 1j * y) / (y + 1j * x)).imag,
    (2, 3),
    (2, 3),
    dom=(POS, POS),
)
row(
    "subtract[complex]",
    lambda x, y: tf.math.real(C(x, y) - C(y, y) * C(x, x)),
    lambda x, y: (x + 1j * y - (y + 1j * y) * (x + 1j * x)).real,
    (2, 3),
    (3,),
)
row(
    "exp[complex]",
    lambda x, y: tf.math.imag(tf.exp(C(x, y))),
    lambda x, y: np.exp(x + 1j * y).imag,
    (2, 3),
    (2, 3),
)
for _name, _tf_fn, _np_fn in (
    ("sin", tf.sin, np.sin),
    ("cos", tf.cos, np.cos),
    ("sinh", tf.sinh, np.sinh),
    ("cosh", tf.cosh, np.cosh),
):
    row(
        f"{_name}[complex]",
        lambda x, y, f=_tf_fn: tf.math.real(f(C(x, y)) * C(y, x)),
        lambda x, y, f=_np_fn: (f(x + 1j * y) * (y + 1j * x)).real,
        (2, 3),
        (2, 3),
    )
row(
    "log[complex]",
    lambda x, y: tf.math.real(tf.math.log(C(x, y)) * C(y, x)),
    lambda x, y: (np.log(x + 1j * y) * (y + 1j * x)).real,
    (2, 3),
    (2, 3),
    dom=(POS, SYM),
)
row(
    "sqrt[complex]",
    lambda x, y: tf.math.imag(tf.sqrt(C(x, y))),
    lambda x, y: np.sqrt(x + 1j * y).imag,
    (2, 3),
    (2, 3),
    dom=(POS, SYM),
)
row(
    "reciprocal[complex]",
    lambda x, y: tf.math.real(tf.math.reciprocal(C(x, y))),
    lambda x, y: (1 / (x + 1j * y)).real,
    (2, 3),
    (2, 3),
    dom=(POS, SYM),
)
row(
    "square[complex]",
    lambda x, y: tf.math.imag(tf.square(C(x, y))),
    lambda x, y: ((x + 1j * y) ** 2).imag,
    (2, 3),
    (2, 3),
)
row(
    "negative[complex]",
    lambda x, y: tf.math.imag(-C(x, y) * C(x, x)),
    lambda x, y: (-(x + 1j * y) * (x + 1j * x)).imag,
    (2, 3),
    (2, 3),
)
row(
    "reduce_sum[complex]",
    lambda x, y: tf.math.real(tf.reduce_sum(C(x, y) * C(y, x), axis=0)),
    lambda x, y: ((x + 1j * y) * (y + 1j * x)).sum(0).real,
    (2, 3),
    (2, 3),
)
row(
    "reduce_mean[complex]",
    lambda x, y: tf.math.imag(tf.reduce_mean(C(x, y) * C(x, x))),
    lambda x, y: ((x + 1j * y) * (x + 1j * x)).mean().imag,
    (2, 3),
    (2, 3),
)
row(
    "reduce_prod[complex]",
    lambda x, y: tf.math.imag(tf.reduce_prod(C(x, y), axis=1)),
    lambda x, y: (x + 1j * y).prod(1).imag,
    (2, 3),
    (2, 3),
)
row(
    "matmul[complex,adjoint_b]",
    lambda a, b, c, d: tf.math.imag(tf.linalg.matmul(C(a, b), C(c, d), adjoint_b=True)),
    lambda a, b, c, d: ((a + 1j * b) @ np.conj(c + 1j * d).T).imag,
    (2, 3),
    (2, 3),
    (4, 3),
    (4, 3),
)
row(
    "linalg.adjoint",
    lambda x, y: tf.math.real(tf.linalg.adjoint(C(x, y)) * C(y, y)[0]),
    lambda x, y: (np.conj(x + 1j * y).T * (y + 1j * y)[0]).real,
    (2, 2),
    (2, 2),
)
row(
    "cast[complex]",
    lambda x, y: tf.cast(tf.cast(x, tf.complex128) * C(x, y), tf.float64),
    lambda x, y: (x * (x + 1j * y)).real,
    (2, 3),
    (2, 3),
)
row(
    "gather[complex]",
    lambda x, y: tf.math.imag(tf.gather(C(x, y) * C(y, x), [2, 0, 2], axis=1)),
    lambda x, y: ((x + 1j * y) * (y + 1j * x))[:, [2, 0, 2]].imag,
    (2, 3),
    (2, 3),
)

# ----------------------------------------------------------------------------- the inventory
# Derived, not kept by hand: the binding rows (`_core.op_table()`) declare which public ops are
# differentiable, and `_core.recording_ops()` lists the Rust ops that record a derivative (read
# from their source). Each must be reached by a row above.

TABLE = tf._core.op_table()
NAMESPACES = {
    "": tf,
    "math": tf.math,
    "math.special": tf.math.special,
    "nn": tf.nn,
    "linalg": tf.linalg,
    "keras.layers": tf.keras.layers,
}


def base(name):
    return name.split("[")[0]


def public(name):
    """The public callable a row name stands for: ``tf.name`` or ``tf.<namespace>.name``."""
    ns, _, attr = name.rpartition(".")
    spaces = [NAMESPACES[ns]] if ns else NAMESPACES.values()
    return next((getattr(m, attr) for m in spaces if callable(getattr(m, attr, None))), None)


def test_every_differentiable_op_has_a_row():
    bases = {base(r.name) for r in ROWS}
    missing = [
        python_name
        for python_name, tf_names, differentiable, _op in TABLE
        if differentiable
        and tf_names
        and not any(n in bases or n.rpartition(".")[2] in bases for n in tf_names)
    ]
    assert not missing, f"differentiable ops without a gradient-check row: {missing}"


def recorded(r):
    """The op names the tapes record for a row: forward, first and second derivative."""
    xs, ws, _ = case(r)
    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as outer:
        for t in ts:
            outer.watch(t)
        with tf.GradientTape() as inner:
            for t in ts:
                inner.watch(t)
            loss = weighted_sum(r.fn(*ts), ws)
        names = set(inner._recorded_ops())
        inner.gradient(loss, ts)
    return names | set(outer._recorded_ops())


def test_every_recording_op_is_exercised():
    seen = set().union(*(recorded(r) for r in ROWS))
    missing = [(op, name) for op, name in tf._core.recording_ops() if name and name not in seen]
    assert not missing, f"ops whose derivative no gradient-check row reaches: {missing}"


def test_declared_non_differentiable_ops_record_nothing():
    recording = {op for op, _ in tf._core.recording_ops()}
    wrong = [name for name, _, diff, op in TABLE if op and not diff and op in recording]
    assert not wrong, f"declared not differentiable, but their op records a gradient: {wrong}"


def test_every_row_names_a_public_op():
    assert not [r.name for r in ROWS if public(base(r.name)) is None]
    assert len({r.name for r in ROWS}) == len(ROWS), "row names must be unique"


# ----------------------------------------------------------------------------- the checks


def outs(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


def case(r):
    """Inputs, output weights and second-order weights for a row (seeded by its name)."""
    rng = np.random.default_rng(zlib.crc32(r.name.encode()))
    xs = [np.asarray(d(rng, s), np.float64) for d, s in zip(r.domains, r.shapes, strict=True)]
    ws = [np.asarray(rng.standard_normal(np.shape(o))) for o in outs(r.ref(*xs))]
    vs = [np.asarray(rng.standard_normal(s)) for s in r.shapes]
    return xs, ws, vs


def weighted_sum(ys, ws):
    total = None
    for y, w in zip(outs(ys), ws, strict=True):
        term = tf.reduce_sum(y * tf.constant(w))
        total = term if total is None else total + term
    return total


def dense(g):
    """TF returns IndexedSlices for gather gradients; compare them as dense arrays."""
    return None if g is None else tf.convert_to_tensor(g)


def first_grads(r, xs, ws):
    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        loss = weighted_sum(r.fn(*ts), ws)
    return [dense(g) for g in tape.gradient(loss, ts)]


def finite_diff(f, xs, eps):
    grads = []
    for i, x in enumerate(xs):
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            hi, lo = [a.copy() for a in xs], [a.copy() for a in xs]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            g[idx] = (f(hi) - f(lo)) / (2 * eps)
        grads.append(g)
    return grads


IDS = [r.name for r in ROWS]


@pytest.mark.parametrize("r", ROWS, ids=IDS)
def test_forward(r):
    xs, _, _ = case(r)
    got, want = outs(r.fn(*[tf.constant(x) for x in xs])), outs(r.ref(*xs))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == tf.float64
        assert tuple(g.shape) == np.shape(w)
        np.testing.assert_allclose(g.numpy(), w, rtol=r.ftol, atol=1e-12)


@pytest.mark.parametrize("r", ROWS, ids=IDS)
def test_first_order(r):
    xs, ws, _ = case(r)
    grads = first_grads(r, xs, ws)

    def loss(xs_):
        return sum(np.sum(np.asarray(y) * w) for y, w in zip(outs(r.ref(*xs_)), ws, strict=True))

    for i, (g, want) in enumerate(zip(grads, finite_diff(loss, xs, r.eps), strict=True)):
        assert g is not None, f"input {i}: gradient is None"
        assert g.dtype == tf.float64 and tuple(g.shape) == xs[i].shape
        np.testing.assert_allclose(g.numpy(), want, rtol=r.rtol, atol=1e-6, err_msg=f"input {i}")


SECOND = [r for r in ROWS if not r.no_second]


@pytest.mark.parametrize("r", SECOND, ids=[r.name for r in SECOND])
def test_second_order(r):
    xs, ws, vs = case(r)
    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as t2:
        for t in ts:
            t2.watch(t)
        with tf.GradientTape() as t1:
            for t in ts:
                t1.watch(t)
            loss = weighted_sum(r.fn(*ts), ws)
        gs = [dense(g) for g in t1.gradient(loss, ts)]
        s = weighted_sum(gs, vs)
    hs = t2.gradient(s, ts)

    def s_of(xs_):
        return sum(np.sum(g.numpy() * v) for g, v in zip(first_grads(r, xs_, ws), vs, strict=True))

    for i, (h, want) in enumerate(zip(hs, finite_diff(s_of, xs, 1e-5), strict=True)):
        h = np.zeros_like(xs[i]) if h is None else h.numpy()
        assert h.shape == xs[i].shape
        np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-5, err_msg=f"input {i}")


# ------------------------------------------------------------------------------- in a trace

# Rows whose op computes with numpy from a float value it reads into Python: a function that
# calls them runs eagerly (with a warning) instead of tracing, with the same results.
EAGER_IN_TRACES = {
    "tensor_scatter_nd_max",
    "linalg.eigvalsh",
    "linalg.svd[values]",
    "linalg.pinv",
}


@pytest.mark.parametrize("r", ROWS, ids=IDS)
def test_a_traced_step_replays_the_op_and_its_derivatives(r):
    # ft.function of the forward pass and the first and second derivatives (nested tapes
    # inside the function), traced on the row's inputs and replayed on others, equals the
    # eager step on those: every op and derivative records what a replay needs.
    xs, ws, vs = case(r)

    def step(*ts):
        with tf.GradientTape() as t2:
            for t in ts:
                t2.watch(t)
            with tf.GradientTape() as t1:
                for t in ts:
                    t1.watch(t)
                ys = r.fn(*ts)
                loss = weighted_sum(ys, ws)
            gs = [dense(g) for g in t1.gradient(loss, ts)]
            s = weighted_sum(gs, vs)
        hs = t2.gradient(s, ts) if not r.no_second else ts
        hs = [tf.zeros_like(t) if h is None else h for h, t in zip(hs, ts, strict=True)]
        return outs(ys), gs, hs

    compiled = tf.function(step)
    others = [tf.constant(x * 0.9 + 0.01 if x.dtype.kind == "f" else x) for x in xs]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled(*[tf.constant(x) for x in xs])
        got = compiled(*others)
    eager = any("runs eagerly" in str(w.message) for w in caught)
    assert eager == (r.name in EAGER_IN_TRACES), [str(w.message) for w in caught]
    for g, w in zip(tf.nest.flatten(got), tf.nest.flatten(step(*others)), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- kinks and ties

SCALE = SELU_SCALE
KINKS = [
    ("relu'(0)=0", lambda x: tf.nn.relu(x), [[-1.0, 0.0, 1.0]], [[0, 0, 1]]),
    ("abs'(0)=0", lambda x: tf.abs(x), [[-1.0, 0.0, 1.0]], [[-1, 0, 1]]),
    (
        "relu6'(0)=relu6'(6)=0",
        lambda x: tf.nn.relu6(x),
        [[-1.0, 0, 3, 6, 7]],
        [[0, 0, 1, 0, 0]],
    ),
    (
        "leaky_relu'(0)=alpha",
        lambda x: tf.nn.leaky_relu(x),
        [[-1.0, 0, 1]],
        [[0.2, 0.2, 1]],
    ),
    ("elu'(0)=1", lambda x: tf.nn.elu(x), [[0.0]], [[1.0]]),
    ("selu'(0)=scale", lambda x: tf.nn.selu(x), [[0.0]], [[SCALE]]),
    (
        "maximum tie -> first",
        lambda x, y: tf.maximum(x, y),
        [[1.0, 2, 0], [1.0, 0, 3]],
        [[1, 1, 0], [0, 0, 1]],
    ),
    (
        "minimum tie -> first",
        lambda x, y: tf.minimum(x, y),
        [[1.0, 2, 0], [1.0, 0, 3]],
        [[1, 0, 1], [0, 1, 0]],
    ),
    (
        "maximum tie, broadcast",
        lambda x, y: tf.maximum(x, y),
        [[[1.0, 2], [1, 0]], [1.0]],
        [[[1, 1], [1, 0]], [1]],
    ),
    (
        "reduce_max ties split",
        lambda x: tf.reduce_max(x),
        [[3.0, 1, 3, 2]],
        [[0.5, 0, 0.5, 0]],
    ),
    (
        "reduce_max ties split, axis=1",
        lambda x: tf.reduce_max(x, axis=1),
        [[[1.0, 4, 4], [2, 2, 2]]],
        [[[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]],
    ),
    (
        "reduce_max ties split, all axes",
        lambda x: tf.reduce_max(x),
        [[[1.0, 4, 4], [4, 0, 4]]],
        [[[0, 0.25, 0.25], [0.25, 0, 0.25]]],
    ),
    (
        "reduce_min ties split",
        lambda x: tf.reduce_min(x),
        [[1.0, 3, 1, 1]],
        [[1 / 3, 0, 1 / 3, 1 / 3]],
    ),
    (
        "reduce_min ties split, axis=0",
        lambda x: tf.reduce_min(x, axis=0),
        [[[1.0, 2], [1, 3]]],
        [[[0.5, 1], [0.5, 0]]],
    ),
    ("reduce_prod'(one zero)", lambda x: tf.reduce_prod(x), [[0.0, 2, 3]], [[6, 0, 0]]),
    ("reduce_prod'(two zeros)", lambda x: tf.reduce_prod(x), [[0.0, 2, 0]], [[0, 0, 0]]),
    (
        "reduce_prod'(zeros), axis=1",
        lambda x: tf.reduce_prod(x, axis=1),
        [[[0.0, 2, 3], [1, 0, 0], [2, 3, 4]]],
        [[[6, 0, 0], [0, 0, 0], [12, 8, 6]]],
    ),
    # TF's SqrtGrad/RsqrtGrad/ReciprocalGrad return 0 where the upstream gradient is 0, so a
    # tf.where mask keeps a singular point of the unselected branch from turning into NaN.
    (
        "sqrt masked by where at x<0",
        lambda x: tf.where(x > 0, tf.sqrt(x), x),
        [[-1.0, 4.0]],
        [[1.0, 0.25]],
    ),
    (
        "sqrt masked by where at 0",
        lambda x: tf.where(x > 0, tf.sqrt(x), tf.zeros_like(x)),
        [[0.0, 4.0]],
        [[0.0, 0.25]],
    ),
    (
        "rsqrt masked by where at 0",
        lambda x: tf.where(x > 0, tf.math.rsqrt(x), tf.zeros_like(x)),
        [[0.0, 4.0]],
        [[0.0, -0.0625]],
    ),
    (
        "reciprocal masked by where at 0",
        lambda x: tf.where(x != 0, tf.math.reciprocal(x), tf.zeros_like(x)),
        [[0.0, 4.0]],
        [[0.0, -0.0625]],
    ),
    (
        "clip_by_value bounds pass to x",
        lambda x: tf.clip_by_value(x, -1.0, 1.0),
        [[-1.0, 1, -2, 2, 0]],
        [[1, 1, 0, 0, 1]],
    ),
]


@pytest.mark.parametrize("name,fn,xs,want", KINKS, ids=[k[0] for k in KINKS])
def test_kink(name, fn, xs, want):
    ts = [tf.constant(np.asarray(x, np.float64)) for x in xs]
    with tf.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        y = fn(*ts)
    grads = tape.gradient(y, ts)
    for g, w in zip(grads, want, strict=True):
        assert g is not None
        # rtol 1e-7: TF's leaky_relu alpha is float32(0.2)
        np.testing.assert_allclose(g.numpy(), np.asarray(w, np.float64), rtol=1e-7, atol=0)


def test_cast_gradient_dtypes():
    """The gradient through cast comes back in the source's dtype; an integer cast cuts it."""
    x32 = tf.constant(np.array([0.5, -1.25], np.float32))
    x64 = tf.constant(np.array([0.5, -1.25]))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x32, x64])
        y64 = tf.cast(x32, tf.float64) * 2.0
        y32 = tf.cast(x64, tf.float32) * 3.0
        cut = tf.cast(tf.cast(x64, tf.int32), tf.float64) * 1.0
    g32, g64 = tape.gradient(y64, x32), tape.gradient(y32, x64)
    assert g32.dtype == tf.float32 and g64.dtype == tf.float64
    np.testing.assert_array_equal(g32.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(g64.numpy(), [3.0, 3.0])
    assert tape.gradient(cut, x64) is None


# ----------------------------------------------------------------------------- big and float32

BIG = np.random.default_rng(5).uniform(-2.0, 2.0, (150, 257))  # 38,550 elements: parallel paths
BIG_B = np.random.default_rng(6).standard_normal((257, 70))
# name: (ferrotape f, numpy f, numpy vjp(x, w)) for closed-form gradients on large inputs
LARGE = {
    "tanh": (lambda x: tf.tanh(x), np.tanh, lambda x, w: w * (1 - np.tanh(x) ** 2)),
    "sigmoid": (lambda x: tf.sigmoid(x), sigmoid, lambda x, w: w * sigmoid(x) * sigmoid(-x)),
    "exp": (lambda x: tf.exp(x), np.exp, lambda x, w: w * np.exp(x)),
    "relu": (lambda x: tf.nn.relu(x), lambda x: np.maximum(x, 0), lambda x, w: w * (x > 0)),
    "softmax": (
        lambda x: tf.nn.softmax(x),
        softmax,
        lambda x, w: softmax(x) * (w - np.sum(w * softmax(x), -1, keepdims=True)),
    ),
    "log_softmax": (
        lambda x: tf.nn.log_softmax(x),
        log_softmax,
        lambda x, w: w - softmax(x) * np.sum(w, -1, keepdims=True),
    ),
    "reduce_sum[axis=0]": (
        lambda x: tf.reduce_sum(x, 0),
        lambda x: x.sum(0),
        lambda x, w: np.broadcast_to(w, x.shape),
    ),
    "reduce_max[axis=1]": (
        lambda x: tf.reduce_max(x, 1),
        lambda x: x.max(1),
        lambda x, w: (x == x.max(1, keepdims=True)) * w[:, None],
    ),
    "add[broadcast]": (
        lambda x: x + tf.constant(BIG[0]),
        lambda x: x + BIG[0],
        lambda x, w: w,
    ),
    "matmul": (
        lambda x: tf.matmul(x, tf.constant(BIG_B)),
        lambda x: x @ BIG_B,
        lambda x, w: w @ BIG_B.T,
    ),
    "transpose+reshape": (
        lambda x: tf.reshape(tf.transpose(x), [-1, 150]) * 2.0,
        lambda x: x.T.reshape(-1, 150) * 2.0,
        lambda x, w: 2.0 * w.reshape(257, 150).T,
    ),
}


@pytest.mark.parametrize("name", sorted(LARGE))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_large_inputs(name, dtype):
    """Inputs above the serial threshold, in float64 and in float32 (the training dtype)."""
    fn, ref, vjp = LARGE[name]
    np_dt = np.float64 if dtype == "float64" else np.float32
    x = tf.constant(BIG.astype(np_dt))
    if dtype == "float32":  # constants inside fn are float64: run the op on a float32 copy
        fn = {
            "add[broadcast]": lambda x: x + tf.constant(BIG[0].astype(np.float32)),
            "matmul": lambda x: tf.matmul(x, tf.constant(BIG_B.astype(np.float32))),
        }.get(name, fn)
    want = ref(BIG.astype(np_dt).astype(np.float64))
    w = np.random.default_rng(9).standard_normal(want.shape)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
        loss = tf.reduce_sum(y * tf.constant(w.astype(np_dt)))
    g = tape.gradient(loss, x)
    assert y.dtype == x.dtype and g.dtype == x.dtype
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == "float64" else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y.numpy(), want, **tol)
    np.testing.assert_allclose(g.numpy(), vjp(BIG.astype(np_dt).astype(np.float64), w), **tol)
