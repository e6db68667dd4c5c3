"""``ft.function``: a Python function traced once per kind of call, then replayed from Rust.

The first call with a new *key* runs the Python function while ferrotape records the kernels it
runs (its forward pass, the backward pass of any tape inside, variable reads and writes,
optimizer steps). Later calls with the same key replay that record without running any Python,
as TensorFlow runs a traced graph: Python side effects (``print``, appending to a list) happen
only while tracing, ``tf.print`` on every call.

The key, as TensorFlow's: the shapes and dtypes of the tensor arguments (numpy arrays count as
tensors), the values of the other arguments (Python numbers, strings, ``None``, and hashable
objects; other objects by identity), and which arguments are the same tensor. An
``input_signature`` checks the tensors against its ``TensorSpec`` s; ferrotape still records one
trace per concrete shape (a ``None`` dimension matches any size), which only shows as Python
side effects running again for a new shape.

What cannot be replayed runs eagerly instead, with a one-time warning naming the reason and the
Python line: reading a traced tensor's value into Python (``.numpy()``, ``float(t)``, a Python
``if`` on a tensor), or an operation ferrotape cannot record yet. A function called while a
gradient tape outside it is recording, or a forward accumulator is active, also runs eagerly,
so that the tape (or accumulator) sees every operation (the result is the same).
``tf.config.run_functions_eagerly(True)`` turns tracing off.
"""

import functools
import inspect
import warnings
import weakref

import numpy as np

from . import _core, config, nest

__all__ = ["Function", "function"]


class _EagerOnly:
    """A key whose trace was refused: the function runs eagerly for it (``reason`` says why)."""

    def __init__(self, reason):
        self.reason = reason


class ConcreteFunction:
    """One trace of a ``Function``: its replayable graph and the structure of its result.

    Calling it replays the graph on tensors shaped like those it was traced with.
    """

    def __init__(self, graph, skeleton, leaves, slots, function_name):
        self._graph = graph
        self._skeleton = skeleton  # the result's structure, its tensors replaced by None
        self._leaves = leaves  # its flat leaves: the Python constants, None for tensors
        self._slots = slots  # for each flat leaf, its output index (None: a Python constant)
        self._name = function_name

    @property
    def graph(self):
        """The replayable graph (``node_names()`` lists the recorded kernel calls)."""
        return self._graph

    def _run(self, tensors):
        outputs = self._graph.run(tensors)
        if self._skeleton is None and self._slots == [0]:
            # A single tensor returned: nothing to pack (a twentieth of a small step's time).
            return outputs[0]
        flat = [
            leaf if slot is None else outputs[slot]
            for leaf, slot in zip(self._leaves, self._slots, strict=True)
        ]
        return nest.pack_sequence_as(self._skeleton, flat)

    def __repr__(self):
        return f"<ConcreteFunction {self._name} ({len(self._graph)} recorded operations)>"


def _leaf_key(leaf, tensors, seen):
    """The part of the trace key for one flat argument (tensors are collected as inputs)."""
    if isinstance(leaf, np.ndarray):
        leaf = _core.convert_to_tensor(leaf)
    if isinstance(leaf, _core.Tensor):
        alias = seen.setdefault(id(leaf), len(seen))
        tensors.append(leaf)
        return ("tensor", tuple(leaf.shape.as_list()), leaf.dtype.name, alias), leaf
    if isinstance(leaf, _core.Variable):
        return ("variable", id(leaf)), leaf
    if leaf is None or isinstance(leaf, (bool, int, float, str, bytes)):
        return ("value", type(leaf).__name__, leaf), leaf
    try:
        hash(leaf)
    except TypeError:
        return ("object", id(leaf)), leaf
    return ("hashable", type(leaf), leaf), leaf


def _check_signature(signature, tensors, name):
    """TensorFlow's input_signature check: as many tensors, each compatible with its spec."""
    if len(tensors) != len(signature):
        raise TypeError(
            f"{name}: the input_signature has {len(signature)} TensorSpecs but the call passed "
            f"{len(tensors)} tensors"
        )
    for i, (spec, t) in enumerate(zip(signature, tensors, strict=True)):
        if spec.dtype is not None and spec.dtype != t.dtype:
            raise TypeError(
                f"{name}: argument {i} has dtype {t.dtype.name}, but the input_signature "
                f"expects {spec.dtype.name}"
            )
        if not spec.is_compatible_with(t):
            raise ValueError(
                f"{name}: argument {i} has shape {t.shape}, which is not compatible with the "
                f"input_signature's {spec.shape}"
            )


