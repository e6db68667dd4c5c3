"""Registering custom objects by name and (de)serializing objects through their ``get_config``.

Keras 3's scheme: ``register_keras_serializable(package, name)`` files a class or function under
``"package>name"``; ``serialize_keras_object`` gives ``{"module", "class_name", "config",
"registered_name"}`` and ``deserialize_keras_object`` finds the class again from the scopes
(``custom_object_scope``), the registry, ``custom_objects`` or the built-in Keras modules.

>>> import ferrotape as ft
>>> @ft.keras.saving.register_keras_serializable(package="Demo")
... class Scale(ft.keras.layers.Layer):
...     def __init__(self, factor=2.0, **kwargs):
...         super().__init__(**kwargs)
...         self.factor = factor
...     def call(self, x):
...         return x * self.factor
...     def get_config(self):
...         return {**super().get_config(), "factor": self.factor}
>>> ft.keras.saving.get_registered_name(Scale)
'Demo>Scale'
>>> data = ft.keras.saving.serialize_keras_object(Scale(3.0, name="s"))
>>> ft.keras.saving.deserialize_keras_object(data).factor
3.0
"""

import importlib
import inspect
import threading

from . import deserialization_rules

GLOBAL_CUSTOM_OBJECTS = {}
GLOBAL_CUSTOM_NAMES = {}
_SCOPES = threading.local()

# Where deserialize_keras_object looks for built-in classes named by a config's "module".
_BUILTIN_MODULES = (
    "layers",
    "optimizers",
    "losses",
    "metrics",
    "initializers",
    "regularizers",
    "activations",
    "callbacks",
    "models",
)


def register_keras_serializable(package="Custom", name=None):
    """A decorator filing a class or function under ``"package>name"`` (``name`` defaults to
    its ``__name__``). A class must define ``get_config``."""
    if not isinstance(package, str) or ">" in package:
        raise ValueError(
            f"register_keras_serializable: expected `package` to be a string without '>'. "
            f"Received: package={package!r}"
        )

    def decorator(arg):
        class_name = name if name is not None else getattr(arg, "__name__", None)
        if not isinstance(class_name, str):
            raise ValueError(
                f"register_keras_serializable: cannot name {arg!r}; pass `name=`. "
                f"Received: name={name!r}"
            )
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError(
                "register_keras_serializable: cannot register a class that does not have a "
                f"get_config() method. Received: {arg.__name__}"
            )
        registered_name = f"{package}>{class_name}"
        GLOBAL_CUSTOM_OBJECTS[registered_name] = arg
        GLOBAL_CUSTOM_NAMES[arg] = registered_name
        return arg

    return decorator


def get_registered_name(obj):
    """The name ``obj`` is registered under, else its ``__name__``."""
    if obj in GLOBAL_CUSTOM_NAMES:
        return GLOBAL_CUSTOM_NAMES[obj]
    return obj.__name__


def _scoped_objects():
    merged = {}
    for scope in getattr(_SCOPES, "stack", ()):
        merged.update(scope)
    return merged


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The object registered (or in scope, or in ``custom_objects``/``module_objects``) under
    ``name``, else None."""
    for table in (_scoped_objects(), GLOBAL_CUSTOM_OBJECTS, custom_objects, module_objects):
        if table and name in table:
            return table[name]
    return None


def get_custom_objects():
    """The global registry, a dict that may be edited (``get_custom_objects()["f"] = f``)."""
    return GLOBAL_CUSTOM_OBJECTS


class CustomObjectScope:
    """``with custom_object_scope({"Name": cls}):`` makes names resolvable while inside."""

    def __init__(self, custom_objects):
        if custom_objects is not None and not isinstance(custom_objects, dict):
            raise TypeError(
                f"CustomObjectScope: expected a dict of custom objects. Received: "
                f"{type(custom_objects).__name__}"
            )
        self.custom_objects = dict(custom_objects or {})

    def __enter__(self):
        if not hasattr(_SCOPES, "stack"):
            _SCOPES.stack = []
        _SCOPES.stack.append(self.custom_objects)
        return self

    def __exit__(self, *exc_info):
        _SCOPES.stack.pop()


custom_object_scope = CustomObjectScope


def serialize_keras_object(obj):
    """``obj`` as ``{"module", "class_name", "config", "registered_name"}`` (a registered
    function as its registered name, plain values as themselves)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if type(obj).__module__ == "numpy":  # numpy scalars and arrays, as JSON-ready values
        return obj.tolist()
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(item) for item in obj]
    if isinstance(obj, dict):
        return {key: serialize_keras_object(value) for key, value in obj.items()}
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return get_registered_name(obj)
    if not hasattr(obj, "get_config"):
        raise TypeError(
            f"serialize_keras_object: cannot serialize {type(obj).__name__}: it has no "
            f"get_config() method"
        )
    cls = type(obj)
    module = _public_module(cls)
    registered = GLOBAL_CUSTOM_NAMES.get(cls)
    if registered is None and (not module.startswith("keras") or module.startswith("keras.src")):
        registered = cls.__name__  # Keras 3 names its source-module classes (ops) too
    if module == "keras" and cls.__name__ == "Functional":
        # Keras 3 writes functional models under their source module, registered by name.
        module, registered = "keras.src.models.functional", "Functional"
    serialized = {
        "module": module,
        "class_name": cls.__name__,
        "config": serialize_keras_object(obj.get_config()),
        "registered_name": registered,  # None for built-in classes, as Keras writes
    }
    # Keras's entries that rebuild a model's state: the input shape and the compile arguments.
    for key, method in (
        ("build_config", "get_build_config"),
        ("compile_config", "get_compile_config"),
    ):
        value = getattr(obj, method, lambda: None)()
        if value is not None:
            serialized[key] = serialize_keras_object(value)
    return serialized


