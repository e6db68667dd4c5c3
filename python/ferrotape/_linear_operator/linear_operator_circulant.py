"""``tf.linalg.LinearOperatorCirculant``, ``LinearOperatorCirculant2D`` and
``LinearOperatorCirculant3D``: (block-)circulant matrices held by their spectrum, the
``block_depth``-dimensional DFT of the convolution kernel. The three share one base, as in
TensorFlow's ``linear_operator_circulant.py``, and differ only in ``block_depth``."""

import numpy as _np

from .. import _core
from .._exports.linalg import matmul as _matmul
from .._exports.linalg import matrix_transpose as _transpose
from ..dtypes import as_dtype
from ..signal import fft, fft2d, fft3d, ifft, ifft2d, ifft3d
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if, keep_or_convert, read

__all__ = [
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
]

_FFT = {1: fft, 2: fft2d, 3: fft3d}
_IFFT = {1: ifft, 2: ifft2d, 3: ifft3d}


def _to_complex(x):
    """A real spectrum as complex64 (float32 and narrower) or complex128, as TensorFlow's."""
    if x.dtype.is_complex:
        return x
    return _core.cast(x, "complex128" if x.dtype.name == "float64" else "complex64")


def _circulant_indices(block_shape):
    """``idx[i, j]``: the flat kernel index of ``(i - j) mod block_shape`` taken per block axis,
    for the row-major flattenings ``i`` and ``j`` of block indices (so that
    ``A[i, j] = h[idx[i, j]]``)."""
    grid = _np.indices(block_shape).reshape(len(block_shape), -1)
    offsets = (grid[:, :, None] - grid[:, None, :]) % _np.array(block_shape)[:, None, None]
    return _np.ravel_multi_index(tuple(offsets), block_shape).astype(_np.int32)


