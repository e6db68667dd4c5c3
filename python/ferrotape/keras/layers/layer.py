"""The base ``Layer`` (Keras 3's ``keras.src.layers.layer``; Keras 3 semantics, eager).

A ``Layer`` owns weights made by ``add_weight`` and the sublayers and variables assigned to its
attributes; ``layer(x)`` builds it on the first call (``build(input_shape)`` with the batch dim),
then runs ``call``. ``Model`` adds training (``compile``/``fit``/...), weight files, ``summary``;
``Input`` and calling layers on its symbolic tensors make functional models.

>>> import numpy as np, ferrotape as ft
>>> class Scale(ft.keras.Layer):
...     def build(self, input_shape):
...         self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")
...     def call(self, inputs):
...         return inputs * self.w
>>> layer = Scale()
>>> layer(np.ones((2, 3))).shape.as_list(), [w.shape.as_list() for w in layer.weights]
([2, 3], [[3]])
"""

import math

import numpy as np

from ... import _core, _public_api, nest, trackable
from ... import dtypes as ft_dtypes
from ...module import Module
from .. import initializers, regularizers
from ..backend_dtypes import as_dtype
from . import keras_tensor
from .input_spec import assert_input_compatibility
from .keras_tensor import KerasTensor, _holds_keras_tensor, _is_tensor_like, _Node
from .layer_build_config import LayerBuildConfig
from .layer_losses import LayerLosses
from .layer_masking import LayerMasking, _keep_mask
from .layer_utils import (
    _CONTEXT,
    _KERAS2_WEIGHT_ARGS,
    _KERAS3_WEIGHT_ARGS,
    _LAYER_ATTRS,
    _STRUCTURE,
    DTypePolicy,
    NativeFormCopying,
    _batch_as_none,
    _call_spec,
    _enter_autocast_scope,
    _exit_autocast_scope,
    _is_single_shape,
    _plain_shape,
    _shape_of,
    _snake_case,
    _structure_changed,
    _TrackedDict,
    _TrackedList,
    _unique_name,
    _wrap_build,
    _zeros_for,
    global_policy,
)


def _find_layers(value, found, seen):
    """Appends the Layers inside an attribute value (lists, tuples, dict values) to `found`."""
    if isinstance(value, Layer):
        if id(value) not in seen:
            seen.add(id(value))
            found.append(value)
    elif isinstance(value, (list, tuple, dict)):
        for item in value.values() if isinstance(value, dict) else value:
            _find_layers(item, found, seen)


