"""What the base ``Layer`` needs besides itself: unique names, the call context, tracked
containers, shape helpers, ``DTypePolicy`` and ``add_weight``'s argument orders (Keras 3 keeps
these in ``keras.src.utils.naming``, ``keras.src.utils.tracking`` and ``keras.src.dtype_policies``).
"""

import collections
import functools
import inspect
import re
import threading
import weakref

import numpy as np

from ... import _core
from ... import dtypes as ft_dtypes
from ..backend_dtypes import as_dtype

# ----------------------------------------------------------------------------- names


_NAME_UIDS = collections.Counter()


def _snake_case(name):
    """Keras's class-name-to-prefix rule: "Conv2D" -> "conv2d", "BatchNormalization" ->
    "batch_normalization"."""
    name = re.sub(r"\W+", "", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _unique_name(prefix):
    """ "dense", then "dense_1", "dense_2", ... (unique per process, as Keras)."""
    count = _NAME_UIDS[prefix]
    _NAME_UIDS[prefix] += 1
    return prefix if count == 0 else f"{prefix}_{count}"


def clear_session():
    """Restarts automatic layer names ("dense", "dense_1", ...) from the beginning."""
    _NAME_UIDS.clear()


# ----------------------------------------------------------------------------- call context


class _CallContext(threading.local):
    """Per-thread state shared by nested layer calls."""

    def __init__(self):
        super().__init__()
        self.depth = 0  # how many Layer.__call__ are running
        self.training = None  # the training mode of the enclosing call
        self.symbolic_batch = False  # dummy runs: report the batch dim as None
        self.autocast = None  # the autocast scope's dtype (mirrors the native module's)


_CONTEXT = _CallContext()


def _enter_autocast_scope(layer):
    """Opens ``layer``'s autocast scope for its call (Keras 3's rule) and returns the enclosing
    one, for ``_exit_autocast_scope``. Inside an enclosing scope, a layer with ``autocast=False``
    or a non-floating compute dtype reads its variables as stored, another one in its compute
    dtype; outside any, a mixed-precision layer (compute dtype other than its variables') opens
    one. In the scope, reads of variables made with ``add_weight(autocast=True)`` are cast to
    its dtype by the native module, so native layers and layers written in ops alike compute
    in the compute dtype, and the gradients flow back through the casts to the variables."""
    outer = _CONTEXT.autocast
    compute = layer.compute_dtype
    if not layer._compute_dtype_object.is_floating:
        scope = None
    elif outer is not None:
        scope = compute if layer.autocast else None
    else:
        scope = compute if compute != layer.variable_dtype else None
    if scope != outer:
        _core.keras.set_autocast_dtype(scope)
        _CONTEXT.autocast = scope
    return outer


def _exit_autocast_scope(outer):
    if _CONTEXT.autocast != outer:
        _core.keras.set_autocast_dtype(outer)
        _CONTEXT.autocast = outer


# Any change to which layers or variables a layer holds bumps this, invalidating cached walks.
_STRUCTURE = [0]


def _structure_changed():
    _STRUCTURE[0] += 1


# Layers whose `_losses` list is non-empty; the outermost call clears those it contains.
_PENDING_LOSSES = weakref.WeakSet()


def _invalidating(method):
    """``method`` of a container, made to invalidate the cached walks when it mutates."""

    @functools.wraps(method)
    def mutate(self, *args, **kwargs):
        _structure_changed()
        return method(self, *args, **kwargs)

    return mutate


class _TrackedList(list):
    """A list attribute of a layer: mutating it invalidates the cached walks, so layers appended
    after assignment (``self.blocks = []; self.blocks.append(Dense(4))``) are found."""

    append = _invalidating(list.append)
    extend = _invalidating(list.extend)
    insert = _invalidating(list.insert)
    pop = _invalidating(list.pop)
    remove = _invalidating(list.remove)
    clear = _invalidating(list.clear)
    sort = _invalidating(list.sort)
    reverse = _invalidating(list.reverse)
    __setitem__ = _invalidating(list.__setitem__)
    __delitem__ = _invalidating(list.__delitem__)
    __iadd__ = _invalidating(list.__iadd__)


class _TrackedDict(dict):
    """A dict attribute of a layer: mutating it invalidates the cached walks."""

    __setitem__ = _invalidating(dict.__setitem__)
    __delitem__ = _invalidating(dict.__delitem__)
    pop = _invalidating(dict.pop)
    popitem = _invalidating(dict.popitem)
    clear = _invalidating(dict.clear)
    update = _invalidating(dict.update)
    setdefault = _invalidating(dict.setdefault)


# ----------------------------------------------------------------------------- shapes


def _shape_of(value):
    """A tensor's shape as a tuple; lists/tuples/dicts of tensors give lists/dicts of shapes."""
    if isinstance(value, (list, tuple)):
        return [_shape_of(v) for v in value]
    if isinstance(value, dict):
        return {k: _shape_of(v) for k, v in value.items()}
    shape = getattr(value, "shape", None)
    return None if shape is None else tuple(shape)


def _batch_as_none(shape):
    """The same shape structure with the batch (first) dim unknown."""
    if isinstance(shape, list):
        return [_batch_as_none(s) for s in shape]
    if isinstance(shape, dict):
        return {k: _batch_as_none(s) for k, s in shape.items()}
    if isinstance(shape, tuple) and shape:
        return (None,) + shape[1:]
    return shape


def _is_single_shape(shape):
    return isinstance(shape, (tuple, list)) and all(
        d is None or isinstance(d, (int, np.integer)) for d in shape
    )


def _zeros_for(shape, dtype):
    """A zero tensor standing in for an input of ``shape`` (unknown dims become 1)."""
    if isinstance(shape, dict):
        return {k: _zeros_for(s, dtype) for k, s in shape.items()}
    if not _is_single_shape(shape):
        return [_zeros_for(s, dtype) for s in shape]
    return _core.zeros([1 if d is None else int(d) for d in shape], dtype=dtype)


def _format_shape(shape):
    if shape is None:
        return "?"
    if isinstance(shape, dict):
        return str({k: _format_shape(s) for k, s in shape.items()}).replace("'", "")
    if not _is_single_shape(shape):
        return str([_format_shape(s) for s in shape]).replace("'", "")
    return "(" + ", ".join(str(d) for d in shape) + ")"


# ----------------------------------------------------------------------------- dtypes


class DTypePolicy:
    """A layer's variable and compute dtypes ("float32", or "mixed_float16": float16 compute with
    float32 variables)."""

    def __init__(self, name="float32"):
        if isinstance(name, DTypePolicy):
            name = name.name
        if isinstance(name, dict):  # Keras 3 configs serialize the policy
            name = (name.get("config") or {}).get("name", name)
        if isinstance(name, str) and name in ("mixed_float16", "mixed_bfloat16"):
            compute, variable = name.split("_", 1)[1], "float32"
        else:
            try:
                compute = variable = as_dtype(name).name
            except (TypeError, ValueError):
                raise ValueError(
                    f"Layer: invalid dtype {name!r}; expected a dtype name such as 'float32' "
                    f"or a policy name such as 'mixed_float16'"
                ) from None
            name = compute
        self.name = name
        self.compute_dtype = compute
        self.variable_dtype = variable

    def __repr__(self):
        return f'<DTypePolicy "{self.name}">'

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


# The policy `set_global_policy` set (None: the one `floatx()` names).
_GLOBAL_POLICY = [None]


def global_policy():
    """The dtype policy of new layers created without ``dtype``: the one
    ``set_global_policy`` set, else ``DTypePolicy(floatx())``."""
    from ..backend_config import floatx

    return _GLOBAL_POLICY[0] or DTypePolicy(floatx())


def set_global_policy(policy):
    """Sets the dtype policy of layers created from now on without ``dtype``: a name
    (``"mixed_float16"``, ``"float32"``, ...) or a ``DTypePolicy``.

    Raises:
        ValueError: for anything else, or a name that is not a float dtype or a mixed policy.
    """
    if not isinstance(policy, str | DTypePolicy):
        raise ValueError(
            "set_global_policy: invalid `policy` argument. Expected the string name of a "
            "policy (such as 'mixed_float16') or a `DTypePolicy` instance. Received: "
            f"policy={policy!r} (of type {type(policy)})"
        )
    policy = DTypePolicy(policy)
    if not ft_dtypes.as_dtype(policy.compute_dtype).is_floating:
        raise ValueError(
            "set_global_policy: the global policy must compute in a float dtype. "
            f"Received: policy={policy.name!r}"
        )
    _GLOBAL_POLICY[0] = policy


# ----------------------------------------------------------------------------- call signatures

_CALL_SPECS = {}


def _call_spec(call):
    """(call accepts `training`, the default of `training`) for a `call` function, cached."""
    spec = _CALL_SPECS.get(call)
    if spec is None:
        try:
            parameters = inspect.signature(call).parameters
        except (TypeError, ValueError):
            parameters = {}
        training = parameters.get("training")
        default = None
        if training is not None and training.default is not inspect.Parameter.empty:
            default = training.default
        spec = (training is not None, default)
        _CALL_SPECS[call] = spec
    return spec


def _wrap_build(build):
    """Keras marks a layer built once its ``build`` returns, even when an override does not call
    ``super().build``; this wrapper does that for every subclass's ``build``."""

    @functools.wraps(build)
    def wrapped(self, *args, **kwargs):
        result = build(self, *args, **kwargs)
        object.__setattr__(self, "built", True)
        if self._build_input_shape is None and args:
            object.__setattr__(self, "_build_input_shape", _plain_shape(args[0]))
        _structure_changed()
        return result

    wrapped._ft_build_wrapper = True
    return wrapped


def _plain_shape(shape):
    if shape is None or isinstance(shape, dict):
        return shape
    if _is_single_shape(shape):
        return tuple(None if d is None else int(d) for d in shape)
    if hasattr(shape, "as_list"):
        return tuple(shape)
    return [_plain_shape(s) for s in shape]


_KERAS3_WEIGHT_ARGS = (
    "shape",
    "initializer",
    "dtype",
    "trainable",
    "autocast",
    "regularizer",
    "constraint",
    "aggregation",
    "overwrite_with_gradient",
    "name",
)
_KERAS2_WEIGHT_ARGS = (
    "name",
    "shape",
    "dtype",
    "initializer",
    "regularizer",
    "trainable",
    "constraint",
)


# Attributes holding the base Layer's bookkeeping: never searched for sublayers. Subclasses
# extend Layer._engine_attrs with their own.
_LAYER_ATTRS = frozenset(
    {
        "_name",
        "_trainable",
        "built",
        "_policy",
        "_compute_dtype_object",
        "_autocast",
        "activity_regularizer",
        "_own_trainable",
        "_own_non_trainable",
        "_weight_names",
        "_regularizers",
        "_constraints",
        "_losses",
        "_build_input_shape",
        "_output_shape",
        "_input_batch_shape",
        "_walk_cache",
        "_walk_version",
        "_inbound_nodes",
        "_input_layer",
    }
)


class NativeFormCopying:
    """How a layer copies and pickles (Keras 3 gives layers ``__reduce__`` in
    ``keras.src.saving.keras_saveable``): as its Python state. A built-in layer's native form
    (``_native``, a Rust object over the same variables) cannot be pickled: it is left out and
    made again, by the layer's ``_make_native``, over the copied variables. A variable copies
    as a ``tf.Variable`` would, without its ``add_weight(autocast=...)`` mark: the layer keeps
    the marks of its own weights and sets them on the copies."""

    def __getstate__(self):
        state = dict(self.__dict__)
        if "_native" in state:
            state["_native"] = None
        state.pop("_activation_split", None)  # a cache, rebuilt on the next call
        own = state.get("_own_trainable", []) + state.get("_own_non_trainable", [])
        state["_autocast_marks"] = [v._autocast for v in own]
        return state

    def __setstate__(self, state):
        marks = state.pop("_autocast_marks", [])
        self.__dict__.update(state)
        own = state.get("_own_trainable", []) + state.get("_own_non_trainable", [])
        for variable, mark in zip(own, marks, strict=False):
            variable._autocast = mark
        if "_native" in state and state["_native"] is None:
            self._make_native()