def _public_module(cls):
    if hasattr(cls, "keras_module"):  # operations: Keras's module of the same class
        return cls.keras_module
    module = cls.__module__
    prefix = "ferrotape.keras."
    if module.startswith(prefix):
        head = module[len(prefix) :].split(".")[0]
        if head == "models":
            return "keras"  # Keras files name Sequential, Functional and Model this way
        for public in _BUILTIN_MODULES:
            if head.startswith(public):
                return f"keras.{public}"
    return module


# Where a name is looked up when its "module" does not lead to it: the modeling namespaces
# among the built-in ones (callbacks build nothing a model holds).
_RESOLUTION_MODULES = tuple(name for name in _BUILTIN_MODULES if name != "callbacks")


def _namespace(module):
    """The ``ft.keras`` namespace a config's dotted ``module`` names (``"keras.optimizers.
    schedules"``), found by attribute, never imported; ``None`` when there is none."""
    if not isinstance(module, str) or not module.startswith("keras."):
        return None
    namespace = importlib.import_module("ferrotape.keras")
    for part in module.split(".")[1:]:
        namespace = getattr(namespace, part, None)
        if not inspect.ismodule(namespace):
            return None
    return namespace


def _builtin(class_name, module, namespaces=_RESOLUTION_MODULES):
    """The built-in modeling class or function a config names, else ``None``; a name that
    leads to anything else that can be called is refused (Keras's non-modeling rule)."""
    if not isinstance(class_name, str) or not class_name.isidentifier():
        return None
    keras = importlib.import_module("ferrotape.keras")
    if module == "keras" and class_name == "Functional":
        return keras.models.Functional
    if isinstance(module, str) and module.startswith("keras.src."):
        from .ops import operation  # x * 2.0, x[:, 0], keras.ops.mean(x) in a saved model

        found = operation.operation_class(module, class_name)
        if found is not None:
            return found
    candidates = [(module, _namespace(module))]
    candidates += [(f"keras.{name}", getattr(keras, name, None)) for name in namespaces]
    for public, namespace in candidates:
        found = getattr(namespace, class_name, None) if namespace is not None else None
        if found is None or not callable(found):
            continue  # submodules and constants are never objects of a model
        if not deserialization_rules.is_modeling_object(found):
            raise deserialization_rules.non_modeling_error(f"{public}.{class_name}")
        return found
    return None


def _function(config, custom_objects):
    """The function a ``{"class_name": "function", "config": name, ...}`` entry names: a
    registered or custom one, else an activation, loss or metric (never a Python builtin)."""
    name, registered = config.get("config"), config.get("registered_name")
    if not isinstance(name, str):
        raise TypeError(
            f"deserialize_keras_object: a function entry needs its name as 'config'. "
            f"Received: {config!r}"
        )
    found = get_registered_object(name, custom_objects)
    if found is None and registered not in (None, "function", name):
        found = get_registered_object(registered, custom_objects)
    if found is None:
        module = config.get("module")
        found = _builtin(name, module if module != "builtins" else None, _FUNCTION_MODULES)
    if found is None:  # Keras <= 3.6 saved a registered function by its bare name
        tables = (_scoped_objects(), GLOBAL_CUSTOM_OBJECTS, custom_objects or {})
        found = next(
            (obj for table in tables for key, obj in table.items() if key.endswith(f">{name}")),
            None,
        )
    return found


_FUNCTION_MODULES = deserialization_rules.MODELING_FUNCTION_MODULES