class _BaseLinearOperatorCirculant(LinearOperator):
    """The shared body: ``A = F^H diag(spectrum) F`` with ``F`` the ``block_depth``-dimensional
    DFT over the spectrum's innermost ``block_depth`` axes, flattened row-major."""

    def __init__(
        self,
        spectrum,
        block_depth,
        input_output_dtype,
        is_non_singular,
        is_self_adjoint,
        is_positive_definite,
        is_square,
        name,
    ):
        self._spectrum = keep_or_convert(spectrum, name="spectrum")
        self._block_depth = block_depth
        if len(self._spectrum.shape) < block_depth:
            raise ValueError(
                f"Argument spectrum must have at least {block_depth} "
                f"dimension{'s' if block_depth > 1 else ''}.  Found: {self._spectrum}"
            )
        if is_square is False:
            raise ValueError("A circulant operator is always square.")
        super().__init__(
            dtype=as_dtype(input_output_dtype),
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters={
                "spectrum": spectrum,
                "input_output_dtype": input_output_dtype,
                "name": name,
            },
        )

    @property
    def spectrum(self):
        """The eigenvalues (the DFT of the convolution kernel)."""
        return self._spectrum

    @property
    def block_depth(self):
        """The number of nested circulant levels: 1, 2 or 3."""
        return self._block_depth

    @property
    def block_shape(self):
        """The spectrum's innermost ``block_depth`` sizes, as a list of ints."""
        return [int(d) for d in self._spectrum.shape[-self._block_depth :]]

    def block_shape_tensor(self):
        """``block_shape`` as an int32 tensor.

        Returns:
            A 1-D int32 tensor of length ``block_depth``.
        """
        return _core.constant(_np.array(self.block_shape, _np.int32))

    def convolution_kernel(self, name="convolution_kernel"):
        """The kernel ``h``, the inverse DFT of the spectrum, in the operator's dtype (a real
        dtype keeps the real part).

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of the spectrum's shape.
        """
        del name
        kernel = _IFFT[self._block_depth](_to_complex(read(self._spectrum)))
        return _core.cast(kernel, self.dtype)

    def _slice_param_ndims(self):
        return {"spectrum": self._block_depth}

    def _batch_shape(self):
        return [int(d) for d in self._spectrum.shape[: -self._block_depth]]

    def _shape(self):
        n = int(_np.prod(self.block_shape))
        return [*self._batch_shape(), n, n]

    def _flat(self, x):
        """``x`` ``[..., *block_shape]`` with its block axes flattened row-major."""
        return _core.reshape(x, [*x.shape[: -self._block_depth], int(_np.prod(self.block_shape))])

    def _to_dense(self):
        indices = _core.constant(_circulant_indices(self.block_shape))
        return _core.gather(self._flat(self.convolution_kernel()), indices, axis=-1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        # A^-1 = F^-1 diag(1 / spectrum) F: each column of rhs, as a block, is transformed,
        # divided by the spectrum (its conjugate for A^H) and transformed back.
        columns = _transpose(_to_complex(adjoint_if(_core.convert_to_tensor(rhs), adjoint_arg)))
        blocks = _core.reshape(columns, [*columns.shape[:-1], *self.block_shape])
        spectrum = _to_complex(read(self._spectrum))
        spectrum = _core.conj(spectrum) if adjoint else spectrum
        spectrum = _core.cast(_core.expand_dims(spectrum, -1 - self._block_depth), blocks.dtype)
        solved = _IFFT[self._block_depth](_FFT[self._block_depth](blocks) / spectrum)
        return _core.cast(_transpose(self._flat(solved)), self.dtype)

    def _diag_part(self):
        h = self._flat(self.convolution_kernel())
        return _core.broadcast_to(h[..., :1], self._shape()[:-1])

    def _determinant(self):
        # The eigenvalues are the spectrum.
        spectrum = self._flat(_to_complex(read(self._spectrum)))
        return _core.cast(_core.reduce_prod(spectrum, -1), self.dtype)

    def _log_abs_determinant(self):
        magnitudes = _core.abs(self._flat(_to_complex(read(self._spectrum))))
        return _core.cast(_core.reduce_sum(_core.log(magnitudes), -1), self.dtype)


class LinearOperatorCirculant(_BaseLinearOperatorCirculant):
    """``A = F^H diag(spectrum) F``: the circulant matrix ``A[i, j] = h[(i - j) mod N]`` of the
    convolution kernel ``h = ifft(spectrum)``, in ``input_output_dtype`` (a real dtype keeps the
    real part, exact when the spectrum is Hermitian). Products go through the dense matrix,
    solves through the spectrum.

    >>> import ferrotape as ft
    >>> c = ft.linalg.LinearOperatorCirculant(
    ...     ft.constant([6.0, 1.0, 1.0]), input_output_dtype=ft.float32)
    >>> c.to_dense().numpy().round(4)
    array([[2.6667, 1.6667, 1.6667],
           [1.6667, 2.6667, 1.6667],
           [1.6667, 1.6667, 2.6667]], dtype=float32)
    """

    def __init__(
        self,
        spectrum,
        input_output_dtype="complex64",
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorCirculant",
    ):
        """Builds the operator.

        Args:
            spectrum: A float or complex tensor (or ``Variable``) ``[B1, ..., Bb, N]``:
                the eigenvalues, the DFT of the convolution kernel.
            input_output_dtype: The operator's dtype (default complex64).
            is_non_singular: Expect no zero in the spectrum.
            is_self_adjoint: Expect a real spectrum.
            is_positive_definite: Expect a positive real spectrum.
            is_square: Must not be False.
            name: The operator's name.

        Raises:
            ValueError: for a spectrum of rank below 1 or ``is_square=False``.
        """
        super().__init__(
            spectrum,
            1,
            input_output_dtype,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )


class LinearOperatorCirculant2D(_BaseLinearOperatorCirculant):
    """A block-circulant operator with circulant blocks, ``N = N0 * N1`` square: the 2-D
    circular convolution with the kernel ``h = ifft2d(spectrum)`` of a signal flattened row-major,
    ``A[(i0, i1), (j0, j1)] = h[(i0 - j0) mod N0, (i1 - j1) mod N1]``, in ``input_output_dtype``
    (a real dtype keeps the real part, exact when the spectrum is Hermitian). Its eigenvalues
    are the spectrum. Products go through the dense matrix, solves through the spectrum.

    >>> import ferrotape as ft
    >>> c = ft.linalg.LinearOperatorCirculant2D(
    ...     ft.constant([[4.0, 0.0], [0.0, 0.0]]), input_output_dtype=ft.float32)
    >>> c.to_dense().numpy()
    array([[1., 1., 1., 1.],
           [1., 1., 1., 1.],
           [1., 1., 1., 1.],
           [1., 1., 1., 1.]], dtype=float32)
    """

    def __init__(
        self,
        spectrum,
        input_output_dtype="complex64",
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorCirculant2D",
    ):
        """Builds the operator.

        Args:
            spectrum: A float or complex tensor (or ``Variable``) ``[B1, ..., Bb, N0, N1]``:
                the eigenvalues, the 2-D DFT of the convolution kernel.
            input_output_dtype: The operator's dtype (default complex64).
            is_non_singular: Expect no zero in the spectrum.
            is_self_adjoint: Expect a real spectrum.
            is_positive_definite: Expect a positive real spectrum.
            is_square: Must not be False.
            name: The operator's name.

        Raises:
            ValueError: for a spectrum of rank below 2 or ``is_square=False``.
        """
        super().__init__(
            spectrum,
            2,
            input_output_dtype,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )


class LinearOperatorCirculant3D(_BaseLinearOperatorCirculant):
    """A block-circulant operator with block-circulant blocks with circulant blocks,
    ``N = N0 * N1 * N2`` square: the 3-D circular convolution with the kernel
    ``h = ifft3d(spectrum)`` of a signal flattened row-major,
    ``A[(i0, i1, i2), (j0, j1, j2)] = h[(i0 - j0) mod N0, (i1 - j1) mod N1, (i2 - j2) mod N2]``,
    in ``input_output_dtype`` (a real dtype keeps the real part, exact when the spectrum is
    Hermitian). Its eigenvalues are the spectrum. Products go through the dense matrix, solves
    through the spectrum.

    >>> import ferrotape as ft
    >>> c = ft.linalg.LinearOperatorCirculant3D(
    ...     ft.ones([1, 1, 2]), input_output_dtype=ft.float32)
    >>> c.to_dense().numpy()
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """

    def __init__(
        self,
        spectrum,
        input_output_dtype="complex64",
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorCirculant3D",
    ):
        """Builds the operator.

        Args:
            spectrum: A float or complex tensor (or ``Variable``) ``[B1, ..., Bb, N0, N1, N2]``:
                the eigenvalues, the 3-D DFT of the convolution kernel.
            input_output_dtype: The operator's dtype (default complex64).
            is_non_singular: Expect no zero in the spectrum.
            is_self_adjoint: Expect a real spectrum.
            is_positive_definite: Expect a positive real spectrum.
            is_square: Must not be False.
            name: The operator's name.

        Raises:
            ValueError: for a spectrum of rank below 3 or ``is_square=False``.
        """
        super().__init__(
            spectrum,
            3,
            input_output_dtype,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )
