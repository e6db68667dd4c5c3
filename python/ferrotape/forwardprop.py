"""``ft.autodiff.ForwardAccumulator``: forward-mode autodiff (Jacobian-vector products).

The tangents are computed in Rust as the operations run (``ferrotape_autodiff::tape::forward``):
every operation with a tangent-carrying input gets its outputs' tangents from its own backward
by the "double vjp" (the jvp is the transpose of the vjp), so every differentiable operation has
a jvp. This class adds what TensorFlow's Python class does: nests, the argument checks and the
``with`` block.

>>> import ferrotape as ft
>>> x = ft.constant(3.0)
>>> with ft.autodiff.ForwardAccumulator(x, ft.constant(1.0)) as acc:
...     y = x * x
>>> float(acc.jvp(y))  # dy/dx * 1 = 2x
6.0
"""

from . import _core, nest
from .tape import UnconnectedGradients

_WHO = "ForwardAccumulator"


def _is_primal(value):
    return isinstance(value, (_core.Tensor, _core.Variable))


def _shape_text(shape):
    return str(tuple(shape))


class ForwardAccumulator:
    """Computes Jacobian-vector products ("JVP"s) using forward-mode autodiff.

    While the accumulator is active (inside its ``with`` block), every operation on a tensor
    that carries a tangent computes the tangent of its result: for ``y = f(primals)``,
    ``acc.jvp(y)`` is ``J_f(primals) @ tangents``, the derivative of ``y`` along the direction
    ``tangents``. Forward mode pays off for functions with few inputs and many outputs, where
    reverse mode (``GradientTape``) would need one backward pass per output.

    Accumulators and tapes nest in the order they were entered: a ``GradientTape`` entered
    before an accumulator records its jvp computation, so ``tape.gradient(acc.jvp(y), x)`` is
    a Hessian-vector product; an accumulator sees the backward pass of a tape inside it, so
    ``acc.jvp(tape.gradient(y, x))`` is one too (forward over reverse); an outer accumulator
    sees an inner one's jvps (``outer.jvp(inner.jvp(y))`` is a second derivative), but not the
    other way round. A ``ft.function`` called while an accumulator is active runs eagerly, so
    that the accumulator sees its operations.

    Each operation's jvp is derived from its backward (the "double vjp": the jvp is the
    transpose of the vjp), so it costs about two backward steps per operation. A tangent is
    kept as long as its tensor lives (a variable's as long as the accumulator).

    >>> import ferrotape as ft
    >>> x = ft.constant([1.0, 2.0])
    >>> with ft.autodiff.ForwardAccumulator(x, ft.constant([1.0, 0.0])) as acc:
    ...     y = ft.reduce_sum(x**3.0)
    >>> float(acc.jvp(y))  # 3 * x[0]**2
    3.0

    A Hessian-vector product, forward over reverse:

    >>> v = ft.Variable([1.0, 2.0])
    >>> with ft.autodiff.ForwardAccumulator(v, ft.constant([1.0, 0.0])) as acc:
    ...     with ft.GradientTape() as tape:
    ...         y = ft.reduce_sum(v**3.0)
    ...     backward = tape.gradient(y, v)
    >>> acc.jvp(backward).numpy().tolist()  # H @ [1, 0] = [6 * v[0], 0]
    [6.0, 0.0]

    Args:
        primals: A tensor or variable, or a nest of them, to watch.
        tangents: A tensor (or value convertible to one) per primal, in the same nest, with
            the primal's shape: the vector the Jacobian multiplies.

    Raises:
        ValueError: If the nests differ, a primal appears twice, or a tangent's shape or
            dtype differs from its primal's.
        TypeError: If a primal is not a tensor or variable, or the nests' sequence types
            differ.
    """

    def __init__(self, primals, tangents):
        self._accumulator = _core.ForwardAccumulatorCore()
        self._recording = False
        seen = set()
        for primal in nest.flatten(primals):
            if id(primal) in seen:
                raise ValueError(
                    f"Tensor {primal!r} was specified as a primal multiple times. This may "
                    "indicate an error. If it was intended, please sum the corresponding "
                    "tangents."
                )
            seen.add(id(primal))
        nest.map_for(self._watch, (primals, tangents), nest.SEQUENCES, True, _WHO)

    def _watch(self, primal, tangent):
        if not _is_primal(primal):
            raise TypeError(
                f"{_WHO}: primals must be Tensors or Variables, received "
                f"{type(primal).__name__}: {primal!r}"
            )
        tangent = _convert_tangent(primal, tangent)
        if tuple(tangent.shape) != tuple(primal.shape):
            raise ValueError(
                f"{_WHO}: tangent was expected to be of shape {_shape_text(primal.shape)} "
                f"(its primal's) but is instead of shape {_shape_text(tangent.shape)}"
            )
        self._accumulator.watch(primal, tangent)

    def __enter__(self):
        if self._recording:
            raise ValueError("Accumulator is already recording.")
        self._accumulator.push()
        self._recording = True
        return self

    def __exit__(self, typ, value, traceback):
        if self._recording:
            self._accumulator.pop()
            self._recording = False

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """Fetches the Jacobian-vector products computed for ``primals``.

        Computes nothing: the tangents were computed as the operations ran inside the
        accumulator's ``with`` block (a tensor computed outside it has none). It may be called
        any number of times, inside the block or after it.

        Args:
            primals: A tensor or variable, or a nest of them.
            unconnected_gradients: ``"none"`` (the default: None for a tensor without a
                tangent) or ``"zero"`` (zeros of its shape); a string or an
                ``UnconnectedGradients`` member.

        Returns:
            The tangents, in the structure of ``primals``, each with its primal's shape and
            dtype (or None).

        Raises:
            TypeError: If a leaf of ``primals`` is not a tensor or variable.
            ValueError: If ``unconnected_gradients`` is not ``"none"`` or ``"zero"``.
            UnimplementedError: If an operation's tangent could not be computed (its
                derivative has no derivative, as for ``igamma``'s in ``a`` at second order).
                TensorFlow raises from the operation itself; ferrotape's operations have
                already returned, so the accumulator keeps the first failure and raises it here.
        """
        zero = UnconnectedGradients(unconnected_gradients) == UnconnectedGradients.ZERO

        def fetch(primal):
            if not _is_primal(primal):
                raise TypeError(
                    f"{_WHO}.jvp: expected Tensors or Variables, received "
                    f"{type(primal).__name__}: {primal!r}"
                )
            result = self._accumulator.jvp(primal)
            if result is None and zero:
                result = _core.zeros(primal.shape, primal.dtype)
            return result

        return nest.map_structure(fetch, primals)


def _convert_tangent(primal, tangent):
    """The tangent as a tensor of the primal's dtype; TensorFlow's error for another dtype."""
    if isinstance(tangent, (_core.Tensor, _core.Variable)):
        if tangent.dtype != primal.dtype:
            raise ValueError(
                f"{_WHO}: tangent must have its primal's dtype {primal.dtype.name}, "
                f"received dtype {tangent.dtype.name}"
            )
        return _core.convert_to_tensor(tangent)
    return _core.convert_to_tensor(tangent, dtype=primal.dtype)


__all__ = ["ForwardAccumulator"]
