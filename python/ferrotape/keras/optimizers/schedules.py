"""``ft.keras.optimizers.schedules``: learning rates that change with the optimizer's step.

A schedule is called with the step (an int, or the optimizer's ``iterations`` variable, the
number of steps applied *before* the current one) and returns the learning rate as a float32
scalar tensor. The arithmetic is done in Python floats: a schedule runs once per training
step, on scalars, so tensor ops would only add overhead.

>>> import ferrotape as ft
>>> schedule = ft.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
>>> round(float(schedule(20)), 6)  # 0.1 * 0.5 ** (20 / 10)
0.025
"""

import math

import ferrotape as ft


def _step_as_float(step):
    """The step as a Python float, from an int, a numpy scalar, a tensor or a variable."""
    if hasattr(step, "numpy"):
        step = step.numpy()
    return float(step)


def _check_decay_steps(schedule, decay_steps, argument="decay_steps"):
    if decay_steps <= 0:
        raise ValueError(
            f"{type(schedule).__name__}: argument `{argument}` must be > 0. "
            f"Received: {argument}={decay_steps}"
        )


class LearningRateSchedule:
    """Base class of the schedules. Subclasses implement ``__call__(step)`` (and ``get_config``
    to be serializable); the built-in ones implement ``_value(step)`` on Python floats."""

    def __call__(self, step):
        value = self._value(_step_as_float(step))
        return ft.constant(value, dtype=ft.float32)

    def _value(self, step):
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, step)`."
        )

    def get_config(self):
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `get_config()` in "
            "order to be serializable."
        )

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``; with ``staircase``, the
    exponent is floored (the rate drops every ``decay_steps`` steps)."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        decay_rate,
        staircase=False,
        name="ExponentialDecay",
    ):
        _check_decay_steps(self, decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def _value(self, step):
        progress = step / self.decay_steps
        if self.staircase:
            progress = math.floor(progress)
        return self.initial_learning_rate * self.decay_rate**progress

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class InverseTimeDecay(LearningRateSchedule):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``; with ``staircase``,
    ``step / decay_steps`` is floored."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        decay_rate,
        staircase=False,
        name="InverseTimeDecay",
    ):
        _check_decay_steps(self, decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def _value(self, step):
        progress = step / self.decay_steps
        if self.staircase:
            progress = math.floor(progress)
        return self.initial_learning_rate / (1.0 + self.decay_rate * progress)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[1]`` while
    ``boundaries[0] < step <= boundaries[1]``, ..., ``values[-1]`` after ``boundaries[-1]``."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "PiecewiseConstantDecay: the length of boundaries should be 1 less than the "
                f"length of values. Received: boundaries={boundaries} of length "
                f"{len(boundaries)}, and values={values} of length {len(values)}."
            )
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def _value(self, step):
        for boundary, value in zip(self.boundaries, self.values, strict=False):
            if step <= boundary:
                return float(value)
        return float(self.values[-1])

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """``(initial - end) * (1 - step / decay_steps) ** power + end`` with ``step`` capped at
    ``decay_steps``; with ``cycle``, ``decay_steps`` grows to the first multiple above
    ``step`` instead."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        end_learning_rate=0.0001,
        power=1.0,
        cycle=False,
        name="PolynomialDecay",
    ):
        _check_decay_steps(self, decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def _value(self, step):
        decay_steps = float(self.decay_steps)
        if self.cycle:
            decay_steps *= 1.0 if step == 0 else math.ceil(step / decay_steps)
        else:
            step = min(step, decay_steps)
        fraction_left = 1.0 - step / decay_steps
        span = self.initial_learning_rate - self.end_learning_rate
        return span * fraction_left**self.power + self.end_learning_rate

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }


class CosineDecay(LearningRateSchedule):
    """Cosine decay with an optional linear warmup.

    Without warmup: ``initial * ((1 - alpha) * 0.5 * (1 + cos(pi * s / decay_steps)) + alpha)``
    with ``s = min(step, decay_steps)``. With ``warmup_target``, the rate first rises linearly
    from ``initial_learning_rate`` to ``warmup_target`` over ``warmup_steps`` steps, then decays
    from ``warmup_target`` the same way over the next ``decay_steps``.
    """

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        alpha=0.0,
        name="CosineDecay",
        warmup_target=None,
        warmup_steps=0,
    ):
        _check_decay_steps(self, decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_steps = warmup_steps
        self.warmup_target = warmup_target

    def _decayed(self, step, decay_from):
        cosine = 0.5 * (1.0 + math.cos(math.pi * step / self.decay_steps))
        return decay_from * ((1.0 - self.alpha) * cosine + self.alpha)

    def _value(self, step):
        if self.warmup_target is None:
            return self._decayed(min(step, self.decay_steps), self.initial_learning_rate)
        step = min(step, self.decay_steps + self.warmup_steps)
        if step < self.warmup_steps:
            rise = self.warmup_target - self.initial_learning_rate
            return rise * step / self.warmup_steps + self.initial_learning_rate
        return self._decayed(step - self.warmup_steps, self.warmup_target)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): the first period lasts ``first_decay_steps``,
    each next one ``t_mul`` times longer and with a peak ``m_mul`` times the previous one."""

    def __init__(
        self,
        initial_learning_rate,
        first_decay_steps,
        t_mul=2.0,
        m_mul=1.0,
        alpha=0.0,
        name="SGDRDecay",
    ):
        _check_decay_steps(self, first_decay_steps, "first_decay_steps")
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def _value(self, step):
        fraction = step / self.first_decay_steps
        t_mul = self._t_mul
        if t_mul == 1.0:
            restart = math.floor(fraction)
            fraction -= restart
        else:
            # Periods grow geometrically: find the period the step falls in, then the
            # fraction of that period completed.
            restart = math.floor(math.log(1.0 - fraction * (1.0 - t_mul)) / math.log(t_mul))
            periods_done = (1.0 - t_mul**restart) / (1.0 - t_mul)
            fraction = (fraction - periods_done) / t_mul**restart
        peak = self._m_mul**restart
        cosine = 0.5 * peak * (1.0 + math.cos(math.pi * fraction))
        return self.initial_learning_rate * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "first_decay_steps": self.first_decay_steps,
            "t_mul": self._t_mul,
            "m_mul": self._m_mul,
            "alpha": self.alpha,
            "name": self.name,
        }


_SCHEDULES = {
    cls.__name__: cls
    for cls in (
        ExponentialDecay,
        InverseTimeDecay,
        PiecewiseConstantDecay,
        PolynomialDecay,
        CosineDecay,
        CosineDecayRestarts,
    )
}


def serialize(learning_rate_schedule):
    """A schedule as ``{"module", "class_name", "config", "registered_name"}``."""
    return {
        "module": "keras.optimizers.schedules",
        "class_name": type(learning_rate_schedule).__name__,
        "config": learning_rate_schedule.get_config(),
        "registered_name": None,
    }


def deserialize(config, custom_objects=None):
    """A schedule from ``serialize``'s dict."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            f"schedules.deserialize: expected a dict with 'class_name' and 'config'. "
            f"Received: {config!r}"
        )
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _SCHEDULES.get(name)
    if cls is None:
        raise ValueError(f"schedules.deserialize: unknown schedule class {name!r}.")
    return cls.from_config(config.get("config", {}))


__all__ = [
    "CosineDecay",
    "CosineDecayRestarts",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LearningRateSchedule",
    "PiecewiseConstantDecay",
    "PolynomialDecay",
    "deserialize",
    "serialize",
]
