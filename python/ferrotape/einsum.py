"""``einsum`` and ``tensordot``, lowered to transpose, reshape, diagonal gathers, reductions
and one batched matmul per pair of operands, so every path is differentiable."""

import string

from . import _core


def _diagonal(x, letters):
    """Takes diagonals over repeated letters of one operand ('ii' → 'i')."""
    while True:
        repeated = next((c for c in letters if letters.count(c) > 1), None)
        if repeated is None:
            return x, letters
        i = letters.index(repeated)
        j = letters.index(repeated, i + 1)
        n = x.shape[i]
        rest = [k for k in range(len(letters)) if k not in (i, j)]
        x = _core.transpose(x, rest + [i, j])
        x = _core.reshape(x, [x.shape[k] for k in range(len(rest))] + [n * n])
        x = _core.gather(x, list(range(0, n * n, n + 1)), axis=len(rest))
        letters = "".join(letters[k] for k in rest) + repeated


def _sum_out(x, letters, keep):
    """Sums over letters not in ``keep``."""
    axes = [k for k, c in enumerate(letters) if c not in keep]
    if axes:
        x = _core.reduce_sum(x, axes)
        letters = "".join(c for c in letters if c in keep)
    return x, letters


def _contract(a, la, b, lb, keep):
    """Contracts two operands; the result carries the letters of ``keep`` they hold."""
    a, la = _sum_out(a, la, keep + lb)
    b, lb = _sum_out(b, lb, keep + la)
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    size = dict(zip(la, a.shape, strict=True)) | dict(zip(lb, b.shape, strict=True))

    def prod(cs):
        n = 1
        for c in cs:
            n *= size[c]
        return n

    a = _core.transpose(a, [la.index(c) for c in batch + left + summed])
    b = _core.transpose(b, [lb.index(c) for c in batch + summed + right])
    a = _core.reshape(a, [prod(batch), prod(left), prod(summed)])
    b = _core.reshape(b, [prod(batch), prod(summed), prod(right)])
    out = _core.linalg.matmul(a, b)
    out = _core.reshape(out, [size[c] for c in batch + left + right])
    return out, "".join(batch + left + right)


def _expand_ellipsis(spec, rank, fill):
    if "..." not in spec:
        return spec
    return spec.replace("...", fill[: rank - (len(spec) - 3)])


def einsum(equation, *inputs, **kwargs):
    """Einstein summation over one or more operands (``'ij,jk->ik'``, ``'bxby->bxy'``, …)."""
    del kwargs
    if not isinstance(equation, str):
        raise TypeError(
            "einsum: the first argument must be the equation, a string such as 'ij,jk->ik'; "
            f"received {type(equation).__name__}"
        )
    inputs = [_core.convert_to_tensor(x) for x in inputs]
    equation = equation.replace(" ", "")
    lhs, _, out = equation.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(inputs):
        raise ValueError(f"einsum: {len(specs)} operand specs for {len(inputs)} inputs")
    fill = "".join(c for c in string.ascii_uppercase if c not in equation)
    specs = [_expand_ellipsis(s, x.ndim, fill) for s, x in zip(specs, inputs, strict=True)]
    if "->" not in equation:
        letters = "".join(specs)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    else:
        width = max(
            (
                x.ndim - (len(s) - 3)
                for s, x in zip(lhs.split(","), inputs, strict=True)
                if "..." in s
            ),
            default=0,
        )
        out = out.replace("...", fill[:width])
    operands = [_diagonal(x, s) for x, s in zip(inputs, specs, strict=True)]
    x, lx = operands[0]
    for k, (y, ly) in enumerate(operands[1:], start=1):
        later = "".join(s for _, s in operands[k + 1 :])
        x, lx = _contract(x, lx, y, ly, out + later)
    x, lx = _sum_out(x, lx, out)
    if lx != out:
        x = _core.transpose(x, [lx.index(c) for c in out])
    return x


def tensordot(a, b, axes, name=None):
    """Sums the products of ``a`` and ``b`` over ``axes`` (an int N: a's last N with b's
    first N; or a pair of axis lists)."""
    del name
    a, b = _core.convert_to_tensor(a), _core.convert_to_tensor(b)
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ValueError(
                f"tensordot: axes={axes} must be in [0, {min(a.ndim, b.ndim)}] for inputs of "
                f"ranks {a.ndim} and {b.ndim}"
            )
        a_axes = list(range(a.ndim - axes, a.ndim))
        b_axes = list(range(axes))
    else:
        a_axes, b_axes = ([axes_] if isinstance(axes_, int) else list(axes_) for axes_ in axes)
    a_axes = [ax % a.ndim for ax in a_axes]
    b_axes = [ax % b.ndim for ax in b_axes]
    letters = iter(string.ascii_lowercase)
    la = [next(letters) for _ in range(a.ndim)]
    lb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(a_axes, b_axes, strict=True):
        lb[j] = la[i]
    out = [c for k, c in enumerate(la) if k not in a_axes]
    out += [c for k, c in enumerate(lb) if k not in b_axes]
    return einsum(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", a, b)
