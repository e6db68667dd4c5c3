"""``einsum`` and ``tensordot``, lowered to transpose, reshape, diagonal gathers, reductions
and one batched matmul per pair of operands, so every path is differentiable."""

import reprlib
import string

import numpy as np

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


def _check_subscripts(equation, part, what):
    """Letters and at most one '...' in one operand's (or the output's) subscripts."""
    stripped = part.replace("...", "", 1)
    bad = sorted({c for c in stripped if c not in string.ascii_letters})
    if bad:
        raise ValueError(
            f"einsum: invalid subscript {bad[0]!r} in the {what} of equation {equation!r}; "
            f"expected letters, ',', '->' and at most one '...' per operand"
        )
    if len(set(stripped)) != len(stripped) and what == "output":
        raise ValueError(f"einsum: the output of equation {equation!r} repeats a subscript")


def _parse(equation, inputs):
    """The operands' subscripts with '...' spelled out as letters (right-aligned, as numpy
    broadcasts), and the output's; every rank and every dimension checked."""
    compact = equation.replace(" ", "")
    if compact.count("->") > 1:
        raise ValueError(f"einsum: equation {equation!r} has more than one '->'")
    lhs, arrow, out = compact.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(inputs):
        raise ValueError(
            f"einsum: equation {equation!r} has {len(specs)} operand subscripts but "
            f"{len(inputs)} inputs were given"
        )
    widths = []
    for k, (spec, x) in enumerate(zip(specs, inputs, strict=True)):
        _check_subscripts(equation, spec, f"subscripts of operand {k}")
        named = len(spec.replace("...", "", 1))
        if ("..." in spec and x.ndim < named) or ("..." not in spec and x.ndim != named):
            raise ValueError(
                f"einsum: operand {k} has rank {x.ndim} (shape {list(x.shape)}) but its "
                f"subscripts {spec!r} in equation {equation!r} name {named} axes"
            )
        widths.append(x.ndim - named if "..." in spec else 0)
    width = max(widths, default=0)
    fill = "".join(c for c in string.ascii_uppercase + string.ascii_lowercase if c not in compact)
    ellipsis = fill[:width]
    specs = [s.replace("...", ellipsis[width - w :]) for s, w in zip(specs, widths, strict=True)]
    used = "".join(specs)
    if arrow:
        _check_subscripts(equation, out, "output")
        if width and "..." not in out and any("..." in s for s in lhs.split(",")):
            raise ValueError(
                f"einsum: the output of equation {equation!r} needs '...' for the broadcast "
                f"dimensions of its inputs"
            )
        out = out.replace("...", ellipsis)
        missing = sorted(set(out) - set(used))
        if missing:
            raise ValueError(
                f"einsum: output subscript {missing[0]!r} of equation {equation!r} appears in "
                f"no input"
            )
    else:
        out = ellipsis + "".join(
            sorted(c for c in set(used) if c not in ellipsis and used.count(c) == 1)
        )
    return specs, out, _sizes(equation, specs, inputs, ellipsis)


def _sizes(equation, specs, inputs, ellipsis):
    """The size of every subscript; '...' dimensions of size 1 broadcast, others must agree."""
    sizes = {}
    for k, (spec, x) in enumerate(zip(specs, inputs, strict=True)):
        for c, n in zip(spec, x.shape, strict=True):
            known = sizes.get(c)
            if known is None or known == n or (c in ellipsis and 1 in (known, n)):
                sizes[c] = n if known in (None, 1) else known
                continue
            what = "a '...' dimension" if c in ellipsis else f"subscript {c!r}"
            raise ValueError(
                f"einsum: {what} of equation {equation!r} has size {known} in one place and {n} "
                f"in operand {k} (shape {list(x.shape)})"
            )
    return sizes


