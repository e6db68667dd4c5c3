"""Plain-Python references for the special functions of ``ft.math`` (used by the gradient-check
table, whose finite differences are taken of these, not of ferrotape).

Each is the textbook series or closed form for the moderate arguments the table samples, written
independently of the Rust kernels (stdlib ``math`` for lgamma and erf/erfc; power series
elsewhere), accurate to about 1e-13 there; they are not meant for other ranges.
"""

import math

import numpy as np

EULER = 0.5772156649015329


def elementwise(f):
    """``f`` of Python floats, mapped over arrays (broadcasting its arguments)."""
    return np.vectorize(f, otypes=[float])


lgamma = elementwise(math.lgamma)
erfc = elementwise(math.erfc)


def _series(term, first, n=300):
    """math.fsum of first, term(1, prev), term(2, prev), ... (n terms)."""
    t, out = first, [first]
    for k in range(1, n):
        t = term(k, t)
        out.append(t)
    return math.fsum(out)


@elementwise
def digamma(x):
    """ψ(x) for x > 0: the recurrence up to 20, then Stirling's series."""
    acc = 0.0
    while x < 20:
        acc -= 1 / x
        x += 1
    z = 1 / (x * x)
    return acc + math.log(x) - 0.5 / x - z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z / 240)))


@elementwise
def trigamma(x):
    """ψ'(x) for x > 0: Σ 1/(x+k)² to 20, then the asymptotic tail."""
    acc = 0.0
    while x < 20:
        acc += 1 / (x * x)
        x += 1
    z = 1 / (x * x)
    return acc + 1 / x + z / 2 + z / x * (1 / 6 - z * (1 / 30 - z * (1 / 42 - z / 30)))


@elementwise
def zeta(s, q):
    """ζ(s, q): 30 terms, then Euler–Maclaurin with three Bernoulli corrections."""
    w = q + 30
    head = math.fsum((q + k) ** -s for k in range(30))
    tail = w ** (1 - s) / (s - 1) + 0.5 * w**-s + s * w ** (-s - 1) / 12
    tail -= s * (s + 1) * (s + 2) * w ** (-s - 3) / 720
    return head + tail + s * (s + 1) * (s + 2) * (s + 3) * (s + 4) * w ** (-s - 5) / 30240


@elementwise
def erfinv(y):
    """erf⁻¹ by Newton's method on math.erf."""
    x = 0.0
    for _ in range(60):
        x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def erfcinv(c):
    return erfinv(1 - np.asarray(c))


def ndtri(p):
    return math.sqrt(2) * erfinv(2 * np.asarray(p) - 1)


@elementwise
def igamma(a, x):
    """P(a, x) = Σₙ x^(a+n) e^-x / Γ(a+n+1)."""
    return math.fsum(
        math.exp((a + n) * math.log(x) - x - math.lgamma(a + n + 1)) for n in range(200)
    )


def igammac(a, x):
    return 1 - igamma(a, x)


@elementwise
def betainc(a, b, x):
    """I_x(a, b) = x^a/B(a, b) · Σₙ (1-b)ₙ xⁿ/(n!(a+n)) (for x well below 1)."""
    log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    terms, t = [], 1.0
    for n in range(400):
        terms.append(t / (a + n))
        t *= (n + 1 - b) * x / (n + 1)
    return math.exp(a * math.log(x) - log_beta) * math.fsum(terms)


def _bessel_i(nu, x):
    h = abs(x) / 2
    return _series(lambda k, t: t * h * h / (k * (k + nu)), h**nu / math.factorial(nu), 120)


bessel_i0 = elementwise(lambda x: _bessel_i(0, x))
bessel_i1 = elementwise(lambda x: math.copysign(_bessel_i(1, x), x))
bessel_i0e = elementwise(lambda x: math.exp(-abs(x)) * _bessel_i(0, x))
bessel_i1e = elementwise(lambda x: math.exp(-abs(x)) * math.copysign(_bessel_i(1, x), x))


def _bessel_j(nu, x):
    h = x / 2
    return _series(lambda k, t: -t * h * h / (k * (k + nu)), h**nu / math.factorial(nu), 80)


bessel_j0 = elementwise(lambda x: _bessel_j(0, x))
bessel_j1 = elementwise(lambda x: _bessel_j(1, x))


def _psi_weighted(nu, x, sign):
    """Σₖ (ψ(k+1) + ψ(k+ν+1)) (sign·x²/4)ᵏ/(k!(k+ν)!) with ψ at integers from harmonic numbers."""
    h2 = sign * x * x / 4
    psi = lambda n: -EULER + math.fsum(1 / j for j in range(1, n))  # noqa: E731 (ψ(n))
    t = 1 / math.factorial(nu)
    out = []
    for k in range(80):
        out.append(t * (psi(k + 1) + psi(k + nu + 1)))
        t *= h2 / ((k + 1) * (k + 1 + nu))
    return math.fsum(out)


@elementwise
def bessel_y0(x):
    """A&S 9.1.13: (2/π)(ln(x/2) J₀(x) - ½Σ 2ψ(k+1)(-x²/4)ᵏ/(k!)²)."""
    return 2 / math.pi * (math.log(x / 2) * _bessel_j(0, x) - 0.5 * _psi_weighted(0, x, -1))


@elementwise
def bessel_y1(x):
    """A&S 9.1.11 for n = 1."""
    s = -(x / 2) / math.pi * _psi_weighted(1, x, -1)
    return -2 / (math.pi * x) + 2 / math.pi * math.log(x / 2) * _bessel_j(1, x) + s


@elementwise
def bessel_k0(x):
    """A&S 9.6.13: -ln(x/2) I₀(x) + ½Σ 2ψ(k+1)(x²/4)ᵏ/(k!)²."""
    return -math.log(x / 2) * _bessel_i(0, x) + 0.5 * _psi_weighted(0, x, 1)


@elementwise
def bessel_k1(x):
    """A&S 9.6.11 for n = 1."""
    return 1 / x + math.log(x / 2) * _bessel_i(1, x) - x / 4 * _psi_weighted(1, x, 1)


def bessel_k0e(x):
    return np.exp(x) * bessel_k0(x)


def bessel_k1e(x):
    return np.exp(x) * bessel_k1(x)


@elementwise
def dawsn(x):
    """e^(-x²) Σ x^(2k+1)/(k!(2k+1))."""
    terms, t = [], x
    for k in range(120):
        terms.append(t / (2 * k + 1))
        t *= x * x / (k + 1)
    return math.exp(-x * x) * math.fsum(terms)


@elementwise
def expint(x):
    """Ei(x) = γ + ln x + Σ xᵏ/(k·k!) for x > 0."""
    return EULER + math.log(x) + _series(lambda k, t: t * x * k / (k + 1) ** 2, x, 150)


def _fresnel(x, odd):
    """Σ (-1)ᵏ (π/2)^(2k+odd) x^(4k+2·odd+1) / ((2k+odd)! (4k+2·odd+1))."""
    terms = []
    for k in range(60):
        n = 2 * k + odd
        terms.append(
            (-1) ** k * (math.pi / 2) ** n * x ** (2 * n + 1) / (math.factorial(n) * (2 * n + 1))
        )
    return math.fsum(terms)


fresnel_cos = elementwise(lambda x: _fresnel(x, 0))
fresnel_sin = elementwise(lambda x: _fresnel(x, 1))


@elementwise
def spence(x):
    """Li₂(1 - x) = Σ (1-x)ᵏ/k² (for |1 - x| well below 1)."""
    z = 1 - x
    return math.fsum(z**k / (k * k) for k in range(1, 200))
