"""``ft.keras.optimizers`` (also ``ft.optimizers``): Keras 3's optimizers on ferrotape variables.

>>> import ferrotape as ft
>>> w = ft.Variable([1.0, 2.0])
>>> opt = ft.keras.optimizers.get("sgd")  # SGD(learning_rate=0.01)
>>> with ft.GradientTape() as tape:
...     loss = ft.reduce_sum(w * w)
>>> _ = opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))  # w -= 0.01 * 2w
>>> [round(float(x), 4) for x in w.numpy()], int(opt.iterations.numpy())
([0.98, 1.96], 1)
"""

from . import schedules
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .ftrl import Ftrl
from .lamb import Lamb
from .lion import Lion
from .loss_scale_optimizer import LossScaleOptimizer
from .multi_optimizer import MultiOptimizer, OptimizerMap
from .muon import Muon
from .nadam import Nadam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .schedule_free_adamw import ScheduleFreeAdamW
from .sgd import SGD

_OPTIMIZERS = {
    cls.__name__.lower(): cls
    for cls in (
        SGD,
        Adam,
        AdamW,
        RMSprop,
        Adagrad,
        Adadelta,
        Adamax,
        Nadam,
        Lion,
        Lamb,
        Ftrl,
        Adafactor,
        LossScaleOptimizer,
        Muon,
        ScheduleFreeAdamW,
        MultiOptimizer,
    )
}


def serialize(optimizer):
    """An optimizer as ``{"module", "class_name", "config", "registered_name"}``."""
    return {
        "module": "keras.optimizers",
        "class_name": type(optimizer).__name__,
        "config": optimizer.get_config(),
        "registered_name": None,
    }


def deserialize(config, custom_objects=None):
    """An optimizer from ``serialize``'s dict (the class name is case-insensitive)."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            "optimizers.deserialize: expected a dict with 'class_name' and 'config'. "
            f"Received: {config!r}"
        )
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _OPTIMIZERS.get(str(name).lower())
    if cls is None:
        raise ValueError(
            f"optimizers.deserialize: unknown optimizer {name!r}; expected one of "
            f"{sorted(_OPTIMIZERS)}."
        )
    return cls.from_config(config.get("config") or {}, custom_objects=custom_objects)


def get(identifier):
    """An optimizer from a name (``"adam"``, ``"sgd"``, ``"rmsprop"``, ``"adamw"``,
    ``"adagrad"``, ``"adadelta"``, ``"adamax"``, ``"nadam"``, ``"lion"``, ``"lamb"``,
    ``"ftrl"``, ``"adafactor"``; any case, default arguments), a ``serialize`` dict, or an Optimizer
    (returned as is)."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _OPTIMIZERS.get(identifier.lower())
        if cls is None:
            raise ValueError(
                f"optimizers.get: could not interpret optimizer identifier: {identifier!r}; "
                f"expected one of {sorted(_OPTIMIZERS)}."
            )
        return cls()
    raise ValueError(
        f"optimizers.get: could not interpret optimizer identifier: {identifier!r}; expected "
        "a name, a config dict or an Optimizer instance."
    )


__all__ = [
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Ftrl",
    "Lamb",
    "Lion",
    "LossScaleOptimizer",
    "Muon",
    "MultiOptimizer",
    "Nadam",
    "Optimizer",
    "OptimizerMap",
    "RMSprop",
    "ScheduleFreeAdamW",
    "deserialize",
    "get",
    "schedules",
    "serialize",
]