def einsum(equation, *inputs, **kwargs):
    """Einstein summation: multiplies the operands and sums over the letters the output omits.

    Supports TF's and numpy's subscripts (``'ij,jk->ik'``, ``'bij->bji'``, ``'ii->i'``,
    ``'...ij,...jk->...ik'``); without ``->`` the output holds the letters seen once, sorted.

    Args:
        equation: The subscripts, a string.
        *inputs: One or more tensors, one per comma-separated operand.
        **kwargs: ``name`` and ``optimize``, ignored; anything else is a TypeError.

    Returns:
        The resulting tensor.

    Raises:
        ValueError: for malformed subscripts or operands whose ranks or sizes do not fit them.
        TypeError: if ``equation`` is not a string, or for unknown keyword arguments.

    Gradient: for each operand, the einsum of the upstream gradient with the other operands.

    >>> import ferrotape as ft
    >>> ft.einsum("ij,j->i", [[1.0, 2.0], [3.0, 4.0]], [1.0, 1.0]).numpy().tolist()
    [3.0, 7.0]
    """
    if not isinstance(equation, str):
        # Checked before the inputs are converted (TensorFlow: "'Tensor' object has no
        # attribute 'replace'").
        raise TypeError(
            "einsum: the first argument must be the equation, a string such as 'ij,jk->ik'; "
            f"received {type(equation).__name__}. Call einsum(equation, *inputs)"
        )
    kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"einsum: unexpected arguments {sorted(kwargs)}")
    if not inputs:
        raise ValueError("einsum: expected at least one input tensor after the equation")
    inputs = [_core.convert_to_tensor(x) for x in inputs]
    specs, out, sizes = _parse(equation, inputs)
    inputs = [_broadcast(x, s, sizes) for x, s in zip(inputs, specs, strict=True)]
    operands = [_diagonal(x, s) for x, s in zip(inputs, specs, strict=True)]
    x, lx = operands[0]
    for k, (y, ly) in enumerate(operands[1:], start=1):
        later = "".join(s for _, s in operands[k + 1 :])
        x, lx = _contract(x, lx, y, ly, out + later)
    x, lx = _sum_out(x, lx, out)
    if lx != out:
        x = _core.transpose(x, [lx.index(c) for c in out])
    return x


def _broadcast(x, spec, sizes):
    """``x`` with its size-1 '...' dimensions broadcast to the other operands' sizes."""
    shape = [sizes[c] for c in spec]
    return x if list(x.shape) == shape else _core.broadcast_to(x, shape)


def tensordot(a, b, axes, name=None):
    """Sums the products of ``a`` and ``b`` over the given axes (a generalized matrix product).

    Args:
        a: A tensor.
        b: A tensor of ``a``'s dtype.
        axes: An int N (``a``'s last N axes with ``b``'s first N), or a pair of equally long
            axis lists ``[a_axes, b_axes]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor with ``a``'s free axes followed by ``b``'s.

    Raises:
        ValueError: if ``axes`` is out of range or the contracted sizes differ.

    Gradient: as ``einsum``'s.

    >>> import ferrotape as ft
    >>> ft.tensordot(ft.constant([1.0, 2.0]), ft.constant([3.0, 4.0]), axes=1).numpy()
    np.float32(11.0)
    """
    del name
    a, b = _core.convert_to_tensor(a), _core.convert_to_tensor(b)
    a_axes, b_axes = _tensordot_axes(a, b, axes)
    letters = iter(string.ascii_lowercase)
    la = [next(letters) for _ in range(a.ndim)]
    lb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(a_axes, b_axes, strict=True):
        lb[j] = la[i]
    out = [c for k, c in enumerate(la) if k not in a_axes]
    out += [c for k, c in enumerate(lb) if k not in b_axes]
    return einsum(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", a, b)


def _tensordot_axes(a, b, axes):
    """tensordot's ``axes`` as two lists of non-negative axes, checked."""
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ValueError(
                f"tensordot: axes={axes} must be in [0, {min(a.ndim, b.ndim)}] for inputs of "
                f"ranks {a.ndim} and {b.ndim}"
            )
        return list(range(a.ndim - axes, a.ndim)), list(range(axes))
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError(
            f"tensordot: axes must be an int or a pair of axis lists, received "
            f"axes={reprlib.repr(axes)}"
        )
    pair = [[ax] if isinstance(ax, (int, np.integer)) else list(ax) for ax in axes]
    if len(pair[0]) != len(pair[1]):
        raise ValueError(
            f"tensordot: the two axis lists must have the same length, received "
            f"axes={reprlib.repr(axes)}"
        )
    for axes_, x, name in zip(pair, (a, b), "ab", strict=True):
        for ax in axes_:
            if not -x.ndim <= ax < x.ndim:
                raise ValueError(
                    f"tensordot: axis {ax} is out of range for `{name}` of rank {x.ndim}, "
                    f"received axes={reprlib.repr(axes)}"
                )
    a_axes, b_axes = [ax % a.ndim for ax in pair[0]], [ax % b.ndim for ax in pair[1]]
    if len(set(a_axes)) != len(a_axes) or len(set(b_axes)) != len(b_axes):
        raise ValueError(f"tensordot: an axis is repeated in axes={axes!r}")
    for i, j in zip(a_axes, b_axes, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"tensordot: axis {i} of `a` (size {a.shape[i]}) and axis {j} of `b` (size "
                f"{b.shape[j]}) must have the same size; received shapes {list(a.shape)} and "
                f"{list(b.shape)}"
            )
    return a_axes, b_axes
