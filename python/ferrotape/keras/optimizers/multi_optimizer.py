"""``MultiOptimizer`` and ``OptimizerMap`` (Keras 3's ``keras.src.optimizers.multi_optimizer``):
different optimizers for different variables of one model."""

import re
from collections.abc import MutableMapping

from .loss_scale_optimizer import LossScaleOptimizer
from .optimizer import Optimizer


def _path(variable):
    """Keras's variable path (``"dense/kernel"``): ferrotape's name without the ``:0``."""
    return str(variable.name).split(":")[0]


def _check_inner(optimizer, what):
    if not isinstance(optimizer, Optimizer):
        raise ValueError(f"{what} must be a Keras Optimizer instance. Received: {optimizer}")
    if isinstance(optimizer, LossScaleOptimizer):
        raise ValueError("LossScaleOptimizer cannot be used inside an MultiOptimizer.")
    if isinstance(optimizer, MultiOptimizer):
        raise ValueError("MultiOptimizer cannot be used inside an MultiOptimizer.")


class OptimizerMap(MutableMapping):
    """Maps variable paths to optimizers: a key is an exact path (``"decoder"``) or a regular
    expression matched against the whole path (``"encoder/.*"``); unmatched variables get
    ``default_optimizer``.

    Args:
        default_optimizer: the optimizer of the variables no key matches.
        optimizer_map: an optional dict of keys to optimizers.

    >>> import ferrotape as ft
    >>> opts = ft.keras.optimizers
    >>> mapping = opts.OptimizerMap(opts.RMSprop(), {"encoder/.*": opts.SGD()})
    >>> mapping["encoder/dense/kernel"].name, mapping["decoder/dense/kernel"].name
    ('SGD', 'rmsprop')
    """

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(
                f"default_optimizer must be a Keras Optimizer instance. Received: "
                f"{default_optimizer}"
            )
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = dict(optimizer_map or {})

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        """The optimizer of ``key``: an exact key first, else the one pattern that fully
        matches (several matching is an error), else the default."""
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [p for p in self._optimizer_map if re.fullmatch(p, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(
                f"'{key}' already exists in the OptimizerMap with value "
                f"{self._optimizer_map[key]}. Please make sure to not use duplicated keys."
            )
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        _check_inner(optimizer, "optimizer")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[_path(variable)]

    def get_config(self):
        from .. import object_registration

        serialize = object_registration.serialize_keras_object
        return {
            "default_optimizer": serialize(self._default_optimizer),
            "optimizer_map": {key: serialize(opt) for key, opt in self._optimizer_map.items()},
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .. import object_registration

        def load(entry):
            return object_registration.deserialize_keras_object(entry, custom_objects)

        mapping = {key: load(entry) for key, entry in (config.get("optimizer_map") or {}).items()}
        return cls(load(config["default_optimizer"]), mapping)


class MultiOptimizer(Optimizer):
    """Updates each variable with the optimizer an ``OptimizerMap`` (or a function of the
    variable) picks for it; each inner optimizer keeps its own learning rate, slots and step
    count, and ``iterations`` counts the steps of the whole.

    Args:
        optimizer_map: an ``OptimizerMap``, or a callable from a variable to an optimizer.
        loss_scale_factor: passed on to every inner optimizer.
        name: the optimizer's name.

    >>> import ferrotape as ft
    >>> opts = ft.keras.optimizers
    >>> a, b = ft.Variable([1.0], name="encoder/w"), ft.Variable([1.0], name="head/w")
    >>> opt = opts.MultiOptimizer(opts.OptimizerMap(opts.SGD(0.5), {"encoder/.*": opts.SGD(0.1)}))
    >>> _ = opt.apply_gradients([(ft.constant([1.0]), a), (ft.constant([1.0]), b)])
    >>> [round(float(v.numpy()[0]), 3) for v in (a, b)]
    [0.9, 0.5]
    """

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        self._inner_optimizers = []
        super().__init__(learning_rate=0.0, loss_scale_factor=loss_scale_factor, name=name)
        self._optimizer_map = optimizer_map
        inner = list(optimizer_map.values()) if hasattr(optimizer_map, "values") else []
        default = getattr(optimizer_map, "default_optimizer", None)
        for optimizer in inner + ([default] if default is not None else []):
            if optimizer not in self._inner_optimizers:
                optimizer.loss_scale_factor = loss_scale_factor
                self._inner_optimizers.append(optimizer)

    def build(self, var_list):
        if self.built:
            return
        self._assignment = {}
        groups = {id(opt): [] for opt in self._inner_optimizers}
        for variable in var_list:
            optimizer = self._optimizer_map(variable)
            _check_inner(optimizer, f"The optimizer for variable {variable.name}")
            if optimizer not in self._inner_optimizers:
                optimizer.loss_scale_factor = self.loss_scale_factor
                self._inner_optimizers.append(optimizer)
                groups[id(optimizer)] = []
            self._assignment[variable.ref()] = optimizer
            groups[id(optimizer)].append(variable)
        for optimizer in self._inner_optimizers:
            if groups[id(optimizer)]:
                optimizer.build(groups[id(optimizer)])
        super().build(var_list)
        self.built = True

    @property
    def optimizers(self):
        """The inner optimizers."""
        return self._inner_optimizers

    @property
    def variables(self):
        """``iteration`` and the (unused) learning rate, then each inner optimizer's."""
        own = self._variables[:]
        for optimizer in self._inner_optimizers:
            own.extend(optimizer.variables)
        return own

    @property
    def learning_rate(self):
        raise AttributeError(
            "Learning rate cannot be accessed on a MultiOptimizer. Access the learning rate on "
            "the individual sub-optimizers instead."
        )

    @learning_rate.setter
    def learning_rate(self, value):
        raise AttributeError(
            "Learning rate cannot be set on a MultiOptimizer. Set the learning rate on the "
            "individual sub-optimizers instead."
        )

    @property
    def loss_scale_factor(self):
        return self.__dict__.get("_loss_scale_factor")

    @loss_scale_factor.setter
    def loss_scale_factor(self, value):
        self._loss_scale_factor = value
        for optimizer in self.__dict__.get("_inner_optimizers", []):
            optimizer.loss_scale_factor = value

    def apply(self, grads, trainable_variables=None):
        """Hands each gradient to its variable's optimizer, then counts one step."""
        grads = list(grads)
        if not grads:
            return
        if trainable_variables is None:
            if not self.built:
                raise ValueError(
                    "When passing `grads` without `variables`, the optimizer must already be "
                    "built on a list of variables. Call `optimizer.build(trainable_variables)` "
                    "first."
                )
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if not self.built:
            self.build(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise ValueError(
                f"Gradients must match trainable variables one-to-one. Received {len(grads)} "
                f"gradients and {len(trainable_variables)} variables."
            )
        groups = {id(opt): ([], []) for opt in self._inner_optimizers}
        for gradient, variable in zip(grads, trainable_variables, strict=True):
            optimizer = self._assignment.get(variable.ref())
            if optimizer is None:
                raise ValueError(
                    f"MultiOptimizer: unknown variable {variable.name!r}; it was not in the "
                    "variables the optimizer was built with."
                )
            groups[id(optimizer)][0].append(gradient)
            groups[id(optimizer)][1].append(variable)
        for optimizer in self._inner_optimizers:
            sub_grads, sub_vars = groups[id(optimizer)]
            if sub_vars:
                optimizer.apply(sub_grads, sub_vars)
        self._iterations.assign_add(1)

    def finalize_variable_values(self, var_list):
        for optimizer in self._inner_optimizers:
            mine = [v for v in var_list if self._assignment.get(v.ref()) is optimizer]
            if mine:
                optimizer.finalize_variable_values(mine)

    def get_weights(self):
        return [v.numpy() for v in self.variables]

    def set_weights(self, weights):
        """Assigns ``variables``: its own first, then each inner optimizer's in turn."""
        if not self.built:
            raise ValueError(
                "You are calling `set_weights()` on an optimizer that has not yet been built. "
                "Please call `optimizer.build(trainable_variables)` to create the optimizer "
                "weights before calling `set_weights()`."
            )
        weights = list(weights)
        start = len(self._variables)
        for variable, weight in zip(self._variables, weights[:start], strict=True):
            variable.assign(weight)
        for optimizer in self._inner_optimizers:
            count = len(optimizer.variables)
            if count:
                optimizer.set_weights(weights[start : start + count])
                start += count

    def get_config(self):
        from .. import object_registration

        return {
            "optimizer_map": object_registration.serialize_keras_object(self._optimizer_map),
            "loss_scale_factor": self.loss_scale_factor,
            "name": self.name,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .. import object_registration

        config = dict(config)
        config["optimizer_map"] = object_registration.deserialize_keras_object(
            config["optimizer_map"], custom_objects
        )
        return cls(**config)
