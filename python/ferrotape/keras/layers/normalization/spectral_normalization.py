"""``SpectralNormalization`` (Keras 3's
``keras.src.layers.normalization.spectral_normalization``).

>>> import numpy as np, ferrotape as ft
>>> ft.keras.utils.set_random_seed(1)  # one power iteration from a random start: seeded
>>> layer = ft.keras.layers.SpectralNormalization(ft.keras.layers.Dense(4))
>>> _ = layer(np.ones((2, 3), np.float32), training=True)
>>> sigma = np.linalg.svd(layer.layer.kernel.numpy(), compute_uv=False)[0]
>>> bool(sigma < 1.5)
True
"""

from .... import _core, linalg
from ... import initializers
from ..core.wrapper import Wrapper
from ..layer_helpers import _is_int


def _unit(x):
    # Keras's normalize(x, axis=None): x / max(||x||, 1e-7).
    return x * _core.rsqrt(_core.maximum(_core.reduce_sum(_core.square(x)), 1e-14))


class SpectralNormalization(Wrapper):
    """Keeps the wrapped layer's ``kernel`` (or ``embeddings``) at spectral norm about 1, a
    GAN discriminator's Lipschitz constraint (Miyato et al. 2018): on each training call,
    ``power_iterations`` steps of power iteration refine ``vector_u`` (the top singular
    vector estimate, a non-trainable ``[1, out]`` weight), and the kernel is divided by its
    estimated largest singular value ``sigma = v W u^T`` (assigned, as Keras does, so the
    gradient is that of the layer at the normalised kernel). Inference uses the kernel as
    is."""

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if not _is_int(power_iterations) or power_iterations <= 0:
            raise ValueError(
                "`power_iterations` should be greater than zero. Received: "
                f"`power_iterations={power_iterations}`"
            )
        self.power_iterations = int(power_iterations)

    def build(self, input_shape):
        super().build(input_shape)
        if hasattr(self.layer, "kernel"):
            kernel = self.layer.kernel
        elif hasattr(self.layer, "embeddings"):
            kernel = self.layer.embeddings
        else:
            raise ValueError(
                f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'"
            )
        # Tracked here too (first, as Keras lists it): the wrapped layer's variable, no copy.
        self.kernel = kernel
        self.kernel_shape = tuple(kernel.shape.as_list())
        self.vector_u = self.add_weight(
            shape=(1, self.kernel_shape[-1]),
            initializer=initializers.TruncatedNormal(stddev=0.02),
            trainable=False,
            name="vector_u",
        )

    def normalized_weights(self):
        """The refined ``vector_u`` and the kernel divided by its estimated spectral norm.

        Returns:
            ``(vector_u, kernel)`` as tensors (not yet assigned).
        """
        weights = _core.reshape(self.kernel, [-1, self.kernel_shape[-1]])
        u = _core.convert_to_tensor(self.vector_u)
        for _ in range(self.power_iterations):
            v = _unit(linalg.matmul(u, weights, transpose_b=True))
            u = _unit(linalg.matmul(v, weights))
        u, v = _core.stop_gradient(u), _core.stop_gradient(v)
        sigma = linalg.matmul(linalg.matmul(v, weights), u, transpose_b=True)
        kernel = _core.reshape(
            _core.reshape(self.kernel, [-1]) / _core.reshape(sigma, []), self.kernel_shape
        )
        return u, kernel

    def call(self, inputs, training=False):
        if training and bool(_core.reduce_any(_core.not_equal(self.kernel, 0.0))):
            u, kernel = self.normalized_weights()
            # In the variables' own dtypes: a mixed-precision call reads (and so computes) them
            # in float16, and a variable's `dtype` there is the read's (as Keras's is).
            self.vector_u.assign(_core.cast(u, self.variable_dtype))
            self.kernel.assign(_core.cast(kernel, self.layer.variable_dtype))
        return self.layer(inputs)

    def get_config(self):
        return {**super().get_config(), "power_iterations": self.power_iterations}
