"""``ft.keras.losses``, laid out as Keras 3's ``keras.src.losses``: the base ``Loss`` and its
reductions in ``loss.py``, the loss functions and classes in ``losses.py`` (the focal, Dice,
Tversky, Circle and generalized cross-entropy ones in ``extra_losses.py``, CTC in ``ctc.py``),
and here the lookup (``get``, ``serialize``, ``deserialize``).
"""

from ..legacy.losses import Reduction
from .ctc import CTC, ctc
from .extra_losses import (
    BinaryFocalCrossentropy,
    CategoricalFocalCrossentropy,
    CategoricalGeneralizedCrossEntropy,
    Circle,
    Dice,
    Tversky,
    binary_focal_crossentropy,
    categorical_focal_crossentropy,
    categorical_generalized_cross_entropy,
    circle,
    dice,
    tversky,
)
from .loss import (  # noqa: F401 - the package's names, as before the split
    _REDUCTIONS,
    EPSILON,
    Loss,
    _apply_mask,
    _check_axis,
    _check_broadcast,
    _check_same_shape,
    _pred_and_true,
    _same_rank,
    _snake_case,
    _tensor,
    reduce_weighted_values,
    squeeze_or_expand_to_same_rank,
    standardize_reduction,
)
from .losses import (  # noqa: F401 - the package's names, as before the split
    BCE,
    KLD,
    MAE,
    MAPE,
    MSE,
    MSLE,
    BinaryCrossentropy,
    CategoricalCrossentropy,
    CategoricalHinge,
    CosineSimilarity,
    Hinge,
    Huber,
    KLDivergence,
    LogCosh,
    LossFunctionWrapper,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MeanSquaredLogarithmicError,
    Poisson,
    SparseCategoricalCrossentropy,
    SquaredHinge,
    _hinge_labels,
    _l2_normalize,
    _wrapper_class,
    bce,
    binary_crossentropy,
    categorical_crossentropy,
    categorical_hinge,
    cosine_similarity,
    hinge,
    huber,
    kl_divergence,
    kld,
    kullback_leibler_divergence,
    log_cosh,
    logcosh,
    mae,
    mape,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    mse,
    msle,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)

_CLASSES = (
    Loss,
    LossFunctionWrapper,
    MeanSquaredError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    LogCosh,
    Poisson,
    KLDivergence,
    Hinge,
    SquaredHinge,
    CategoricalHinge,
    Huber,
    CosineSimilarity,
    CategoricalCrossentropy,
    BinaryCrossentropy,
    SparseCategoricalCrossentropy,
    CTC,
    BinaryFocalCrossentropy,
    CategoricalFocalCrossentropy,
    CategoricalGeneralizedCrossEntropy,
    Circle,
    Dice,
    Tversky,
)
_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        mean_squared_error,
        mean_absolute_error,
        mean_absolute_percentage_error,
        mean_squared_logarithmic_error,
        huber,
        log_cosh,
        poisson,
        kl_divergence,
        cosine_similarity,
        hinge,
        squared_hinge,
        categorical_hinge,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
        binary_crossentropy,
        binary_focal_crossentropy,
        categorical_focal_crossentropy,
        categorical_generalized_cross_entropy,
        circle,
        ctc,
        dice,
        tversky,
    )
}
_ALIASES = {
    "mse": mse,
    "MSE": mse,
    "mae": mae,
    "MAE": mae,
    "mape": mape,
    "MAPE": mape,
    "msle": msle,
    "MSLE": msle,
    "kld": kld,
    "KLD": kld,
    "kullback_leibler_divergence": kld,
    "logcosh": log_cosh,
    "bce": bce,
    "BCE": bce,
}
ALL_OBJECTS_DICT = {**{cls.__name__: cls for cls in _CLASSES}, **_FUNCTIONS, **_ALIASES}


def serialize(loss):
    """A loss as its name (a function) or ``{"class_name", "config"}`` (a class instance)."""
    if isinstance(loss, Loss):
        return {
            "module": "keras.losses",
            "class_name": type(loss).__name__,
            "config": loss.get_config(),
            "registered_name": None,
        }
    return getattr(loss, "__name__", str(loss))


def deserialize(config, custom_objects=None):
    """A loss from ``serialize``'s output."""
    objects = {**ALL_OBJECTS_DICT, **(custom_objects or {})}
    if isinstance(config, dict) and config.get("class_name") == "function":
        config = config.get("config")  # Keras 3's entry for a plain function: its name
    if isinstance(config, str) and config not in objects:
        obj = _custom_object(config)
        if obj is not None:
            return obj
    if isinstance(config, str):
        obj = objects.get(config)
        if obj is None:
            raise ValueError(f"losses.deserialize: unknown loss {config!r}.")
        return obj() if isinstance(obj, type) else obj
    if not isinstance(config, dict) or config.get("class_name") not in objects:
        raise ValueError(f"losses.deserialize: could not interpret {config!r}.")
    cls = objects[config["class_name"]]
    return cls.from_config(config.get("config") or {})


def _custom_object(name):
    """A loss function registered or in a ``custom_object_scope`` (``load_model``'s
    ``custom_objects``) under ``name``, or ``None``."""
    from ..object_registration import get_registered_object

    return get_registered_object(name)


def get(identifier):
    """A loss from a name (a function name such as ``"categorical_crossentropy"``, an alias
    such as ``"mse"``, or a class name such as ``"MeanSquaredError"``, which is instantiated),
    a ``serialize`` dict, or a callable (returned as is). None gives None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        obj = ALL_OBJECTS_DICT.get(identifier) or _custom_object(identifier)
        if obj is None:
            raise ValueError(
                f"losses.get: could not interpret loss identifier: {identifier!r}. Expected a "
                "Keras loss name such as 'categorical_crossentropy', 'mse' or 'huber'."
            )
        return obj() if isinstance(obj, type) else obj
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"losses.get: could not interpret loss identifier: {identifier!r}.")


__all__ = [
    "CTC",
    "ctc",
    "Reduction",
    "BinaryCrossentropy",
    "BinaryFocalCrossentropy",
    "CategoricalFocalCrossentropy",
    "CategoricalGeneralizedCrossEntropy",
    "Circle",
    "Dice",
    "Tversky",
    "binary_focal_crossentropy",
    "categorical_focal_crossentropy",
    "categorical_generalized_cross_entropy",
    "circle",
    "dice",
    "tversky",
    "CategoricalCrossentropy",
    "CategoricalHinge",
    "CosineSimilarity",
    "Hinge",
    "Huber",
    "KLDivergence",
    "LogCosh",
    "Loss",
    "LossFunctionWrapper",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
    "Poisson",
    "SparseCategoricalCrossentropy",
    "SquaredHinge",
    "binary_crossentropy",
    "categorical_crossentropy",
    "categorical_hinge",
    "cosine_similarity",
    "deserialize",
    "get",
    "hinge",
    "huber",
    "kl_divergence",
    "log_cosh",
    "mae",
    "mape",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "mean_squared_logarithmic_error",
    "mse",
    "msle",
    "poisson",
    "serialize",
    "sparse_categorical_crossentropy",
    "squared_hinge",
]