class Function:
    """A Python function compiled by tracing (``ft.function``'s result).

    Call it as the function itself. ``python_function`` is the undecorated function,
    ``experimental_get_tracing_count()`` counts the traces made so far, and
    ``get_concrete_function(*args)`` traces (if needed) and returns the trace for a call.
    """

    def __init__(self, python_function, input_signature=None, name=None):
        self._python_function = python_function
        self._input_signature = None if input_signature is None else list(input_signature)
        self._name = name or getattr(python_function, "__name__", "function")
        self._traces = {}
        self._tracing_count = 0
        self._warned = set()
        self._bound = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self):
        """The Python function this wraps."""
        return self._python_function

    @property
    def input_signature(self):
        """The ``TensorSpec`` list given as ``input_signature``, or ``None``."""
        return self._input_signature

    def experimental_get_tracing_count(self):
        """How many times the Python function has been traced."""
        return self._tracing_count

    def __get__(self, instance, owner):
        """A method: each instance gets its own ``Function`` (its own traces), as in TF."""
        if instance is None:
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = Function(
                self._python_function.__get__(instance, owner),
                self._input_signature,
                self._name,
            )
            self._bound[instance] = bound
        return bound

    def _key(self, args, kwargs):
        # The common call, tensors as positional arguments (or none), has no structure to
        # flatten or rebuild: that took a sixth of a small traced step's time. Its key is the
        # same tuple the general path builds.
        plain = not kwargs and all(type(arg) is _core.Tensor for arg in args)
        flat = args if plain else nest.flatten((args, kwargs))
        tensors, seen, key, leaves = [], {}, [], []
        for leaf in flat:
            part, value = _leaf_key(leaf, tensors, seen)
            key.append(part)
            leaves.append(value)
        if self._input_signature is not None:
            _check_signature(self._input_signature, tensors, self._name)
        packed = (args, kwargs) if plain else nest.pack_sequence_as((args, kwargs), leaves)
        return tuple(key), tensors, packed

    def __call__(self, *args, **kwargs):
        if config.functions_run_eagerly() or _core.is_tracing() or _core.tape_is_recording():
            # Eagerly: switched off, inlined into an outer trace, or watched by a tape/accumulator.
            return self._python_function(*args, **kwargs)
        key, tensors, (args, kwargs) = self._key(args, kwargs)
        concrete = self._traces.get(key)
        if concrete is None:
            return self._trace(key, tensors, args, kwargs)
        if isinstance(concrete, _EagerOnly):
            return self._python_function(*args, **kwargs)
        return concrete._run(tensors)

    def _trace(self, key, tensors, args, kwargs):
        self._tracing_count += 1
        _core.trace_begin(tensors)
        try:
            result = self._python_function(*args, **kwargs)
        except BaseException:
            _core.trace_abandon()
            raise
        flat = nest.flatten(result)
        out_tensors, slots, leaves = [], [], []
        for leaf in flat:
            if isinstance(leaf, _core.Tensor):
                slots.append(len(out_tensors))
                out_tensors.append(leaf)
                leaves.append(None)
            else:
                slots.append(None)
                leaves.append(leaf)
        graph = _core.trace_end(out_tensors)
        if isinstance(graph, str):
            self._traces[key] = _EagerOnly(graph)
            self._warn_once(graph)
        else:
            # The skeleton holds no tensor of this call, so the trace keeps none of them alive.
            skeleton = nest.pack_sequence_as(result, leaves)
            self._traces[key] = ConcreteFunction(graph, skeleton, leaves, slots, self._name)
        return result

    def _warn_once(self, reason):
        if reason in self._warned:
            return
        self._warned.add(reason)
        warnings.warn(
            f"ft.function: {self._name} runs eagerly for these arguments: {reason}",
            RuntimeWarning,
            stacklevel=4,
        )

    def get_concrete_function(self, *args, **kwargs):
        """The trace for a call with these arguments, tracing first if there is none.

        Raises:
            ValueError: the trace was refused (the function runs eagerly for this key).
        """
        key, tensors, (args, kwargs) = self._key(args, kwargs)
        if key not in self._traces:
            self._trace(key, tensors, args, kwargs)
        concrete = self._traces[key]
        if isinstance(concrete, _EagerOnly):
            raise ValueError(
                f"{self._name} cannot be traced for these arguments: {concrete.reason}"
            )
        return concrete

    def __repr__(self):
        return f"<ferrotape.Function {self._name}>"


def function(
    func=None,
    input_signature=None,
    autograph=True,
    jit_compile=None,
    reduce_retracing=False,
    experimental_implements=None,
    experimental_autograph_options=None,
    experimental_attributes=None,
    experimental_relax_shapes=None,
    experimental_compile=None,
    experimental_follow_type_hints=None,
    name=None,
):
    """Compiles ``func`` by tracing: later calls replay the recorded kernels from Rust.

    Usable as ``@ft.function`` or ``@ft.function(input_signature=...)``, on functions and
    methods. See this module's documentation for the trace key and what runs eagerly instead.

    Args:
        func: The Python function to compile; ``None`` when called with keyword arguments.
        input_signature: A list of ``ft.TensorSpec`` the tensor arguments must match.
        autograph: TensorFlow's option; Python control flow on tensor values runs eagerly.
        jit_compile: Accepted; replays are always compiled kernel sequences.
        reduce_retracing: Accepted; ferrotape traces once per concrete shape.
        experimental_implements: Accepted and ignored.
        experimental_autograph_options: Accepted and ignored.
        experimental_attributes: Accepted and ignored.
        experimental_relax_shapes: Accepted and ignored.
        experimental_compile: Accepted and ignored.
        experimental_follow_type_hints: Accepted and ignored.
        name: The name used in warnings and reprs (the function's own by default).

    Returns:
        A ``Function``, or a decorator making one.

    >>> import ferrotape as ft
    >>> calls = []
    >>> @ft.function
    ... def double(x):
    ...     calls.append(1)  # a Python side effect: runs only while tracing
    ...     return 2 * x
    >>> double(ft.constant(3.0)).numpy(), double(ft.constant(4.0)).numpy()
    (np.float32(6.0), np.float32(8.0))
    >>> len(calls), double.experimental_get_tracing_count()
    (1, 1)
    """
    del autograph, jit_compile, reduce_retracing, experimental_implements
    del experimental_autograph_options, experimental_attributes, experimental_relax_shapes
    del experimental_compile, experimental_follow_type_hints

    def decorate(f):
        if not callable(f):
            raise TypeError(f"function: expected a callable, received {type(f).__name__}")
        if inspect.isclass(f):
            raise TypeError("function: decorating a class is not supported; decorate its method")
        return Function(f, input_signature, name)

    return decorate if func is None else decorate(func)
