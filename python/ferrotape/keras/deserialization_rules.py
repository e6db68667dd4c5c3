"""What a model config may name: Keras 3's rule that deserialization builds modeling objects
only, and its ``safe_mode``.

A ``.keras`` file, a ``to_json`` string or a layer config comes from outside the program, so
the names in it must not reach arbitrary code. A name resolves to a built-in object only when
that object is a modeling class (a layer or model, an operation, a loss, a metric, an
optimizer or its variable map, a learning-rate schedule, an initializer, a regularizer, a
dtype policy) or a modeling function (an activation, a loss or a metric function). Everything
else that ferrotape exposes (``keras.utils.get_file``, ``keras.backend.set_floatx``,
``keras.saving.load_model``, callbacks, modules) is refused with Keras's "Non-modeling APIs are
disallowed" error; Python's own modules and builtins are never looked up at all. Registered
custom objects, a ``custom_object_scope`` and ``custom_objects`` are the user's own choice and
stay allowed.

``check_config`` walks a whole config and applies the rule to every object it names before the
first object is built, so a refused name anywhere in a file fails the load with no side effect.
In ``safe_mode`` (the default) it also refuses Python bytecode (a ``__lambda__`` entry).

>>> import ferrotape as ft
>>> ft.keras.saving.deserialize_keras_object(
...     {"module": "keras.utils", "class_name": "get_file", "config": {}})
Traceback (most recent call last):
...
ValueError: Cannot deserialize `keras.utils.get_file` because it is not a modeling object. ...
"""

import inspect
import threading

_STATE = threading.local()
_FUNCTIONS = []  # the modeling functions, found once on first use

# Keras's namespaces whose plain functions a config may name ("relu", "mse", "accuracy").
MODELING_FUNCTION_MODULES = ("activations", "losses", "metrics")
# The namespace helpers those modules also export: they look up or build objects by name.
_HELPERS = frozenset({"serialize", "deserialize", "get"})
# The entries Keras's config format uses for plain values, not for objects.
PLAIN_VALUE_ENTRIES = frozenset(
    {
        "__keras_tensor__",
        "__tensor__",
        "__numpy__",
        "__bytes__",
        "__ellipsis__",
        "__slice__",
        "__typespec__",
    }
)
LAMBDA_ENTRY = "__lambda__"


def _modeling_classes():
    # Imported on use: these modules import the registry that imports this module.
    from .initializers import Initializer
    from .layers.layer import Layer
    from .layers.layer_utils import DTypePolicy
    from .losses.loss import Loss
    from .metrics.metric import Metric
    from .ops.operation import Operation
    from .optimizers.base_optimizer import BaseOptimizer
    from .optimizers.multi_optimizer import OptimizerMap
    from .optimizers.schedules import LearningRateSchedule
    from .regularizers import Regularizer

    return (
        Layer,
        Operation,
        Loss,
        Metric,
        BaseOptimizer,
        OptimizerMap,  # which optimizer updates which variables: part of an optimizer
        LearningRateSchedule,
        Initializer,
        Regularizer,
        DTypePolicy,
    )


def _modeling_functions():
    if not _FUNCTIONS:
        import importlib

        keras = importlib.import_module("ferrotape.keras")
        for module_name in MODELING_FUNCTION_MODULES:
            module = getattr(keras, module_name)
            for name in getattr(module, "__all__", ()):
                value = getattr(module, name, None)
                if name not in _HELPERS and callable(value) and not inspect.isclass(value):
                    _FUNCTIONS.append(value)
    return _FUNCTIONS


def is_modeling_object(obj):
    """Whether a built-in object may be named by a config: a modeling class or function."""
    if inspect.isclass(obj):
        return issubclass(obj, _modeling_classes())
    return callable(obj) and any(obj is fn for fn in _modeling_functions())


def non_modeling_error(api_name):
    """Keras's refusal of a name that resolves to something other than a modeling object."""
    return ValueError(
        f"Cannot deserialize `{api_name}` because it is not a modeling object. Non-modeling "
        "APIs are disallowed during deserialization for security. A model configuration may "
        "only name layers, models, operations, losses, metrics, optimizers, learning-rate "
        "schedules, initializers, regularizers, activations, dtype policies, or custom "
        "objects registered with `keras.saving.register_keras_serializable()` or passed in "
        "`custom_objects`."
    )


def lambda_error():
    """Keras's refusal of Python bytecode in safe mode."""
    return ValueError(
        "Requested the deserialization of a Python lambda. This carries a potential risk of "
        "arbitrary code execution and thus it is disallowed by default. If you trust the "
        "source of the artifact, pass `safe_mode=False` to the loading function."
    )


def in_safe_mode(default=True):
    """The safe mode of the deserialization in progress (an outer call's), else ``default``."""
    stack = getattr(_STATE, "safe_mode", None)
    return stack[-1] if stack else default


class SafeModeScope:
    """Makes ``safe_mode`` apply to the nested deserializations of an object's parts."""

    def __init__(self, safe_mode):
        self.safe_mode = bool(safe_mode)

    def __enter__(self):
        if not hasattr(_STATE, "safe_mode"):
            _STATE.safe_mode = []
        _STATE.safe_mode.append(self.safe_mode)
        return self

    def __exit__(self, *exc_info):
        _STATE.safe_mode.pop()


def check_config(config, resolve, safe_mode):
    """Applies the rule to every object ``config`` names, before any is built.

    Args:
        config: A config as JSON gives it (dicts, lists, plain values).
        resolve: ``resolve(entry)`` gives the object a ``{"class_name", ...}`` entry names
            (``None`` when it names none) and raises the refusal for a non-modeling one.
        safe_mode: Whether Python bytecode is refused.

    Raises:
        ValueError: naming the first refused entry.
    """
    pending = [config]
    while pending:  # a loop, not recursion: a deeply nested file must not overflow the stack
        value = pending.pop()
        if isinstance(value, (list, tuple)):
            pending.extend(value)
            continue
        if not isinstance(value, dict):
            continue
        class_name = value.get("class_name")
        if class_name == LAMBDA_ENTRY and safe_mode:
            raise lambda_error()
        if isinstance(class_name, str) and class_name not in PLAIN_VALUE_ENTRIES:
            resolve(value)
        pending.extend(value.values())
