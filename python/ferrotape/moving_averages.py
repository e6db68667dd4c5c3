"""``ft.train.ExponentialMovingAverage`` (TensorFlow's ``training/moving_averages.py``).

Each ``apply`` moves a shadow copy of every variable towards its current value:
``shadow -= (1 - decay) * (shadow - value)``. With ``num_updates`` the decay is
``min(decay, (1 + num_updates) / (10 + num_updates))``, small at first so that early averages
follow the variables. A shadow starts at its variable's value. As in TensorFlow 2's eager
mode, only Variables can be averaged (``zero_debias`` concerns plain tensors, so it changes
nothing here).

>>> import ferrotape as ft
>>> w = ft.Variable(0.0, name="w")
>>> ema = ft.train.ExponentialMovingAverage(decay=0.9)
>>> ema.apply([w])
>>> _ = w.assign(10.0)
>>> ema.apply([w])
>>> round(float(ema.average(w)), 5), ema.average_name(w)
(1.0, 'w/ExponentialMovingAverage')
"""

from . import _core


def _base_name(value):
    name = getattr(value, "name", None) or "Variable:0"
    return name.split(":")[0]


class ExponentialMovingAverage:
    """Maintains exponential moving averages of variables (or tensors).

    Args:
        decay: The decay, a float in ``[0, 1]`` (typically close to 1: 0.999, 0.9999).
        num_updates: None, or a count of updates (a number or a Variable, read at each
            ``apply``) that lowers the decay early on.
        zero_debias: Kept for TensorFlow's signature (it concerns plain tensors, which eager
            code cannot average).
        name: The suffix of the shadow variables' names.
    """

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        """Creates the averager; the shadows come with ``apply``.

        Args:
            decay: The decay, a float in ``[0, 1]``.
            num_updates: None, or a count of updates (a number or a Variable).
            zero_debias: Kept for TensorFlow's signature.
            name: The suffix of the shadow variables' names.
        """
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = bool(zero_debias)
        self._name = name
        self._averages = {}  # var.ref() -> shadow Variable

    @property
    def name(self):
        """The suffix of the shadow variables' names."""
        return self._name

    def _shadow(self, var):
        if not isinstance(var, _core.Variable):
            raise TypeError(
                "tf.train.ExponentialMovingAverage does not support non-Variable tensors when "
                f"eager execution is enabled. Received: {type(var).__name__}"
            )
        if not var.dtype.is_floating:
            raise TypeError(
                "ExponentialMovingAverage: the variables must be floating point. Received "
                f"{var.name} of dtype {var.dtype.name}"
            )
        name = f"{_base_name(var)}/{self._name}"
        return _core.Variable(var.read_value(), trainable=False, name=name)

    def _current_decay(self):
        decay = float(self._decay)
        if self._num_updates is not None:
            n = float(_core.convert_to_tensor(self._num_updates).numpy())
            decay = min(decay, (1.0 + n) / (10.0 + n))
        return decay

    def apply(self, var_list=None):
        """Creates the shadows of new entries of ``var_list``, then moves every shadow of
        ``var_list`` one step towards its variable's value.

        Args:
            var_list: A list of floating-point Variables (None: nothing).

        Raises:
            TypeError: for a value that is not a floating-point Variable.
        """
        var_list = list(var_list or [])
        refs = [v.ref() for v in var_list]
        for var, ref in zip(var_list, refs, strict=True):
            if ref not in self._averages:
                self._averages[ref] = self._shadow(var)
        rate = 1.0 - self._current_decay()
        for var, ref in zip(var_list, refs, strict=True):
            shadow = self._averages[ref]
            shadow.assign_sub((shadow - var.read_value()) * rate)

    def average(self, var):
        """The shadow Variable of ``var``.

        Args:
            var: A Variable passed to ``apply``.

        Returns:
            Its shadow Variable, or None if ``apply`` never saw it.
        """
        return self._averages.get(var.ref())

    def average_name(self, var):
        """The name of ``var``'s shadow (without ``:0``): ``<var's name>/<self.name>``.

        Args:
            var: A Variable.

        Returns:
            The name, as checkpoints and ``variables_to_restore`` use it.
        """
        shadow = self._averages.get(var.ref())
        return _base_name(shadow) if shadow is not None else f"{_base_name(var)}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None):
        """The map that restores averaged values into the variables themselves.

        Args:
            moving_avg_variables: The Variables (default: every one ``apply`` has seen).

        Returns:
            ``{average_name(v): v}`` for each of them.
        """
        if moving_avg_variables is None:
            moving_avg_variables = [ref.deref() for ref in self._averages]
        return {self.average_name(v): v for v in moving_avg_variables}


__all__ = ["ExponentialMovingAverage"]