class Layer(LayerBuildConfig, LayerLosses, LayerMasking, NativeFormCopying, Module):
    """Base class of all layers (Keras 3's ``keras.layers.Layer``).

    Subclasses create weights in ``build(input_shape)`` with ``add_weight`` and compute in
    ``call(inputs, training=None)``. Weights are listed in Keras's order: the layer's own
    (trainable ones first, in creation order), then those of its sublayers in the order they were
    assigned to attributes, recursively.
    """

    # The engine's own bookkeeping, never searched for sublayers; Model and Functional add theirs.
    _engine_attrs = _LAYER_ATTRS
    # Keras 3's names, in checkpoints, for attributes and weights ferrotape names otherwise
    # (Keras 3's Dense keeps its kernel in ``_kernel``): see ``_checkpoint_children``.
    _checkpoint_names = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "_ft_build_wrapper", False):
            cls.build = _wrap_build(build)

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        setattr_ = object.__setattr__
        activity_regularizer = kwargs.pop("activity_regularizer", None)
        autocast = kwargs.pop("autocast", True)
        input_batch_shape = self._pop_input_shape_kwargs(kwargs)
        if kwargs:
            raise ValueError(
                f"Unrecognized keyword arguments passed to {type(self).__name__}: {kwargs}"
            )
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}: name must be a string, received {name!r}")
        policy = global_policy() if dtype is None else DTypePolicy(dtype)
        setattr_(self, "_name", name or _unique_name(_snake_case(type(self).__name__)))
        setattr_(self, "_trainable", bool(trainable))
        setattr_(self, "built", False)
        setattr_(self, "_policy", policy)
        setattr_(self, "_compute_dtype_object", ft_dtypes.as_dtype(policy.compute_dtype))
        setattr_(self, "_autocast", bool(autocast))
        setattr_(self, "activity_regularizer", regularizers.get(activity_regularizer))
        setattr_(self, "_own_trainable", [])
        setattr_(self, "_own_non_trainable", [])
        setattr_(self, "_weight_names", {})
        setattr_(self, "_regularizers", [])
        setattr_(self, "_constraints", [])
        setattr_(self, "_losses", [])
        setattr_(self, "_build_input_shape", None)
        setattr_(self, "_output_shape", None)
        setattr_(self, "_input_batch_shape", input_batch_shape)
        setattr_(self, "_walk_cache", {})
        setattr_(self, "_walk_version", -1)
        _structure_changed()

    # ------------------------------------------------------------------ attribute tracking
    def __setattr__(self, name, value):
        tracked = isinstance(value, (Layer, _core.Variable, list, tuple, dict))
        if tracked and "_own_trainable" not in self.__dict__:
            if isinstance(value, (Layer, _core.Variable)):
                raise RuntimeError(
                    f"{type(self).__name__}: you must call `super().__init__()` in the "
                    f"`__init__()` method of your Layer subclass before assigning layers or "
                    f"variables"
                )
            object.__setattr__(self, name, value)  # plain settings before super().__init__()
            return
        if tracked and name not in self._engine_attrs:
            if isinstance(value, _core.Variable):
                self._track_variable(value, name)
            elif type(value) is list:
                value = _TrackedList(value)
            elif type(value) is dict:
                value = _TrackedDict(value)
            if isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, _core.Variable):
                        self._track_variable(item, f"{name}_{i}")
            _structure_changed()
        elif name in self.__dict__ and isinstance(self.__dict__[name], (Layer, list, tuple, dict)):
            _structure_changed()  # a tracked value is being replaced
        object.__setattr__(self, name, value)
        if tracked and trackable.has_deferred() and name not in self._engine_attrs:
            # A checkpoint restored before this attribute existed assigns its values now.
            trackable.restore_deferred()

    def __delattr__(self, name):
        _structure_changed()
        object.__delattr__(self, name)

    def _checkpoint_children(self):
        """The layer's children in a checkpoint, named as Keras 3 on TensorFlow names them
        (``ferrotape.trackable``): its attributes holding variables, layers and containers of
        them, then the weights no attribute holds, under their own names."""
        own = self._own_trainable + self._own_non_trainable
        weights = [(self._weight_names.get(id(v), "variable"), v) for v in own]
        return trackable.attribute_children(
            self, exclude=self._engine_attrs, rename=self._checkpoint_names, weights=weights
        )

    def _track_variable(self, variable, name):
        if any(v is variable for v in self._own_trainable + self._own_non_trainable):
            return
        (self._own_trainable if variable.trainable else self._own_non_trainable).append(variable)
        self._weight_names[id(variable)] = name

    # ------------------------------------------------------------------ identity and dtype
    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, value):
        object.__setattr__(self, "_name", value)

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        """Freezing a layer freezes its sublayers too (Keras 3)."""
        object.__setattr__(self, "_trainable", bool(value))
        for layer in self._sublayers():
            layer.trainable = value
        _structure_changed()

    @property
    def dtype(self):
        """The dtype of the layer's weights (a name, as Keras 3)."""
        return self._policy.variable_dtype

    @property
    def variable_dtype(self):
        return self._policy.variable_dtype

    @property
    def compute_dtype(self):
        """The dtype the layer computes in; floating inputs are cast to it."""
        return self._policy.compute_dtype

    @property
    def dtype_policy(self):
        return self._policy

    @property
    def autocast(self):
        """Whether floating inputs are cast to the compute dtype, and the enclosing call's
        autocast scope applies to this layer's variables (Keras 3's ``Layer.autocast``)."""
        return self._autocast

    @autocast.setter
    def autocast(self, value):
        object.__setattr__(self, "_autocast", bool(value))

    @property
    def input_dtype(self):
        return self._policy.compute_dtype

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"

    # ------------------------------------------------------------------ weights
    def add_weight(self, *args, **kwargs):
        """Creates a weight variable of ``shape`` filled by ``initializer`` (default
        "glorot_uniform" for floating dtypes, "zeros" otherwise) and tracks it; a
        ``regularizer`` adds its penalty to ``losses``.

        Keras 3's arguments: ``add_weight(shape=None, initializer=None, dtype=None,
        trainable=True, autocast=True, regularizer=None, constraint=None, aggregation="none",
        overwrite_with_gradient=False, name=None)``. Code written for Keras 2 passes the name
        first (``add_weight("kernel", shape=...)``); that order is accepted too.
        """
        order = _KERAS2_WEIGHT_ARGS if args and isinstance(args[0], str) else _KERAS3_WEIGHT_ARGS
        if len(args) > len(order):
            raise TypeError(
                f"add_weight takes at most {len(order)} positional arguments ({len(args)} given)"
            )
        for key, value in zip(order, args, strict=False):
            if key in kwargs:
                raise TypeError(f"add_weight got multiple values for argument '{key}'")
            kwargs[key] = value
        unknown = set(kwargs) - set(_KERAS3_WEIGHT_ARGS)
        if unknown:
            raise TypeError(f"add_weight got unexpected keyword arguments {sorted(unknown)}")
        return self._add_weight(**kwargs)

    def _add_weight(
        self,
        shape=None,
        initializer=None,
        dtype=None,
        trainable=True,
        autocast=True,
        regularizer=None,
        constraint=None,
        aggregation="none",
        overwrite_with_gradient=False,
        name=None,
    ):
        del aggregation, overwrite_with_gradient
        if "_own_trainable" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}.add_weight: call `super().__init__()` in `__init__` first"
            )
        shape = self._checked_weight_shape(shape, name)
        dtype = as_dtype(dtype or self._policy.variable_dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = initializers.get(initializer)
        value = init(shape, dtype=dtype)
        if not isinstance(value, _core.Tensor) or value.dtype != dtype:
            value = _core.cast(_core.convert_to_tensor(value), dtype)
        short_name = name or "variable"
        variable = _core.Variable(value, trainable=trainable, name=f"{self.name}/{short_name}")
        variable._autocast = bool(autocast)  # read in the compute dtype in a mixed call
        (self._own_trainable if trainable else self._own_non_trainable).append(variable)
        self._weight_names[id(variable)] = short_name
        regularizer = regularizers.get(regularizer)
        if regularizer is not None:
            self._regularizers.append((variable, regularizer))
        if constraint is not None:
            if not callable(constraint):
                raise ValueError(
                    f"{type(self).__name__}.add_weight: constraint must be a callable "
                    f"(weight -> constrained weight), received {constraint!r}"
                )
            self._constraints.append((variable, constraint))
        _structure_changed()
        return variable

    add_variable = add_weight

    def _checked_weight_shape(self, shape, name):
        if shape is None:
            return ()
        try:
            dims = tuple(shape)
        except TypeError:
            dims = (shape,)
        if any(d is None for d in dims):
            raise ValueError(
                f"{type(self).__name__}.add_weight: the shape of weight {name!r} must be fully "
                f"defined, received shape={dims}"
            )
        try:
            return tuple(int(d) for d in dims)
        except (TypeError, ValueError):
            raise TypeError(
                f"{type(self).__name__}.add_weight: shape must be a tuple of ints, "
                f"received shape={shape!r}"
            ) from None

    def _cached_walk(self, key, compute):
        """Results of walks over sublayers, recomputed only after the structure changed."""
        if self._walk_version != _STRUCTURE[0]:
            self._walk_cache.clear()
            object.__setattr__(self, "_walk_version", _STRUCTURE[0])
        result = self._walk_cache.get(key)
        if result is None:
            result = compute()
            self._walk_cache[key] = result
        return result

    def _sublayers(self):
        """The layers held directly in attributes, in assignment order."""
        found, seen = [], {id(self)}
        for attr, value in self.__dict__.items():
            if attr not in self._engine_attrs:
                _find_layers(value, found, seen)
        return found

    def _flatten_layers(self, include_self=True, recursive=True):
        """This layer and its sublayers, depth first, each once."""

        def walk():
            seen, order = set(), []

            def visit(layer):
                if id(layer) in seen:
                    return
                seen.add(id(layer))
                order.append(layer)
                if recursive or layer is self:
                    for sub in layer._sublayers():
                        visit(sub)

            visit(self)
            return order

        layers = self._cached_walk(("layers", recursive), walk)
        return layers if include_self else layers[1:]

    def _collect_weights(self, kind, seen, out):
        if not self._trainable:
            if kind == "trainable":
                return out
            if kind == "non_trainable":
                kind = "all"
        if kind == "trainable":
            own = self._own_trainable
        elif kind == "non_trainable":
            own = self._own_non_trainable
        else:
            own = self._own_trainable + self._own_non_trainable
        for variable in own:
            if id(variable) not in seen:
                seen.add(id(variable))
                out.append(variable)
        for layer in self._sublayers():
            layer._collect_weights(kind, seen, out)
        return out

    def _weights_of_kind(self, kind):
        return list(self._cached_walk(kind, lambda: self._collect_weights(kind, set(), [])))

    @property
    def weights(self):
        """All weights: own (trainable first), then the sublayers', recursively."""
        return self._weights_of_kind("all")

    @property
    def trainable_weights(self):
        return self._weights_of_kind("trainable")

    @property
    def non_trainable_weights(self):
        return self._weights_of_kind("non_trainable")

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def submodules(self):
        return tuple(self._flatten_layers(include_self=False))

    def _weights_with_owners(self):
        """(owning layer, weight name, variable) for every weight, in ``weights`` order."""
        owner_of = {}
        for layer in self._flatten_layers():
            for variable in layer._own_trainable + layer._own_non_trainable:
                owner_of.setdefault(id(variable), layer)
        result = []
        for variable in self.weights:
            layer = owner_of[id(variable)]
            result.append((layer, layer._weight_names.get(id(variable), "variable"), variable))
        return result

    def get_weights(self):
        """The weights' values as numpy arrays, in ``weights`` order."""
        return [variable.numpy() for variable in self.weights]

    def set_weights(self, weights):
        """Assigns numpy arrays to the weights, in ``weights`` order (counts and shapes must
        match)."""
        owned = self._weights_with_owners()
        weights = list(weights)
        if len(weights) != len(owned):
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.set_weights: expected {len(owned)} "
                f"weight arrays, received {len(weights)}"
            )
        for (layer, weight_name, variable), value in zip(owned, weights, strict=True):
            value = np.asarray(value)
            expected = tuple(variable.shape)
            if value.shape != expected:
                raise ValueError(
                    f"{type(self).__name__} '{self.name}'.set_weights: weight "
                    f"'{layer.name}/{weight_name}' has shape {expected}, the provided array has "
                    f"shape {value.shape}"
                )
        for (_, _, variable), value in zip(owned, weights, strict=True):
            variable.assign(np.asarray(value, dtype=variable.dtype.name))

    def count_params(self):
        """The number of scalars in all weights."""
        if not self.built:
            raise ValueError(
                f"You tried to call `count_params` on layer '{self.name}', but the layer isn't "
                f"built. You can build it manually via: `{self.name}.build(batch_input_shape)`."
            )
        return int(sum(math.prod(v.shape) for v in self.weights))

    # ------------------------------------------------------------------ building and calling
    def build(self, input_shape=None):
        """Creates the weights for inputs of ``input_shape`` (batch dim included); the default
        creates none."""
        del input_shape
        object.__setattr__(self, "built", True)

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError(
            f"Layer {type(self).__name__} does not have a `call()` method implemented."
        )

    def _build_from_call(self, input_shape):
        self.build(input_shape)

    @_public_api.filter_traceback
    def __call__(self, *args, **kwargs):
        if args:
            inputs, rest = args[0], args[1:]
        elif "inputs" in kwargs:
            inputs, rest = kwargs.pop("inputs"), ()
        else:
            raise TypeError(
                f"{type(self).__name__}.__call__: expected the inputs as the first argument"
            )
        if _holds_keras_tensor(inputs, f"{type(self).__name__} {self.name!r}"):
            return self._symbolic_call(inputs, rest, kwargs)
        inputs = self._converted_inputs(inputs)
        if self.__dict__.get("input_spec") is not None:
            assert_input_compatibility(self.input_spec, inputs, self.name)
        context = _CONTEXT
        outer_training = context.training
        # Keras 3's order: the explicit argument, then the enclosing call's mode, then the
        # default in this layer's `call` signature.
        training = kwargs.pop("training", None)
        accepts_training, default_training = _call_spec(type(self).call)
        if training is None:
            training = outer_training if outer_training is not None else default_training
        if context.depth == 0:
            self._clear_losses()
        if not self.built:
            self._build_on_first_call(inputs)
            if trackable.has_deferred():
                # A checkpoint restored before this layer existed assigns its weights now,
                # before they are first used (TensorFlow's deferred restoration).
                trackable.restore_deferred()
        if accepts_training and training is not None:
            kwargs["training"] = training
        previous_mask = self._fill_mask_arguments(inputs, rest, kwargs)
        context.depth += 1
        context.training = training
        outer_autocast = _enter_autocast_scope(self)
        try:
            outputs = self.call(inputs, *rest, **kwargs)
        except Exception as error:
            _public_api.raise_call_failed(error, self, (inputs, *rest), kwargs)
        finally:
            context.depth -= 1
            context.training = outer_training
            _exit_autocast_scope(outer_autocast)
        if previous_mask is not None or self.supports_masking:
            self._set_mask_metadata(inputs, outputs, previous_mask)
        if self.activity_regularizer is not None:
            for output in nest.flatten(outputs):
                if isinstance(output, _core.Tensor):
                    self.add_loss(self._activity_loss(output))
        if self._output_shape is None:
            shape = _shape_of(outputs)
            object.__setattr__(
                self, "_output_shape", _batch_as_none(shape) if context.symbolic_batch else shape
            )
        return outputs

    def _build_on_first_call(self, inputs):
        shape = _shape_of(inputs)
        if _CONTEXT.symbolic_batch:
            shape = _batch_as_none(shape)
        self._build_from_call(shape)
        object.__setattr__(self, "built", True)
        object.__setattr__(self, "_build_input_shape", shape)
        _structure_changed()

    def _converted_inputs(self, value):
        """numpy arrays and nested Python numbers become tensors; floating inputs are cast to
        the compute dtype (Keras's autocast)."""
        if isinstance(value, _core.Tensor):
            if (
                self._autocast
                and value.dtype != self._compute_dtype_object
                and value.dtype.is_floating
            ):
                return _keep_mask(value, _core.cast(value, self._compute_dtype_object))
            return value
        if isinstance(value, np.ndarray):
            if self._autocast and value.dtype.kind == "f":
                if value.dtype.name != self._compute_dtype_object.name:
                    return _core.cast(_core.convert_to_tensor(value), self._compute_dtype_object)
            return _core.convert_to_tensor(value)
        if isinstance(value, (list, tuple)):
            if any(_is_tensor_like(v) or isinstance(v, dict) for v in value):
                return type(value)(self._converted_inputs(v) for v in value)
            return self._converted_inputs(_core.convert_to_tensor(value))
        if isinstance(value, dict):
            return {k: self._converted_inputs(v) for k, v in value.items()}
        if isinstance(value, (int, float, np.number)):
            return self._converted_inputs(_core.convert_to_tensor(value))
        return value

    def compute_output_shape(self, input_shape):
        """The output shape for inputs of ``input_shape``, found by running the layer on zeros
        (in inference mode); unknown dims are reported as ``None`` for the batch."""
        dummy = _zeros_for(_plain_shape(input_shape), self.compute_dtype)
        previous = _CONTEXT.symbolic_batch
        _CONTEXT.symbolic_batch = True
        try:
            outputs = self(dummy, training=False)
        finally:
            _CONTEXT.symbolic_batch = previous
        shape = _shape_of(outputs)
        batch_known = _is_single_shape(input_shape) and input_shape and input_shape[0] is not None
        return shape if batch_known else _batch_as_none(shape)

    def _symbolic_call(self, inputs, rest, kwargs):
        """Calling a layer on KerasTensors (functional API): runs it once on zeros to build it
        and learn the output shapes, and returns KerasTensors that remember this call."""
        structure = (inputs, tuple(rest), dict(kwargs))
        dummy, dummy_rest, dummy_kwargs = keras_tensor._zeros_standing_in(structure)
        previous = _CONTEXT.symbolic_batch
        _CONTEXT.symbolic_batch = True
        try:
            outputs = self(dummy, *dummy_rest, **{"training": False, **dummy_kwargs})
        finally:
            _CONTEXT.symbolic_batch = previous
        node = _Node(self, inputs, rest, kwargs)
        symbolic = nest.map_structure(
            lambda t: KerasTensor((None,) + tuple(t.shape)[1:], t.dtype.name, node=node), outputs
        )
        node.outputs = nest.flatten(symbolic)
        return symbolic

    # ------------------------------------------------------------------ configuration
    def get_config(self):
        """The constructor arguments of the base layer (subclasses add theirs)."""
        return {"name": self.name, "trainable": self.trainable, "dtype": self._policy.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
