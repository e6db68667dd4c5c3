"""``tf.data.Options`` and its groups (``ThreadingOptions``, ...): typed settings a dataset
carries (``Dataset.with_options`` / ``Dataset.options``).

ferrotape's pipeline runs eagerly on the calling thread, so the options change nothing in
how it runs; they are kept, checked and merged as TensorFlow keeps them, so that programs
that set them run unchanged. As in TensorFlow, setting an unknown option raises
AttributeError and a value of the wrong type TypeError; an unset option reads as None (its
TensorFlow default applies).

>>> import ferrotape as ft
>>> options = ft.data.Options()
>>> options.deterministic = False
>>> options.threading.private_threadpool_size = 4
>>> ds = ft.data.Dataset.range(3).with_options(options)
>>> ds.options().deterministic, ds.options().threading.private_threadpool_size
(False, 4)
"""


class _OptionsBase:
    """Typed, initially unset fields (``_FIELDS``: name -> type or option group class);
    groups are created on first read."""

    _FIELDS: dict = {}
    _ALIASES: dict = {}

    def __init__(self):
        object.__setattr__(self, "_values", {})

    def __getattr__(self, name):
        name = self._ALIASES.get(name, name)
        fields = type(self)._FIELDS
        if name not in fields:
            raise AttributeError(f"{type(self).__name__} has no option {name!r}")
        kind = fields[name]
        values = object.__getattribute__(self, "_values")
        if name not in values and isinstance(kind, type) and issubclass(kind, _OptionsBase):
            values[name] = kind()
        return values.get(name)

    def __setattr__(self, name, value):
        name = self._ALIASES.get(name, name)
        kind = type(self)._FIELDS.get(name)
        if kind is None:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        if value is not None and kind is not object and not isinstance(value, kind):
            raise TypeError(
                f'Property "{name}" must be of type {kind}, got: {value} (type: {type(value)})'
            )
        if isinstance(value, bool) and kind is int:
            raise TypeError(f'Property "{name}" must be of type {kind}, got: {value}')
        self._values[name] = value

    def _set_values(self):
        """``{name: value}`` of the options set (groups as their own dicts, when any is)."""
        out = {}
        for name, value in self._values.items():
            if isinstance(value, _OptionsBase):
                value = value._set_values()
                if not value:
                    continue
            if value is not None:
                out[name] = value
        return out

    def _merge_into(self, target):
        for name, value in self._values.items():
            if isinstance(value, _OptionsBase):
                value._merge_into(getattr(target, name))
            elif value is not None:
                target._values[name] = value

    def __eq__(self, other):
        return type(self) is type(other) and self._set_values() == other._set_values()

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __repr__(self):
        return f"{type(self).__name__}({self._set_values()})"


class ThreadingOptions(_OptionsBase):
    """Threading settings: ``max_intra_op_parallelism`` and ``private_threadpool_size``
    (ints; ferrotape's pipeline runs on the calling thread, so both are accepted and kept)."""

    _FIELDS = {"max_intra_op_parallelism": int, "private_threadpool_size": int}


class AutotuneOptions(_OptionsBase):
    """Autotuning settings (``enabled``, ``cpu_budget``, ``ram_budget``, ...), kept as set."""

    _FIELDS = {
        "autotune_algorithm": object,
        "cpu_budget": int,
        "enabled": bool,
        "initial_parallelism": int,
        "min_parallelism": int,
        "ram_budget": int,
    }


class OptimizationOptions(_OptionsBase):
    """Graph-rewrite switches of tf.data (``map_fusion``, ``parallel_batch``, ...): bools, kept
    as set (ferrotape's eager pipeline has no graph to rewrite)."""

    _FIELDS = {
        name: bool
        for name in (
            "apply_default_optimizations",
            "filter_fusion",
            "filter_parallelization",
            "inject_prefetch",
            "map_and_batch_fusion",
            "map_and_filter_fusion",
            "map_fusion",
            "map_parallelization",
            "noop_elimination",
            "parallel_batch",
            "seq_interleave_prefetch",
            "shuffle_and_repeat_fusion",
        )
    }


class DistributeOptions(_OptionsBase):
    """Distribution settings (``auto_shard_policy``, ``num_devices``), kept as set."""

    _FIELDS = {"auto_shard_policy": object, "num_devices": int}


class Options(_OptionsBase):
    """The options of a dataset: ``deterministic``, ``threading``, ``autotune``,
    ``experimental_optimization``, ``experimental_slack``, ... (``experimental_deterministic``
    and ``experimental_threading`` are the old names of two of them)."""

    _FIELDS = {
        "autotune": AutotuneOptions,
        "dataset_name": str,
        "deterministic": bool,
        "experimental_distribute": DistributeOptions,
        "experimental_external_state_policy": object,
        "experimental_optimization": OptimizationOptions,
        "experimental_service": object,
        "experimental_slack": bool,
        "experimental_symbolic_checkpoint": bool,
        "experimental_warm_start": bool,
        "framework_type": list,
        "threading": ThreadingOptions,
    }
    _ALIASES = {
        "experimental_deterministic": "deterministic",
        "experimental_threading": "threading",
    }

    def merge(self, options):
        """A new ``Options`` with this one's settings, overridden by those set in
        ``options``.

        Args:
            options: An ``Options``.

        Returns:
            The merged ``Options``.
        """
        if not isinstance(options, Options):
            raise TypeError(f"Options.merge: expected an Options, received {type(options)}")
        merged = Options()
        self._merge_into(merged)
        options._merge_into(merged)
        return merged


__all__ = [
    "AutotuneOptions",
    "DistributeOptions",
    "OptimizationOptions",
    "Options",
    "ThreadingOptions",
]
