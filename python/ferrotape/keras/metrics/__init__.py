"""``ft.keras.metrics``: Keras 3's metrics (running means of per-sample values, accuracies,
confusion-matrix metrics, IoU, F-scores, R², correlations), laid out as
``keras.src.metrics``.

A metric accumulates over batches in its variables: ``update_state(y_true, y_pred,
sample_weight=None)`` adds a batch, ``result()`` returns the value so far (a float32 tensor),
``reset_state()`` starts over, and calling the metric does an update then returns the
result. The per-sample values are computed with ferrotape ops or numpy and reduced on the
host: one ``.numpy()`` per update, nothing recorded by a tape.

>>> import ferrotape as ft
>>> acc = ft.keras.metrics.SparseCategoricalAccuracy()
>>> acc.update_state([1, 0], [[0.1, 0.9], [0.2, 0.8]])  # one right, one wrong
>>> float(acc.result())
0.5
>>> float(acc([0], [[0.7, 0.3]]))  # two right out of three
0.6666666865348816
"""

from .. import losses as _losses
from .accuracy_metrics import (
    Accuracy,
    BinaryAccuracy,
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
    SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy,
    _ResolvingAccuracy,
    accuracy,
    binary_accuracy,
    categorical_accuracy,
    sparse_categorical_accuracy,
    sparse_top_k_categorical_accuracy,
    top_k_categorical_accuracy,
)
from .confusion_metrics import (
    AUC,
    FalseNegatives,
    FalsePositives,
    Precision,
    PrecisionAtRecall,
    Recall,
    RecallAtPrecision,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
    TrueNegatives,
    TruePositives,
)
from .correlation_metrics import (
    ConcordanceCorrelation,
    PearsonCorrelation,
    concordance_correlation,
    pearson_correlation,
)
from .f_score_metrics import F1Score, FBetaScore
from .hinge_metrics import CategoricalHinge, Hinge, SquaredHinge
from .iou_metrics import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU
from .metric import Metric
from .probabilistic_metrics import (
    BinaryCrossentropy,
    CategoricalCrossentropy,
    KLDivergence,
    Poisson,
    SparseCategoricalCrossentropy,
)
from .reduction_metrics import Mean, MeanMetricWrapper, Sum
from .regression_metrics import (
    CosineSimilarity,
    LogCoshError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MeanSquaredLogarithmicError,
    R2Score,
    RootMeanSquaredError,
)

# The loss functions Keras 3 also exports as metrics (per-sample values).
binary_crossentropy = _losses.binary_crossentropy
binary_focal_crossentropy = _losses.binary_focal_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
categorical_focal_crossentropy = _losses.categorical_focal_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
hinge = _losses.hinge
squared_hinge = _losses.squared_hinge
categorical_hinge = _losses.categorical_hinge
huber = _losses.huber
poisson = _losses.poisson
kld = kullback_leibler_divergence = _losses.kl_divergence
logcosh = _losses.log_cosh
mse = MSE = _losses.mean_squared_error
mae = MAE = _losses.mean_absolute_error
mape = MAPE = _losses.mean_absolute_percentage_error
msle = MSLE = _losses.mean_squared_logarithmic_error
KLD = kld

_CLASSES = (
    Metric,
    Mean,
    Sum,
    MeanMetricWrapper,
    Accuracy,
    BinaryAccuracy,
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
    TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy,
    MeanSquaredError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    RootMeanSquaredError,
    CosineSimilarity,
    LogCoshError,
    R2Score,
    CategoricalCrossentropy,
    SparseCategoricalCrossentropy,
    BinaryCrossentropy,
    KLDivergence,
    Poisson,
    Hinge,
    SquaredHinge,
    CategoricalHinge,
    TruePositives,
    FalsePositives,
    TrueNegatives,
    FalseNegatives,
    Precision,
    Recall,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
    PrecisionAtRecall,
    RecallAtPrecision,
    AUC,
    IoU,
    BinaryIoU,
    MeanIoU,
    OneHotIoU,
    OneHotMeanIoU,
    FBetaScore,
    F1Score,
    PearsonCorrelation,
    ConcordanceCorrelation,
)
_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        accuracy,
        binary_accuracy,
        categorical_accuracy,
        sparse_categorical_accuracy,
        top_k_categorical_accuracy,
        sparse_top_k_categorical_accuracy,
        pearson_correlation,
        concordance_correlation,
        _losses.mean_squared_error,
        _losses.mean_absolute_error,
        _losses.mean_absolute_percentage_error,
        _losses.mean_squared_logarithmic_error,
        _losses.categorical_crossentropy,
        _losses.sparse_categorical_crossentropy,
        _losses.binary_crossentropy,
        _losses.binary_focal_crossentropy,
        _losses.categorical_focal_crossentropy,
        _losses.kl_divergence,
        _losses.poisson,
        _losses.hinge,
        _losses.squared_hinge,
        _losses.categorical_hinge,
        _losses.log_cosh,
        _losses.huber,
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
    "bce": _losses.bce,
    "BCE": _losses.bce,
    "logcosh": logcosh,
}
ALL_OBJECTS_DICT = {**{cls.__name__: cls for cls in _CLASSES}, **_FUNCTIONS, **_ALIASES}