def _resolve(config, custom_objects):
    """The class or function a ``{"class_name", "module", "registered_name"}`` entry names
    (registered names, scopes and ``custom_objects`` first), else ``None``."""
    class_name = config["class_name"]
    if class_name == "function":
        return _function(config, custom_objects)
    registered = config.get("registered_name") or class_name
    found = get_registered_object(registered, custom_objects)
    if found is None and isinstance(class_name, str):
        found = get_registered_object(class_name, custom_objects)
    if found is None:
        found = _builtin(class_name, config.get("module"))
    return found


def _resolve_or_none(config, custom_objects):
    # The advance check refuses only what the rule refuses; a malformed entry is reported
    # where it is built, by the deserializer that reads it.
    try:
        return _resolve(config, custom_objects)
    except TypeError:
        return None


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object ``serialize_keras_object`` described (registered names, scopes and
    ``custom_objects`` first, then the built-in Keras modeling classes and functions).

    Only modeling objects are built: a config naming any other callable (a utility, a
    callback, a backend setting) is refused before anything is built, and in ``safe_mode``
    (the default, kept by nested calls) so is Python bytecode.
    """
    kwargs.pop("module_objects", None)  # Keras's legacy lookup table: names resolve as above
    del kwargs
    outermost = deserialization_rules.in_safe_mode(None) is None
    safe_mode = deserialization_rules.in_safe_mode(safe_mode)
    if outermost:
        deserialization_rules.check_config(
            config, lambda entry: _resolve_or_none(entry, custom_objects), safe_mode
        )
    with deserialization_rules.SafeModeScope(safe_mode):
        return _deserialize(config, custom_objects, safe_mode)


def _deserialize(config, custom_objects, safe_mode):
    if config is None or isinstance(config, (bool, int, float)):
        return config
    if isinstance(config, str):
        found = get_registered_object(config, custom_objects) or _builtin(config, None)
        if found is None:
            raise ValueError(f"deserialize_keras_object: unknown object {config!r}")
        return found
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            "deserialize_keras_object: expected a dict with 'class_name' and 'config'. "
            f"Received: {config!r}"
        )
    class_name = config["class_name"]
    if class_name == deserialization_rules.LAMBDA_ENTRY:
        if safe_mode:
            raise deserialization_rules.lambda_error()
        raise ValueError(
            "deserialize_keras_object: ferrotape does not load Python bytecode (a lambda "
            "saved by Keras); define the function, register it with "
            "`keras.saving.register_keras_serializable()` and save the model again"
        )
    cls = _resolve(config, custom_objects)
    if cls is None:
        kind, name = (
            ("function", config.get("config"))
            if class_name == "function"
            else (
                "class",
                class_name,
            )
        )
        raise TypeError(
            f"deserialize_keras_object: could not locate {kind} {name!r} (module "
            f"{config.get('module')!r}). Make sure custom classes and functions are decorated "
            "with `@keras.saving.register_keras_serializable()` or passed in `custom_objects`."
        )
    if not inspect.isclass(cls):
        return cls  # a function is returned, never called (as Keras does)
    inner = _without_keras_only_defaults(cls, config.get("config") or {})
    if not hasattr(cls, "from_config"):
        return cls(**inner)
    try:
        with CustomObjectScope(custom_objects):
            instance = cls.from_config(inner)
            # Keras's order: the object, then its weights (build), then compile.
            if config.get("build_config") and hasattr(instance, "build_from_config"):
                instance.build_from_config(config["build_config"])
            if config.get("compile_config") and hasattr(instance, "compile_from_config"):
                instance.compile_from_config(config["compile_config"])
            return instance
    except TypeError as error:
        raise TypeError(
            f"deserialize_keras_object: {class_name}.from_config could not rebuild the object "
            f"from {inner!r}: {error}"
        ) from error


# Arguments Keras 3 writes into configs for features ferrotape does not have, with the values
# that mean "not used": a config holding them loads, one using the feature is refused.
_KERAS_ONLY_DEFAULTS = {
    "quantization_config": None,
    "lora_rank": None,
    "lora_alpha": None,
    "synchronized": False,
    "renorm": False,
    "renorm_clipping": None,
    "renorm_momentum": 0.99,
    "sparse": False,
    "ragged": False,
    "optional": False,
    "input_axes": None,
    "output_axes": None,
}


def _without_keras_only_defaults(cls, config):
    """``config`` less the Keras-only arguments that hold their unused value and that
    ``cls`` does not accept."""
    if not isinstance(config, dict):
        return config
    try:
        accepted = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return config
    return {
        key: value
        for key, value in config.items()
        if key in accepted or key not in _KERAS_ONLY_DEFAULTS or value != _KERAS_ONLY_DEFAULTS[key]
    }


__all__ = [
    "CustomObjectScope",
    "custom_object_scope",
    "deserialize_keras_object",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "register_keras_serializable",
    "serialize_keras_object",
]
