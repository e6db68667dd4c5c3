"""``tf.linalg.LinearOperatorCirculant``: a circulant matrix held by its spectrum (the 1-D case;
the 2-D and 3-D block-circulant operators are not written yet)."""

import numpy as _np

from .. import _core
from .._exports.linalg import matmul as _matmul
from ..dtypes import as_dtype
from ..signal import ifft
from .linear_operator import LinearOperator
from .linear_operator_util import keep_or_convert, read

__all__ = ["LinearOperatorCirculant"]


def _to_complex(x):
    """A real spectrum as complex64 (float32 and narrower) or complex128, as TensorFlow's."""
    if x.dtype.is_complex:
        return x
    return _core.cast(x, "complex128" if x.dtype.name == "float64" else "complex64")


class LinearOperatorCirculant(LinearOperator):
    """``A = F^H diag(spectrum) F``: the circulant matrix ``A[i, j] = h[(i - j) mod N]`` of the
    convolution kernel ``h = ifft(spectrum)``, in ``input_output_dtype`` (a real dtype keeps the
    real part, exact when the spectrum is Hermitian). Products go through the dense matrix.

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
        """Builds the circulant operator.

        Args:
            spectrum: A float or complex tensor (or ``Variable``) ``[B1, ..., Bb, N]``: the
                eigenvalues, the DFT of the convolution kernel.
            input_output_dtype: The operator's dtype (default complex64).
            is_non_singular: Expect no zero in the spectrum.
            is_self_adjoint: Expect a real spectrum.
            is_positive_definite: Expect a positive real spectrum.
            is_square: Must not be False.
            name: The operator's name.

        Raises:
            ValueError: for a scalar spectrum or ``is_square=False``.
        """
        self._spectrum = keep_or_convert(spectrum, name="spectrum")
        if not self._spectrum.shape:
            raise ValueError(
                f"Argument spectrum must have at least 1 dimension.  Found: {self._spectrum}"
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

    def convolution_kernel(self, name="convolution_kernel"):
        """The first column ``h = ifft(spectrum)``, in the operator's dtype.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor ``[B1, ..., Bb, N]``.
        """
        del name
        return _core.cast(ifft(_to_complex(read(self._spectrum))), self.dtype)

    def _slice_param_ndims(self):
        return {"spectrum": 1}

    def _shape(self):
        shape = [int(d) for d in self._spectrum.shape]
        return [*shape, shape[-1]]

    def _to_dense(self):
        h = self.convolution_kernel()
        n = int(h.shape[-1])
        i, j = _np.arange(n)[:, None], _np.arange(n)[None, :]
        return _core.gather(h, _core.constant(((i - j) % n).astype(_np.int32)), axis=-1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _diag_part(self):
        h = self.convolution_kernel()
        return _core.broadcast_to(h[..., :1], self._shape()[:-1])

    def _determinant(self):
        # The eigenvalues are the spectrum.
        return _core.cast(_core.reduce_prod(_to_complex(read(self._spectrum)), -1), self.dtype)
