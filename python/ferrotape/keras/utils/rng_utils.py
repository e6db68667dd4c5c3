"""``set_random_seed`` (Keras 3's ``keras.src.utils.rng_utils``)."""

import numpy as np


def set_random_seed(seed):
    """Seeds every generator a Keras program draws from: Python's ``random``, numpy's global
    generator and ferrotape's (``ft.random.set_seed``), as ``keras.utils.set_random_seed``."""
    import random

    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"set_random_seed: seed must be an int. Received: seed={seed!r}")
    from ... import random as ft_random  # takes any int, as TF (ft.random loads after keras)

    random.seed(int(seed))
    np.random.seed(int(seed) % 2**32)
    ft_random.set_seed(int(seed))
