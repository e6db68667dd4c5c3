"""``AugMix`` (Keras 3's ``keras.src.layers.preprocessing.image_preprocessing.aug_mix``).

>>> import ferrotape as ft
>>> ft.keras.layers.AugMix(seed=1)(ft.ones([2, 8, 8, 3]) * 100.0).shape
TensorShape([2, 8, 8, 3])
"""

from ..... import _core
from .... import random as keras_random
from .base_image_preprocessing_layer import BaseImagePreprocessingLayer, _is_number, base_factor
from .rand_augment import _NAMES, apply_augmentation, draw_augmentation, make_augmentations

# Without all_ops, the colour operations are left out.
_BASIC = (
    "random_shear",
    "random_translation",
    "random_rotation",
    "random_posterization",
    "solarization",
    "auto_contrast",
    "equalization",
)


class AugMix(BaseImagePreprocessingLayer):
    """In training, mixes each batch with augmented versions of itself: ``num_chains`` chains
    each apply up to ``chain_depth`` augmentations (each step picks one at random, or none),
    the chains' results are averaged with Dirichlet(``alpha``) weights, and the average is
    mixed with the original by a Beta(``alpha``, ``alpha``) weight ``w``:
    ``w * images + (1 - w) * mixed``, clipped to ``value_range``. Keras picks the steps with
    Python's unseeded ``random``; ferrotape draws them from the layer's seed.

    Args:
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        num_chains: The number of chains (default 3).
        chain_depth: The most augmentations per chain (default 3).
        factor: A number ``f`` in ``[0, 1]`` (strength range ``(0, f)``; default 0.3) or a
            pair.
        alpha: The Dirichlet and Beta parameter, positive (default 1.0).
        all_ops: Also use the colour operations (brightness, colour degeneration, contrast,
            sharpness).
        interpolation: ``"bilinear"`` (the default) or ``"nearest"``.
        seed: An int (reproducible draws) or None.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, 3]`` or a single image. Output shape: the same.
    """

    _COMPUTED_ON_HOST_IN_TRACES = True  # it reads its draws into Python (see the base)

    def __init__(
        self,
        value_range=(0, 255),
        num_chains=3,
        chain_depth=3,
        factor=0.3,
        alpha=1.0,
        all_ops=True,
        interpolation="bilinear",
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        for what, value in (("num_chains", num_chains), ("chain_depth", chain_depth)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"AugMix: {what} must be a positive int. Received: {value!r}")
        if not _is_number(alpha) or alpha <= 0:
            raise ValueError(f"AugMix: alpha must be a positive number. Received: {alpha!r}")
        self.value_range = tuple(value_range)
        self.num_chains, self.chain_depth = num_chains, chain_depth
        self.factor = base_factor(self, factor, 0.0, 1.0)
        self.alpha = float(alpha)
        self.all_ops = bool(all_ops)
        self.interpolation = interpolation
        names = [n for n in _NAMES if n in _BASIC] if not all_ops else list(_NAMES)
        self._augmentations = make_augmentations(
            names, self.factor, value_range, interpolation, seed, self.compute_dtype
        )

    def get_random_transformation(self, images):
        gen = self.generator
        chain_weights = keras_random.gamma([self.num_chains], self.alpha, seed=gen)
        chain_weights = chain_weights / _core.reduce_sum(chain_weights)
        keep = keras_random.beta([], self.alpha, self.alpha, seed=gen)
        count = len(self._augmentations)
        # Index `count` means "no augmentation at this step".
        picks = keras_random.randint([self.num_chains, self.chain_depth], 0, count + 1, seed=gen)
        chains = [
            [(i, draw_augmentation(self._augmentations[i], images)) for i in row if i < count]
            for row in picks.numpy().tolist()
        ]
        return chain_weights, keep, chains

    def transform_images(self, images, transformation):
        chain_weights, keep, chains = transformation
        chain_weights = _core.cast(chain_weights, images.dtype)
        mixed = _core.zeros_like(images)
        for c, chain in enumerate(chains):
            augmented = images
            for i, drawn in chain:
                augmented = apply_augmentation(self._augmentations[i], augmented, drawn)
            mixed = mixed + augmented * chain_weights[c]
        keep = _core.cast(keep, images.dtype)
        images = keep * images + (1.0 - keep) * mixed
        return _core.clip_by_value(images, *self.value_range)

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "num_chains": self.num_chains,
            "chain_depth": self.chain_depth,
            "factor": self.factor,
            "alpha": self.alpha,
            "all_ops": self.all_ops,
            "interpolation": self.interpolation,
        }
