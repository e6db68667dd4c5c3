"""``ft.keras``: Keras's layers, models, optimizers, losses, metrics, callbacks and data sets.

Layers compute in Rust (``ferrotape._core.keras``); the model machinery, optimizers, the
training loop and the data sets are Python, as in Keras.
"""

from . import (
    activations,
    backend,
    callbacks,
    config,
    datasets,
    initializers,
    layers,
    losses,
    metrics,
    mixed_precision,
    models,
    ops,
    optimizers,
    random,
    regularizers,
    saving,
    utils,
)
from .layers import Input, Layer
from .models import Model, Sequential

__all__ = [
    "Input",
    "Layer",
    "Model",
    "Sequential",
    "activations",
    "backend",
    "callbacks",
    "config",
    "datasets",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "mixed_precision",
    "models",
    "ops",
    "optimizers",
    "random",
    "regularizers",
    "saving",
    "utils",
]
