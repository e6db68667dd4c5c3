"""``ft.GradientTape``: records operations for automatic differentiation.

The engine (recording, the backward sweep, Jacobians) is Rust; this class adds what is easier to
say in Python: nested sources and targets, the ``with`` block, and TensorFlow's error behaviour.

>>> import ferrotape as ft
>>> x = ft.constant(3.0)
>>> with ft.GradientTape() as g:
...     g.watch(x)
...     y = x * x
>>> float(g.gradient(y, x))  # dy/dx = 2x
6.0
"""

import contextlib
import enum
import warnings

from . import _core, nest

_LEAVES = (_core.Tensor, _core.Variable)
_ONE_SET_ONLY = (
    "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)"
)


class UnconnectedGradients(enum.Enum):
    """What ``gradient()`` returns for sources the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def _zero_for_unconnected(value):
    return UnconnectedGradients(value) is UnconnectedGradients.ZERO


class GradientTape:
    """Record operations for automatic differentiation.

    Operations run inside the ``with`` block are recorded when one of their inputs is watched:
    trainable Variables are watched when read (unless ``watch_accessed_variables=False``),
    other tensors through ``watch()``. ``gradient()`` then computes the gradient of a target
    with respect to sources. A non-persistent tape allows one ``gradient()`` or ``jacobian()``
    call and frees what it recorded as that call goes; a persistent one allows many and frees
    its record when it is deleted. Tapes nest: a gradient computed inside an outer tape's block
    is recorded by the outer tape, which gives higher derivatives.
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._core = _core.Tape(persistent, watch_accessed_variables)
        self._recording = False
        self._entered = False

    def __enter__(self):
        if self._recording:
            raise ValueError(
                "Tape is still recording, This can happen if you try to re-enter an "
                "already-active tape."
            )
        self._core.push()
        self._recording = True
        self._entered = True
        return self

    def __exit__(self, typ, value, traceback):
        if self._recording:
            self._core.pop()
            self._recording = False

    def _begin_differentiation(self):
        if not self._entered:
            raise RuntimeError(_ONE_SET_ONLY)
        if self._recording and not self._persistent:
            # As in TensorFlow: a non-persistent tape stops recording when differentiated.
            self._core.pop()
            self._recording = False

    def _check_pfor(self, experimental_use_pfor):
        if not experimental_use_pfor and not self._persistent:
            raise RuntimeError(
                "GradientTape must be created with persistent=True to compute the jacobian "
                "with experimental_use_pfor set to False."
            )

    def watch(self, tensor):
        """Ensures ``tensor`` (a tensor, a variable, or a nest of them) is traced by this tape."""
        for t in nest.flatten(tensor):
            if not self._core.watch(t):
                warnings.warn(
                    "The dtype of the watched tensor must be floating (e.g. tf.float32), "
                    f"got {t.dtype!r}",
                    stacklevel=2,
                )

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stops recording operations on this tape."""
        if not self._recording:
            if not self._entered:
                raise RuntimeError("Trying to stop recording a tape which is not recording.")
            raise ValueError("Tape is not recording.")
        self._core.set_paused(True)
        try:
            yield
        finally:
            self._core.set_paused(False)

    def reset(self):
        """Clears everything recorded and watched so far (the block keeps recording)."""
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._core.reset()

    def watched_variables(self):
        """The variables this tape watched, in the order they were created."""
        return self._core.watched_variables()

    def gradient(
        self,
        target,
        sources,
        output_gradients=None,
        unconnected_gradients=UnconnectedGradients.NONE,
    ):
        """The gradient of ``target`` (summed over its elements, and over a list of targets)
        with respect to ``sources``, in the structure of ``sources``. ``output_gradients``
        weights the target (a vector-Jacobian product). Sources the target does not depend on
        give ``None``, or zeros with ``unconnected_gradients=UnconnectedGradients.ZERO``."""
        self._begin_differentiation()
        single_source = type(sources) in _LEAVES
        flat_sources = [sources] if single_source else nest.flatten(sources)
        flat_targets = [target] if type(target) in _LEAVES else nest.flatten(target)
        flat_seeds = None if output_gradients is None else nest.flatten(output_gradients)
        grads = self._core.gradient(flat_targets, flat_sources, flat_seeds)
        if _zero_for_unconnected(unconnected_gradients):
            grads = [
                _core.zeros_like(s) if g is None else g
                for g, s in zip(grads, flat_sources, strict=True)
            ]
        if single_source:
            return grads[0]
        return nest.pack_sequence_as(sources, grads)

    def jacobian(
        self,
        target,
        sources,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        """The Jacobian of ``target`` with respect to each source: shape
        ``target.shape + source.shape``. ``None`` for an unconnected source (or zeros)."""
        del parallel_iterations  # One path serves all.
        self._check_pfor(experimental_use_pfor)
        self._begin_differentiation()
        flat_sources = nest.flatten(sources)
        target = _core.convert_to_tensor(target)
        jacobians = self._core.jacobian(target, flat_sources)
        if _zero_for_unconnected(unconnected_gradients):
            jacobians = [
                _core.zeros(list(target.shape) + list(s.shape), dtype=s.dtype) if j is None else j
                for j, s in zip(jacobians, flat_sources, strict=True)
            ]
        return nest.pack_sequence_as(sources, jacobians)

    def batch_jacobian(
        self,
        target,
        source,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        """Per-example Jacobians, shape ``(batch,) + target.shape[1:] + source.shape[1:]``,
        assuming example ``i`` of the target depends only on example ``i`` of the source.
        Zeros where the target does not depend on the source."""
        del unconnected_gradients, parallel_iterations
        self._check_pfor(experimental_use_pfor)
        self._begin_differentiation()
        return self._core.batch_jacobian(_core.convert_to_tensor(target), source)