def serialize(metric):
    """A metric as ``{"module", "class_name", "config", "registered_name"}``."""
    return {
        "module": "keras.metrics",
        "class_name": type(metric).__name__,
        "config": metric.get_config(),
        "registered_name": None,
    }


def deserialize(config, custom_objects=None):
    """A metric from ``serialize``'s dict."""
    objects = {**ALL_OBJECTS_DICT, **(custom_objects or {})}
    if not isinstance(config, dict) or config.get("class_name") not in objects:
        raise ValueError(f"metrics.deserialize: could not interpret {config!r}.")
    return objects[config["class_name"]].from_config(config.get("config") or {})


def get(identifier, loss=None):
    """A Metric for ``compile(metrics=[...])``.

    ``identifier`` is a Metric (returned as is), a Metric class (instantiated), a name
    (``"accuracy"``/``"acc"``: resolved at the first update from ``loss`` and the shapes; a
    class name such as ``"CategoricalAccuracy"``; a function name or alias such as
    ``"categorical_accuracy"``, ``"mse"``, ``"mae"``, wrapped in a running mean), a
    per-sample function ``fn(y_true, y_pred)`` (wrapped, named after it), or a ``serialize``
    dict. A name given as a string is kept as the metric's name, as Keras's ``compile`` does.
    """
    if identifier is None:
        return None
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier.lower() in ("accuracy", "acc"):
            return _ResolvingAccuracy(name=identifier, loss=loss)
        obj = ALL_OBJECTS_DICT.get(identifier)
        if obj is None:
            raise ValueError(
                f"metrics.get: could not interpret metric identifier: {identifier!r}. Expected "
                "a Keras metric name such as 'accuracy', 'mse' or 'categorical_accuracy'."
            )
        metric = obj() if isinstance(obj, type) else MeanMetricWrapper(obj)
        metric.name = identifier
        return metric
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", None))
    raise ValueError(f"metrics.get: could not interpret metric identifier: {identifier!r}.")


__all__ = [
    "AUC",
    "Accuracy",
    "BinaryAccuracy",
    "BinaryCrossentropy",
    "BinaryIoU",
    "CategoricalAccuracy",
    "CategoricalCrossentropy",
    "CategoricalHinge",
    "ConcordanceCorrelation",
    "CosineSimilarity",
    "F1Score",
    "FBetaScore",
    "FalseNegatives",
    "FalsePositives",
    "Hinge",
    "IoU",
    "KLD",
    "KLDivergence",
    "LogCoshError",
    "MAE",
    "MAPE",
    "MSE",
    "MSLE",
    "Mean",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanIoU",
    "MeanMetricWrapper",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
    "Metric",
    "OneHotIoU",
    "OneHotMeanIoU",
    "PearsonCorrelation",
    "Poisson",
    "Precision",
    "PrecisionAtRecall",
    "R2Score",
    "Recall",
    "RecallAtPrecision",
    "RootMeanSquaredError",
    "SensitivityAtSpecificity",
    "SparseCategoricalAccuracy",
    "SparseCategoricalCrossentropy",
    "SparseTopKCategoricalAccuracy",
    "SpecificityAtSensitivity",
    "SquaredHinge",
    "Sum",
    "TopKCategoricalAccuracy",
    "TrueNegatives",
    "TruePositives",
    "accuracy",
    "binary_accuracy",
    "binary_crossentropy",
    "binary_focal_crossentropy",
    "categorical_accuracy",
    "categorical_crossentropy",
    "categorical_focal_crossentropy",
    "categorical_hinge",
    "concordance_correlation",
    "deserialize",
    "get",
    "hinge",
    "huber",
    "kld",
    "kullback_leibler_divergence",
    "logcosh",
    "mae",
    "mape",
    "mse",
    "msle",
    "pearson_correlation",
    "poisson",
    "serialize",
    "sparse_categorical_accuracy",
    "sparse_categorical_crossentropy",
    "sparse_top_k_categorical_accuracy",
    "squared_hinge",
    "top_k_categorical_accuracy",
]
