"""``BaseOptimizer``: an optimizer's state, as Keras 3's ``keras/src/optimizers/base_optimizer.py``
keeps it: the ``iterations`` counter, the learning rate (a variable, a schedule or a callable),
the slot variables, weight-decay exclusions, the moving averages of ``use_ema``, and
``get_config``/``set_weights``. The step itself (``apply``) is in ``optimizer.py``.

Slots (momentums, velocities, ...) are created lazily, per variable and in variable order, the
first time a variable is seen (``_create_slots``); custom optimizers written the Keras 3 way
create theirs in ``build``. The order is part of checkpoints and of ``variables``.
"""

import os
import re
import sys
import warnings

import numpy as np

import ferrotape as ft

from ... import _core, trackable
from ..backend_dtypes import as_dtype
from . import schedules as _schedules

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _warn_at_caller(message, category=UserWarning):
    """Warns, attributing the warning to the first caller outside this package, so that the
    user's line (``Adam(lr=...)``) is the one shown (and a ``DeprecationWarning`` from a script
    is shown at all)."""
    frame = sys._getframe(0)
    level = 1
    while frame is not None and os.path.dirname(frame.f_code.co_filename) == _PACKAGE_DIR:
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def _snake_case(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _as_learning_rate_float(value, optimizer_name):
    """A float learning rate from a Python or numpy number or a scalar tensor."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise ValueError(
            f"{optimizer_name}: argument `learning_rate` should be a float, an instance of "
            "LearningRateSchedule, or a callable that takes no arguments and returns the "
            f"learning rate. Received: learning_rate={value!r}"
        )
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{optimizer_name}: argument `learning_rate` should be a float, an instance of "
            "LearningRateSchedule, or a callable that takes no arguments and returns the "
            f"learning rate. Received: learning_rate={value!r}"
        ) from None


def _slot_name(variable, slot):
    """Keras's slot naming: the variable's path with ``/`` as ``_``, then the slot's name."""
    base = str(variable.name)
    if base.endswith(":0"):
        base = base[:-2]
    return base.replace("/", "_").replace(":", "_") + "_" + slot


class BaseOptimizer:
    """The state of the Keras optimizers (Keras 3's ``BaseOptimizer``); subclass ``Optimizer``.

    Args:
        learning_rate: a float, a ``keras.optimizers.schedules.LearningRateSchedule``, or a
            callable taking no arguments that returns the learning rate.
        weight_decay: float or None. If set, every updated variable first decays:
            ``var -= var * weight_decay * learning_rate``.
        clipnorm: float or None. Each gradient is rescaled so its L2 norm is at most this.
        clipvalue: float or None. Each gradient is clipped to ``[-clipvalue, clipvalue]``.
        global_clipnorm: float or None. All gradients are rescaled together so that their
            global L2 norm is at most this. At most one of the three clipping arguments may be set.
        use_ema: bool. Keep an exponential moving average of the trained variables:
            ``average = ema_momentum * average + (1 - ema_momentum) * var`` after each step
            (the first step copies the variable).
        ema_momentum: float in [0, 1], the moving average's momentum.
        ema_overwrite_frequency: int or None. Every that many steps the variables are
            overwritten with their averages; ``finalize_variable_values`` does it on demand.
        loss_scale_factor: float or None. Gradients are divided by it before the update, and
            ``scale_loss(loss)`` multiplies a loss by it.
        gradient_accumulation_steps: not supported by ferrotape (must be None).
        name: the optimizer's name (prefix of its variables' names).

    Keras 2's ``lr=`` and ``decay=`` are accepted with a ``DeprecationWarning``: ``lr`` is
    ``learning_rate``, and ``decay > 0`` divides the learning rate by
    ``1 + decay * iterations`` (Keras 2's rule).
    """

    def __init__(
        self,
        learning_rate,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name=None,
        **kwargs,
    ):
        if name is None:
            name = _snake_case(type(self).__name__)
        self.name = name
        learning_rate, self._legacy_decay = self._pop_legacy_arguments(learning_rate, kwargs)
        if kwargs:
            raise ValueError(f"{type(self).__name__}: argument(s) not recognized: {kwargs}")
        if gradient_accumulation_steps is not None:
            raise NotImplementedError(
                f"{type(self).__name__}: `gradient_accumulation_steps` is not supported by "
                f"ferrotape. Received: gradient_accumulation_steps={gradient_accumulation_steps}"
            )
        clip_arguments_set = sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm))
        if clip_arguments_set > 1:
            raise ValueError(
                f"{type(self).__name__}: only one of `clipnorm`, `clipvalue` and "
                f"`global_clipnorm` can be set. Received: clipnorm={clipnorm}, "
                f"clipvalue={clipvalue}, global_clipnorm={global_clipnorm}"
            )
        if use_ema:
            if not 0 <= ema_momentum <= 1:
                raise ValueError(
                    f"{type(self).__name__}: `ema_momentum` must be in the range [0, 1]. "
                    f"Received: ema_momentum={ema_momentum}"
                )
            if ema_overwrite_frequency and (
                not isinstance(ema_overwrite_frequency, int) or ema_overwrite_frequency < 1
            ):
                raise ValueError(
                    f"{type(self).__name__}: `ema_overwrite_frequency` must be an integer >= 1 "
                    f"or None. Received: ema_overwrite_frequency={ema_overwrite_frequency}"
                )
        self.weight_decay = weight_decay
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm
        self.use_ema = use_ema
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps

        self.built = False
        self._variables = []
        self._trainable_variables = []
        # Keyed by `variable.ref()`, not id(): a deep copy or unpickled optimizer keys its
        # copied variables (a reference copies as a reference to the copy).
        self._trainable_variables_indices = {}
        self._slots = []
        self._variable_shapes = []
        self._variable_dtypes = []
        self._decay_flags = []
        self._model_variables_moving_average = []
        self._exclude_from_weight_decay_refs = set()
        self._exclude_from_weight_decay_pattern = None

        self._iterations = self.add_variable(
            (), initializer="zeros", dtype=ft.int64, name="iteration"
        )
        self._learning_rate = None
        self._set_learning_rate(learning_rate)

    def _pop_legacy_arguments(self, learning_rate, kwargs):
        """Takes Keras 2's ``lr`` and ``decay`` out of ``kwargs``; returns the learning rate
        and the inverse-time decay rate (0.0 for none)."""
        cls = type(self).__name__
        if "lr" in kwargs:
            learning_rate = kwargs.pop("lr")
            _warn_at_caller(
                f"{cls}: the argument `lr` is deprecated (Keras 3 removed it); "
                "use `learning_rate` instead.",
                DeprecationWarning,
            )
        decay = kwargs.pop("decay", None)
        if decay is None:
            return learning_rate, 0.0
        decay = float(decay)
        if decay < 0:
            raise ValueError(f"{cls}: `decay` must be >= 0. Received: decay={decay}")
        _warn_at_caller(
            f"{cls}: the argument `decay` is deprecated (Keras 3 removed it). ferrotape "
            "applies Keras 2's rule, learning_rate / (1 + decay * iterations); use "
            "`learning_rate=keras.optimizers.schedules.InverseTimeDecay(learning_rate, "
            "decay_steps=1, decay_rate=decay)` instead.",
            DeprecationWarning,
        )
        return learning_rate, decay

    # ----------------------------------------------------------------- variables

    @property
    def iterations(self):
        """The number of steps applied so far (an int64 variable)."""
        return self._iterations

    def _checkpoint_children(self):
        """Keras 3's children of an optimizer in a checkpoint (``ferrotape.trackable``): its
        variables (step, learning rate, slots), the model's variables it was built with, the step
        and learning rate by name, and any other variable held in an attribute of its own
        (Nadam's ``_u_product``)."""
        found = [
            ("_variables", self._variables),
            ("_trainable_variables", self._trainable_variables),
            ("_iterations", self._iterations),
        ]
        if isinstance(self._learning_rate, ft.Variable):
            found.append(("_learning_rate", self._learning_rate))
        found += [
            (name, value)
            for name, value in vars(self).items()
            if isinstance(value, ft.Variable) and name not in self._checkpoint_internal
        ]
        return found

    # Variables in attributes that Keras 3's optimizer does not have (ferrotape's own caches) or
    # that ``_checkpoint_children`` names already.
    _checkpoint_internal = frozenset({"_iterations", "_learning_rate", "_schedule_value"})

    # The order Keras 3 creates the slots in (so ``variables`` and checkpoints list them as
    # Keras does): groups of positions in ``_create_slots``' tuples, each group made for every
    # variable in turn, slots of one group interleaved (Adam's momentum and velocity), or None
    # for one group of all the slots.
    _slot_groups = None

    @property
    def variables(self):
        """The optimizer's variables: ``iteration``, ``learning_rate`` (unless a schedule or a
        callable is used), then the slots, variable by variable."""
        return self._variables[:]

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="mean", name=None):
        """Creates a non-trainable variable tracked in ``variables``."""
        del aggregation
        dtype = ft.float32 if dtype is None else as_dtype(dtype)
        shape = tuple(int(d) for d in shape)
        value = self._initial_value(initializer, shape, dtype)
        variable = ft.Variable(value, trainable=False, name=f"{self.name}/{name or 'var'}")
        self._variables.append(variable)
        return variable

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        """Creates a variable with the shape and dtype of ``reference_variable`` (zeros unless
        ``initializer`` says otherwise), named after it."""
        return self.add_variable(
            tuple(reference_variable.shape),
            initializer=initializer,
            dtype=reference_variable.dtype,
            name=_slot_name(reference_variable, name or "var"),
        )

    def add_optimizer_variables(self, trainable_variables, name, initializer="zeros"):
        """One slot per variable (a list), or, when ``name`` is a list, one list per name with
        the slots created variable by variable (Keras's interleaved order)."""
        names = [name] if isinstance(name, str) else list(name)
        initializers = initializer if isinstance(initializer, list | tuple) else [initializer]
        if len(initializers) == 1:
            initializers = initializers * len(names)
        lists = tuple([] for _ in names)
        for variable in trainable_variables:
            for slots, slot_name, slot_initializer in zip(lists, names, initializers, strict=True):
                slots.append(
                    self.add_variable_from_reference(variable, slot_name, slot_initializer)
                )
        return lists[0] if isinstance(name, str) else lists

    @staticmethod
    def _initial_value(initializer, shape, dtype):
        if isinstance(initializer, str):
            key = initializer.lower()
            if key == "zeros":
                return ft.zeros(shape, dtype=dtype)
            if key == "ones":
                return ft.ones(shape, dtype=dtype)
            from .. import initializers as keras_initializers

            initializer = keras_initializers.get(initializer)
        if isinstance(initializer, int | float | np.number):
            return ft.constant(float(initializer), dtype=dtype, shape=shape)
        if callable(initializer):
            return ft.convert_to_tensor(initializer(shape, dtype=dtype), dtype=dtype)
        return ft.convert_to_tensor(initializer, dtype=dtype)

    def build(self, var_list):
        """Creates the slots of ``var_list`` (in order) and marks the optimizer built."""
        self._register_variables(list(var_list))
        self.built = True

    def _register_variables(self, variables):
        """Indexes new variables and creates their moving averages (``use_ema``), then their
        slots variable by variable (Keras's order of creation)."""
        new_variables = []
        for variable in variables:
            if not isinstance(variable, ft.Variable):
                raise ValueError(
                    f"{type(self).__name__}: every variable to optimize must be an "
                    f"ft.Variable. Received: {type(variable).__name__} {variable!r}"
                )
            key = variable.ref()
            if key in self._trainable_variables_indices:
                continue
            self._trainable_variables_indices[key] = len(self._trainable_variables)
            self._trainable_variables.append(variable)
            self._variable_shapes.append(tuple(variable.shape))
            self._variable_dtypes.append(variable.dtype)
            self._decay_flags.append(self._use_weight_decay(variable))
            if self.use_ema:
                average = self.add_variable_from_reference(variable, "average")
                self._model_variables_moving_average.append(average)
            new_variables.append(variable)
        start = len(self._variables)
        new_slots = [self._create_slots(variable) for variable in new_variables]
        self._slots.extend(new_slots)
        if self._slot_groups is not None:
            self._variables[start:] = [
                slots[position]
                for group in self._slot_groups
                for slots in new_slots
                for position in group
                if position < len(slots)
            ]
        if new_variables and trackable.has_deferred():
            # A checkpoint restored before these slots existed assigns their values now.
            trackable.restore_deferred()

    def _create_slots(self, variable):
        """The slot variables of one variable (a tuple); none in the base class."""
        del variable
        return ()

    def _get_variable_index(self, variable):
        return self._trainable_variables_indices[variable.ref()]

    def _slots_of(self, variable):
        """The slot variables ``_create_slots`` made for ``variable``."""
        return self._slots[self._get_variable_index(variable)]

    def _indices_of(self, variables):
        """The slot indices of ``variables``, creating slots for variables seen the first time
        (Keras 2's lazy slots; Keras 3 raises instead, as do Keras-style custom optimizers)."""
        indices = self._trainable_variables_indices
        try:
            return [indices[v.ref()] for v in variables]
        except KeyError:
            pass
        unknown = [v for v in variables if v.ref() not in indices]
        if type(self).build is not BaseOptimizer.build:
            raise ValueError(
                f"{type(self).__name__}: unknown variable {unknown[0]!r}. This optimizer can "
                "only be called for the variables it was originally built with. When working "
                "with a new set of variables, you should recreate a new optimizer instance."
            )
        self._register_variables(unknown)
        return [indices[v.ref()] for v in variables]

    # ------------------------------------------------------------- learning rate

    @property
    def learning_rate(self):
        """The learning rate: the ``learning_rate`` variable (``float()``-convertible and
        assignable), or the schedule's value at ``iterations``, or the callable's value."""
        learning_rate = self._learning_rate
        if isinstance(learning_rate, ft.Variable):
            return learning_rate
        if isinstance(learning_rate, _schedules.LearningRateSchedule):
            return learning_rate(self._iterations)
        return learning_rate()

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        if not isinstance(self._learning_rate, ft.Variable) and not callable(learning_rate):
            if isinstance(self._learning_rate, _schedules.LearningRateSchedule):
                raise TypeError(
                    f"{type(self).__name__}: this optimizer was created with a "
                    "`LearningRateSchedule` object as its `learning_rate` constructor "
                    "argument, hence its learning rate is not settable. If you need the "
                    "learning rate to be settable, you should instantiate the optimizer with "
                    "a float `learning_rate` argument."
                )
        self._set_learning_rate(learning_rate)

    def _set_learning_rate(self, learning_rate):
        if isinstance(learning_rate, _schedules.LearningRateSchedule) or callable(learning_rate):
            if isinstance(self._learning_rate, ft.Variable):
                # By identity: == on variables compares values.
                self._variables = [v for v in self._variables if v is not self._learning_rate]
            self._learning_rate = learning_rate
            return
        value = _as_learning_rate_float(learning_rate, type(self).__name__)
        if isinstance(self._learning_rate, ft.Variable):
            self._learning_rate.assign(ft.constant(value, dtype=ft.float32))
            return
        variable = ft.Variable(
            ft.constant(value, dtype=ft.float32),
            trainable=False,
            name=f"{self.name}/learning_rate",
        )
        # Keras lists the learning rate right after the iteration counter.
        self._variables.insert(1, variable)
        self._learning_rate = variable

    def _current_learning_rate(self, step):
        """This step's learning rate as a Python float (``step`` = ``iterations`` before it)."""
        learning_rate = self._learning_rate
        if isinstance(learning_rate, ft.Variable):
            value = float(learning_rate.numpy())
        elif isinstance(learning_rate, _schedules.LearningRateSchedule):
            value = float(learning_rate(self._iterations))
        else:
            value = float(learning_rate())
        if self._legacy_decay:
            value /= 1.0 + self._legacy_decay * step
        return value

    # -------------------------------------------------------------- weight decay

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Excludes variables from weight decay: those in ``var_list``, and those whose name
        contains (as a regular expression) one of ``var_names``. Must be called before the
        optimizer is built."""
        if self.built:
            raise ValueError(
                f"{type(self).__name__}: `exclude_from_weight_decay()` can only be configured "
                "before the optimizer is built."
            )
        self._exclude_from_weight_decay_refs = {v.ref() for v in var_list or ()}
        if var_names:
            self._exclude_from_weight_decay_pattern = re.compile("|".join(set(var_names)))
        else:
            self._exclude_from_weight_decay_pattern = None

    def _use_weight_decay(self, variable):
        if variable.ref() in self._exclude_from_weight_decay_refs:
            return False
        pattern = self._exclude_from_weight_decay_pattern
        return pattern is None or pattern.search(str(variable.name)) is None

    def _apply_weight_decay(self, variables, indices, learning_rate):
        factor = float(self.weight_decay) * learning_rate
        flags = self._decay_flags
        for variable, index in zip(variables, indices, strict=True):
            if flags[index]:
                variable.assign_sub(variable * factor)

    # ---------------------------------------------------------- moving averages

    def _update_moving_averages(self):
        """Keras's update of the moving averages, before ``iterations`` moves on: the first
        step copies the variables, later steps average. One native call that reads
        ``iterations`` when it runs, so that a traced step replays it without Python; the
        overwrite every ``ema_overwrite_frequency`` steps is a branch on ``iterations``."""
        _core.optimizers.update_moving_averages(
            self._model_variables_moving_average,
            self._trainable_variables,
            self._iterations,
            float(self.ema_momentum),
        )
        frequency = self.ema_overwrite_frequency
        if frequency and (self._iterations + 1) % frequency == 0:
            self._overwrite_model_variables_with_average_value(self._trainable_variables)

    def _overwrite_model_variables_with_average_value(self, var_list):
        var_list = list(var_list)
        if len(var_list) != len(self._model_variables_moving_average):
            raise ValueError(
                f"{type(self).__name__}: the number of model variables ({len(var_list)}) does "
                "not match the number of moving averages stored in the optimizer "
                f"({len(self._model_variables_moving_average)}). Check that the optimizer was "
                "called on this model."
            )
        for variable, average in zip(var_list, self._model_variables_moving_average, strict=True):
            variable.assign(average)

    def finalize_variable_values(self, var_list):
        """With ``use_ema``, overwrites the variables with their moving averages."""
        if self.use_ema:
            self._overwrite_model_variables_with_average_value(var_list)

    # ------------------------------------------------------------ state, config

    def get_weights(self):
        """The values of ``variables`` as numpy arrays."""
        return [v.numpy() for v in self._variables]

    def set_weights(self, weights):
        """Assigns ``variables`` from numpy arrays (the optimizer must be built)."""
        if not self.built:
            raise ValueError(
                f"{type(self).__name__}: set_weights() needs a built optimizer; call "
                "`optimizer.build(trainable_variables)` first."
            )
        weights = list(weights)
        if len(weights) != len(self._variables):
            raise ValueError(
                f"{type(self).__name__}: set_weights() expected {len(self._variables)} "
                f"arrays, received {len(weights)}."
            )
        for variable, weight in zip(self._variables, weights, strict=True):
            weight = np.asarray(weight)
            if tuple(variable.shape) != weight.shape:
                raise ValueError(
                    f"{type(self).__name__}: optimizer variable {variable.name!r} has shape "
                    f"{tuple(variable.shape)}, not compatible with weight shape {weight.shape}."
                )
            variable.assign(ft.constant(weight, dtype=variable.dtype))

    def get_config(self):
        """The constructor arguments, as a dict ``from_config`` accepts."""
        learning_rate = self._learning_rate
        if isinstance(learning_rate, ft.Variable):
            learning_rate = float(learning_rate.numpy())
        elif isinstance(learning_rate, _schedules.LearningRateSchedule):
            learning_rate = _schedules.serialize(learning_rate)
        config = {
            "name": self.name,
            "learning_rate": learning_rate,
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            "loss_scale_factor": self.loss_scale_factor,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }
        if self._legacy_decay:
            config["decay"] = self._legacy_decay
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """An optimizer from ``get_config()``'s dict (a schedule config is deserialized)."""
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = _schedules.deserialize(
                config["learning_rate"], custom_objects=custom_objects
            )
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"
