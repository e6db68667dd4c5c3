"""``ft.function``: a Python function traced once per kind of call, then replayed from Rust.

The first call with a new *key* runs the Python function while ferrotape records the kernels it
runs (its forward pass, the backward pass of any tape inside, variable reads and writes,
optimizer steps). Later calls with the same key replay that record without running any Python,
as TensorFlow runs a traced graph: Python side effects (``print``, appending to a list) happen
only while tracing, ``tf.print`` on every call.

The key, as TensorFlow's: the shapes and dtypes of the tensor arguments (numpy arrays count as
tensors), the values of the other arguments (Python numbers, strings, ``None``, and hashable
objects; other objects by identity). ferrotape's key also holds which arguments are the same
tensor, the identity of a variable passed as an argument, and the type of a Python number
(``True`` is not ``1``), where TensorFlow's does not: such calls trace once more than in
TensorFlow, with the same results. An ``input_signature`` converts Python values to tensors of
its ``TensorSpec`` s' dtypes and checks the tensors against them (``TypeError`` on a mismatch).

A ``None`` dimension of an ``input_signature`` is traced once for every size, as in TensorFlow:
while tracing, the arguments' ``shape`` shows ``None`` there, and the trace (recorded at the
first call's sizes) learns how every value's shape follows those sizes (see
``ferrotape-autodiff/src/trace/sizes.rs``); a call with other sizes replays it. Where that
cannot be known to give the function's results, the trace serves its own sizes only and each
new size traces again, as every shape did before: Python read a size that follows a ``None``
dimension (``h.shape[0]``, ``len(h)``), made a constant of such a size, or ran a kernel that
replays an attribute computed from the sizes (``h[:-1]``, a gather along the batch axis; a
slice taking the axis whole, ``h[:, 0]``, follows every size); sizes 0 and 1 (where
an axis broadcasts, or ``squeeze`` drops it) and traces that branch on tensor values also trace
per size. ``reduce_retracing=True`` relaxes the sizes that differ between a call and an earlier
trace to ``None`` in the same way, as TensorFlow's relaxed shapes.

``get_concrete_function`` returns a ``ConcreteFunction``: the function bound to one signature,
its tensors as ``TensorSpec`` s and its other arguments fixed. Made from tensors it traces at
once; made from specs (or an ``input_signature``) it traces on its first call, once for every
size of their ``None`` dimensions like the function itself.

As in TensorFlow, variables may be created on the first trace only (a ``ValueError`` after it),
and Python numbers and variables in the result come back as tensors (a variable as its value at
that call). What the host computes in Python and a replay must compute again for each call (a
``tf.data`` iterator's next batch, a ``tf.random.Generator``'s draw, a numpy metric) goes
through ``host_computed``.

Branches on tensor values (a Python ``if`` or ``while`` on a tensor, ``tf.cond``,
``tf.while_loop``, ``int(t)`` of an integer tensor) are *guarded*: the trace records the value
the branch read (a bool or integer value of at most 64 elements), and a replay that sees another
value stops there, undoes the variable writes it made before (an optimizer step included), and
replays the trace of that other path, or traces it when it is new. ``tf.print`` output waits
until a replay has passed every branch; random numbers drawn before the branch stay drawn. Each
key keeps up to ``MAX_PATHS`` such traces; a function that takes more paths for one key (a loop
whose count changes on every call) then runs eagerly for it, with a warning. The results are
TensorFlow's; only Python side effects differ: TensorFlow's autograph traces both branches of an
``if`` once, ferrotape traces the branch taken, once per path.

What cannot be replayed runs eagerly instead, with a one-time warning naming the reason and the
Python line: reading a traced floating-point value into Python (``.numpy()``, ``float(t)``, an
``if`` on a float tensor itself), or an operation ferrotape cannot record yet. A function called
while a gradient tape outside it is recording, or a forward accumulator is active, also runs
eagerly, so that the tape (or accumulator) sees every operation (the result is the same).
``tf.config.run_functions_eagerly(True)`` turns tracing off.
"""

import functools
import inspect
import sys
import warnings
import weakref

import numpy as np

from . import _core, config, nest
from .errors import InvalidArgumentError, OutOfRangeError
from .tensor_spec import TensorSpec

__all__ = [
    "Function",
    "computed_on_host_when_traced",
    "function",
    "host_computed",
    "host_output",
    "tensor_arguments",
]

#: The most traces one key keeps for different paths through branches on tensor values.
MAX_PATHS = 8


def _first_caller_outside_this_module():
    """The ``stacklevel`` of the user's call, for a warning issued by the caller of this."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


def _as_tensor(leaf):
    if isinstance(leaf, (bool, int, float, np.generic, np.ndarray)):
        return _core.convert_to_tensor(leaf)
    if isinstance(leaf, _core.Variable):
        return leaf.read_value()  # its value at this call, not the variable itself
    return leaf


def _python_numbers_as_tensors(result):
    """``result`` with its Python and numpy numbers and its variables as tensors, as a traced
    TensorFlow function returns them (a ``str`` or ``None`` stays as it is)."""
    if isinstance(result, _core.Tensor):
        return result
    return nest.map_structure(_as_tensor, result)


def host_computed(compute, tensors):
    """``compute(*tensors)``: a list of tensors the host computes (numpy, any Python), usable
    inside a function ``ft.function`` traces, where reading values into Python would make the
    function run eagerly.

    Eagerly it just runs. While a trace is recorded it runs with the recording paused (nothing
    it does is part of the trace), its results go into holder variables, and the trace records
    a host callback that computes them again into the holders on every replay, from that call's
    tensors, and reads the holders: each replay gets its own call's values, and ``compute``'s
    Python runs on every call, as TensorFlow runs a ``py_function`` op.

    Raises:
        InvalidArgumentError: (at a replay) a result's shape or dtype differs from the traced
            one's.
    """
    if not _core.is_tracing():
        return compute(*tensors)
    _core.trace_pause()
    try:
        holders = [
            _core.Variable(_core.convert_to_tensor(r), trainable=False, name="host_result")
            for r in compute(*tensors)
        ]
    finally:
        _core.trace_resume()

    def refill(*values):
        results = [_core.convert_to_tensor(r) for r in compute(*values)]
        if len(results) != len(holders):
            raise InvalidArgumentError(
                f"a host computation returned {len(results)} results where its trace had "
                f"{len(holders)}"
            )
        for holder, result in zip(holders, results, strict=True):
            if result.dtype != holder.dtype or result.shape != holder.shape:
                raise InvalidArgumentError(
                    f"a host computation returned a {result.dtype.name} tensor of shape "
                    f"{result.shape} where its trace had {holder.dtype.name} of shape "
                    f"{holder.shape}"
                )
            holder.assign(result)

    _core.trace_host_effect(refill, list(tensors))
    return [holder.read_value() for holder in holders]


def computed_on_host_when_traced(*names):
    """Decorates an op that reads tensor arguments into Python (a numpy draw keyed by a seed):
    inside a trace, when one of the arguments ``names`` (any tensor argument when none are
    named) holds a value that differs from call to call, the whole call is a ``host_computed``
    of the trace, made again on every replay with that call's tensors. Reading the value would
    otherwise make it a guard of the trace, which a new seed on every call defeats.
    Otherwise (constant arguments, no trace) the op runs as it is."""

    def decorate(function):
        signature = inspect.signature(function)

        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            if not _core.is_tracing():
                return function(*args, **kwargs)
            if names:
                bound = signature.bind(*args, **kwargs).arguments
                watched = nest.flatten([bound.get(name) for name in names])
            else:
                watched = nest.flatten((args, kwargs))
            if not any(_varies(leaf) for leaf in watched):
                return function(*args, **kwargs)
            tensors, call = tensor_arguments(function, args, kwargs)
            made = []

            def compute(*values):
                result = call(*values)
                made[:] = [result]
                return nest.flatten(result)

            flat = host_computed(compute, tensors)
            return nest.pack_sequence_as(made[0], flat)

        return wrapped

    return decorate


def _varies(leaf):
    """Whether ``leaf`` is a value a replay of the trace being recorded may see differ."""
    if isinstance(leaf, _core.Variable):
        return True
    return isinstance(leaf, _core.Tensor) and _core.trace_holds_value(leaf)


def tensor_arguments(function, args, kwargs):
    """The tensors among ``args`` and ``kwargs`` (variables read), and ``function`` called on
    those arguments with the tensors replaced by its own arguments: for a host callback that
    makes the same call with each replay's tensors."""
    flat = nest.flatten((args, kwargs))
    where = [i for i, leaf in enumerate(flat) if isinstance(leaf, _core.Tensor | _core.Variable)]

    def call(*tensors):
        leaves = list(flat)
        for i, tensor in zip(where, tensors, strict=True):
            leaves[i] = tensor
        call_args, call_kwargs = nest.pack_sequence_as((args, kwargs), leaves)
        return function(*call_args, **call_kwargs)

    return [_core.convert_to_tensor(flat[i]) for i in where], call


def host_output(function=None, *, context=None):
    """Decorates a function that only writes output from tensors' values (a summary), so that
    a function ``ft.function`` traces can call it: while a trace is recorded, the call runs with
    the recording paused and the trace records a host callback that makes it again on every
    replay, with that call's tensors, once the replay has passed its branches (as
    ``tf.print``'s output). Tensors it returns become constants of the trace.

    ``context``, if given, is called while tracing and returns a context manager factory: each
    replay's call runs inside it (the host state the trace saw, such as the default summary
    writer, which TensorFlow's trace captures). Usable as ``@host_output`` or
    ``@host_output(context=...)``."""
    if function is None:
        return functools.partial(host_output, context=context)

    @functools.wraps(function)
    def traced(*args, **kwargs):
        if not _core.is_tracing():
            return function(*args, **kwargs)
        tensors, run = tensor_arguments(function, args, kwargs)
        _core.trace_pause()
        try:
            result = run(*tensors)
        finally:
            _core.trace_resume()
        replay = run
        if context is not None:
            within = context()

            def replay(*values):
                with within():
                    return run(*values)

        _core.trace_host_effect(replay, tensors, output_only=True)
        return nest.map_structure(
            lambda r: _core.constant(_core.host_value(r)) if isinstance(r, _core.Tensor) else r,
            result,
        )

    return traced


class _EagerOnly:
    """A key whose trace was refused: the function runs eagerly for it (``reason`` says why)."""

    def __init__(self, reason):
        self.reason = reason


class _Paths:
    """The traces of one key that branch on tensor values, one per path taken so far, the one
    replayed last first. Each trace's ``guards`` are the values its branches read, in order."""

    def __init__(self):
        self.traces = []

    def add(self, concrete):
        self.traces = [concrete] + [t for t in self.traces if t.guards != concrete.guards]


def _new_branch_place(paths):
    """Where the newest trace of ``paths`` first branched otherwise than the one before it."""
    newest, previous = paths.traces[0], paths.traces[1]
    guards = zip(newest.guards, previous.guards, strict=False)
    first = next((i for i, (a, b) in enumerate(guards) if a != b), 0)
    places = newest._graph.guard_places()
    return places[first] if first < len(places) else ""


class _Trace:
    """One trace of a ``Function``: its replayable graph and the structure of its result."""

    def __init__(self, graph, skeleton, leaves, slots):
        self._graph = graph
        self._skeleton = skeleton  # the result's structure, its tensors replaced by None
        self._leaves = leaves  # its flat leaves: the Python constants, None for tensors
        self._slots = slots  # for each flat leaf, its output index (None: a Python constant)
        self.guards = graph.guard_values()  # the values its branches on tensors read

    def _run(self, tensors):
        return self._pack(self._graph.run(tensors))

    def _pack(self, outputs):
        if self._skeleton is None and self._slots == [0]:
            # A single tensor returned: nothing to pack (a twentieth of a small step's time).
            return outputs[0]
        flat = [
            leaf if slot is None else outputs[slot]
            for leaf, slot in zip(self._leaves, self._slots, strict=True)
        ]
        return nest.pack_sequence_as(self._skeleton, flat)


class ConcreteFunction:
    """A ``Function`` bound to one signature: ``get_concrete_function``'s result.

    Its signature holds a ``TensorSpec`` for each tensor argument and the value of each other
    argument (``structured_input_signature``). A call binds its arguments to the Python
    function's parameters as TensorFlow does: tensors must have their specs' dtypes (Python
    values and numpy arrays are converted to them) and shapes, the other arguments must equal
    the bound values (``TypeError`` otherwise). It then runs as a call of the ``Function``
    would: one trace for every size of a ``None`` dimension of a spec (see the module docs),
    each path through branches on tensor values traced when first taken. A concrete function made
    from tensors traces at once, as TensorFlow does; one made from ``TensorSpec`` s traces on
    its first call, when ferrotape has values to trace with.
    """

    def __init__(self, function, args, kwargs, parameters):
        self._function = function
        self._parameters = parameters  # the Python function's inspect.Signature, or None
        self._args, self._kwargs = args, kwargs
        specs = [leaf for leaf in nest.flatten((args, kwargs)) if isinstance(leaf, TensorSpec)]
        self._free = _free_axes(specs)  # the axes its specs leave None, per tensor
        self._last_key = None  # the trace key of the last call, or of the trace made at once

    @property
    def structured_input_signature(self):
        """``(args, kwargs)`` bound to the Python function's parameters: a ``TensorSpec`` for
        each tensor (named after its parameter), the value of each other argument."""
        return self._args, dict(self._kwargs)

    @property
    def graph(self):
        """The replayable graph of the trace this concrete function ran last
        (``node_names()`` lists the recorded kernel calls).

        Raises:
            ValueError: it has not traced yet (made from ``TensorSpec`` s and never called),
                or the function runs eagerly for that call.
        """
        concrete = self._function._traces.get(self._last_key)
        if concrete is None and self._last_key is not None and self._free is not None:
            # Served by the trace of every size of its None dimensions.
            concrete = self._function._general.get(_erased(self._last_key, self._free))
        if type(concrete) is _Paths:
            concrete = concrete.traces[0]  # the path of the last call replayed or traced
        if type(concrete) is _Trace:
            return concrete._graph
        if isinstance(concrete, _EagerOnly):
            raise ValueError(
                f"{self._function._name} cannot be traced for these arguments: {concrete.reason}"
            )
        raise ValueError(
            f"{self._function._name}: this concrete function has not been traced yet; "
            "made from TensorSpecs, it traces on its first call"
        )

    def __call__(self, *args, **kwargs):
        """Runs the function on arguments matching ``structured_input_signature``.

        Raises:
            TypeError: the arguments do not bind to the signature (too many, missing, another
                value for a non-tensor argument, a tensor shape the spec does not allow).
            InvalidArgumentError: a tensor has another dtype than its spec.
        """
        function = self._function
        name = function._name
        if self._parameters is not None:
            args, kwargs = self._bind(args, kwargs)
        call = (tuple(args), dict(kwargs))
        template = (self._args, self._kwargs)
        values = [
            _bound_leaf(spec, value, name)
            for spec, value in zip(
                nest.flatten(template), _leaves_like(template, call, name), strict=True
            )
        ]
        args, kwargs = nest.pack_sequence_as(template, values)
        if config.functions_run_eagerly() or _core.is_tracing() or _core.tape_is_recording():
            return function._python_function(*args, **kwargs)
        key, tensors, (args, kwargs) = function._key(args, kwargs)
        self._last_key = key
        return function._dispatch(key, tensors, args, kwargs, self._free)

    def _bind(self, args, kwargs):
        """The call's arguments bound to the Python function's parameters. As in TensorFlow,
        a non-tensor argument may be left out when no tensor argument comes after it (it then
        takes the value the concrete function was made with)."""
        try:
            bound = self._parameters.bind_partial(*args, **kwargs)
        except TypeError as error:
            raise self._binding_error(error) from None
        made = self._parameters.bind_partial(*self._args, **self._kwargs).arguments
        names = list(self._parameters.parameters)
        arguments = {}
        for i, name in enumerate(names):
            if name in bound.arguments:
                arguments[name] = bound.arguments[name]
            elif name in made:
                if any(_holds_spec(made.get(later)) for later in names[i:]):
                    raise self._binding_error(f"missing a required argument: {name!r}")
                arguments[name] = made[name]
        bound = inspect.BoundArguments(self._parameters, arguments)
        return bound.args, bound.kwargs

    def _binding_error(self, error):
        return TypeError(
            f"{self._function._name}: the call does not bind to the concrete function's "
            f"signature {_describe_signature(self._args, self._kwargs)}: {error}"
        )

    def __repr__(self):
        return (
            f"<ConcreteFunction {self._function._name}"
            f"{_describe_signature(self._args, self._kwargs)}>"
        )


def _holds_spec(value):
    return any(isinstance(leaf, TensorSpec) for leaf in nest.flatten(value))


def _describe_signature(args, kwargs):
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"({', '.join(parts)})"


def _leaves_like(template, value, name):
    """The parts of ``value`` at the leaves of ``template``, in ``nest.flatten`` order (a leaf
    of the template may be a structure in ``value``: a Python list given for a tensor)."""
    leaves, stack = [], [(template, value)]
    while stack:
        t, v = stack.pop()
        if isinstance(t, dict):
            if not isinstance(v, dict) or sorted(v) != sorted(t):
                raise TypeError(f"{name}: expected a dict with keys {sorted(t)}, received {v!r}")
            stack.extend((t[k], v[k]) for k in reversed(sorted(t)))
        elif isinstance(t, (list, tuple)):
            if not isinstance(v, (list, tuple)) or len(v) != len(t):
                raise TypeError(
                    f"{name}: expected a sequence of {len(t)} items, received {_short(v)}"
                )
            stack.extend(reversed(list(zip(t, v, strict=True))))
        else:
            leaves.append(v)
    return leaves


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _bound_leaf(spec, value, name):
    """``value`` bound to a leaf of a concrete function's signature: a tensor of the spec's
    dtype and a compatible shape for a ``TensorSpec``, the same value otherwise."""
    if not isinstance(spec, TensorSpec):
        if isinstance(value, (_core.Tensor, _core.Variable)) or not _same_value(spec, value):
            raise TypeError(
                f"{name}: the concrete function was made for the argument value {spec!r}, "
                f"received {_short(value)}; call the ft.function itself for other values"
            )
        return spec
    if not isinstance(value, (_core.Tensor, _core.Variable)):
        value = _core.convert_to_tensor(value, dtype=spec.dtype)
    mismatch = _spec_mismatch(spec, value)
    if mismatch is not None:
        # As TensorFlow's concrete functions: another dtype is the op's error, a shape a
        # binding error.
        kind, what, expected = mismatch
        error = InvalidArgumentError if kind == "dtype" else TypeError
        raise error(
            f"{name}: the argument {spec.name or ''} {what}, not compatible with its "
            f"TensorSpec's {expected}"
        )
    return value


def _spec_mismatch(spec, tensor):
    """``(kind, what the tensor has, what the spec expects)`` where ``tensor`` does not match
    ``spec`` (``kind`` is ``"dtype"`` or ``"shape"``), else None."""
    if spec.dtype is not None and tensor.dtype != spec.dtype:
        return "dtype", f"has dtype {tensor.dtype.name}", spec.dtype.name
    if not spec.is_compatible_with(tensor):
        return "shape", f"has shape {tensor.shape}", str(spec.shape)
    return None


def _same_value(a, b):
    """Whether two non-tensor arguments make the same trace key (``True`` is not ``1``)."""
    return _leaf_key(a, [], {})[0] == _leaf_key(b, [], {})[0]


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


def _spec_source(leaf):
    """A numpy array as the tensor it counts as in a trace key; other leaves as they are."""
    return _core.convert_to_tensor(leaf) if isinstance(leaf, np.ndarray) else leaf


def _spec_of(leaf):
    """A tensor's ``TensorSpec`` (numpy arrays count as tensors); other leaves as they are."""
    leaf = _spec_source(leaf)
    return TensorSpec.from_tensor(leaf) if isinstance(leaf, _core.Tensor) else leaf


def _signature_key(leaf):
    """A concrete-function signature leaf as a hashable key part: a spec by shape and dtype
    (not by name), another value as a trace key holds it."""
    if isinstance(leaf, TensorSpec):
        dims = None if leaf.shape.rank is None else tuple(leaf.shape.as_list())
        return ("spec", dims, leaf.dtype.name)
    return _leaf_key(leaf, [], {})[0]


def _parameters_of(python_function):
    """The ``inspect.Signature`` calls bind to, or None when Python cannot tell it."""
    try:
        return inspect.signature(python_function)
    except (TypeError, ValueError):
        return None


def _free_axes(specs):
    """For each ``TensorSpec`` of ``specs``, the axes its shape leaves ``None``; None when
    none does, or a spec's rank is unknown (a trace holds values of one rank)."""
    free = []
    for spec in specs:
        if not isinstance(spec, TensorSpec) or spec.shape.rank is None:
            return None
        free.append(tuple(i for i, d in enumerate(spec.shape.as_list()) if d is None))
    return free if any(free) else None


def _erased(key, free):
    """A trace key with the sizes of its tensors' ``free`` axes erased: the key of the trace
    serving every size of them."""
    parts, i = [], 0
    for part in key:
        if part[0] == "tensor":
            axes = free[i] if i < len(free) else ()
            shape = tuple(None if axis in axes else d for axis, d in enumerate(part[1]))
            part = ("tensor", shape, *part[2:])
            i += 1
        parts.append(part)
    return tuple(parts)


def _symbols(tensors, free):
    """The ``free`` axes as the symbols of a general trace: axes of one size in the traced
    call are one symbol (a batch dimension shared by the images and their labels), each as
    ``(tensor index, axis)`` pairs."""
    groups = {}
    for i, axes in enumerate(free):
        for axis in axes:
            groups.setdefault(tensors[i].shape[axis], []).append((i, axis))
    return list(groups.values())


def _check_signature(signature, tensors, name):
    """TensorFlow's input_signature check: as many tensors, each compatible with its spec."""
    if len(tensors) != len(signature):
        raise TypeError(
            f"{name}: the input_signature has {len(signature)} TensorSpecs but the call passed "
            f"{len(tensors)} tensors"
        )
    for i, (spec, t) in enumerate(zip(signature, tensors, strict=True)):
        mismatch = _spec_mismatch(spec, t)
        if mismatch is not None:
            _, what, expected = mismatch
            raise TypeError(
                f"{name}: argument {i} {what}, not compatible with the input_signature's {expected}"
            )


class Function:
    """A Python function compiled by tracing (``ft.function``'s result).

    Call it as the function itself. ``python_function`` is the undecorated function,
    ``experimental_get_tracing_count()`` counts the traces made so far, and
    ``get_concrete_function(*args)`` traces (if needed) and returns the trace for a call.
    """

    def __init__(self, python_function, input_signature=None, name=None, reduce_retracing=False):
        self._python_function = python_function
        self._input_signature = None if input_signature is None else list(input_signature)
        self._name = name or getattr(python_function, "__name__", "function")
        self._traces = {}
        # The trace serving every size of the signature's None dimensions, by the trace key
        # with those sizes erased, or why the trace there serves its own sizes only.
        self._general = {}
        self._free = None if input_signature is None else _free_axes(input_signature)
        self._reduce_retracing = reduce_retracing
        # With reduce_retracing, the free axes of the relaxed traces made so far.
        self._relaxed = []
        self._concrete = {}  # get_concrete_function's results, by signature
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
                self._reduce_retracing,
            )
            self._bound[instance] = bound
        return bound

    def _key(self, args, kwargs):
        if self._input_signature is not None:
            args = self._converted(args)
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

    def _converted(self, args):
        """Positional arguments as tensors of their ``TensorSpec`` s' dtypes, as TensorFlow
        binds a call to an ``input_signature`` (Python numbers and lists become tensors)."""
        return tuple(
            _core.convert_to_tensor(arg, dtype=spec.dtype)
            if isinstance(spec, TensorSpec) and not isinstance(arg, (_core.Tensor, _core.Variable))
            else arg
            for arg, spec in zip(args, self._input_signature, strict=False)
        ) + tuple(args[len(self._input_signature) :])

    def __call__(self, *args, **kwargs):
        if config.functions_run_eagerly() or _core.is_tracing() or _core.tape_is_recording():
            # Eagerly: switched off, inlined into an outer trace, or watched by a tape/accumulator.
            return self._python_function(*args, **kwargs)
        key, tensors, (args, kwargs) = self._key(args, kwargs)
        return self._dispatch(key, tensors, args, kwargs)

    def _dispatch(self, key, tensors, args, kwargs, free=None):
        """Replays the trace of ``key`` (tracing it first if there is none), or runs the
        function eagerly where its trace was refused. ``free`` lists, for each tensor, the
        axes its spec leaves ``None`` (the function's ``input_signature`` by default): a trace
        at other sizes of those serves this call when it can."""
        concrete = self._traces.get(key)
        if type(concrete) is _Trace:
            return concrete._run(tensors)
        if concrete is None:
            free = self._free if free is None else free
            for axes in self._relaxed if free is None else (free,):
                general = self._general.get(_erased(key, axes))
                if type(general) is _Trace:
                    outputs = general._graph.run_at(tensors)
                    if type(outputs) is list:
                        return general._pack(outputs)
            if free is None and self._reduce_retracing:
                free = self._relax(key)
            return self._trace(key, tensors, args, kwargs, free)
        if type(concrete) is _Paths:
            return self._run_paths(concrete, key, tensors, args, kwargs)
        return _python_numbers_as_tensors(self._python_function(*args, **kwargs))

    def _relax(self, key):
        """``reduce_retracing``'s relaxed shapes, as TensorFlow's: the axes where this call's
        tensor shapes differ from those of a trace made for the same arguments otherwise
        (None when there is none), so that this call traces for every size of them."""
        for traced in list(self._traces):
            if len(traced) != len(key):
                continue
            free, same = [], True
            for mine, theirs in zip(key, traced, strict=True):
                if mine[0] != "tensor" or theirs[0] != "tensor":
                    same = mine == theirs
                elif mine[2:] != theirs[2:] or len(mine[1]) != len(theirs[1]):
                    same = False
                else:
                    pairs = enumerate(zip(mine[1], theirs[1], strict=True))
                    free.append(tuple(i for i, (a, b) in pairs if a != b))
                if not same:
                    break
            if same and any(free):
                if free not in self._relaxed:
                    self._relaxed.append(free)
                return free
        return None

    def _generalize(self, key, concrete, tensors, free):
        """Makes ``concrete`` (a trace without branches) serve every size of the ``free``
        axes, when its replays at other sizes are the function's results there (see
        ``_core.TracedGraph.generalize``)."""
        general_key = _erased(key, free)
        if general_key in self._general:
            return
        reason = concrete._graph.generalize(tensors, _symbols(tensors, free))
        self._general[general_key] = concrete if reason is None else reason

    def _run_paths(self, paths, key, tensors, args, kwargs):
        """Replays the trace of this call's path, or traces the path if it is new."""
        concrete, tried = paths.traces[0], []
        while concrete is not None:
            outputs = concrete._graph.run(tensors)
            if type(outputs) is list:
                if concrete is not paths.traces[0]:
                    paths.add(concrete)
                return concrete._pack(outputs)
            # A branch went another way at guard `guard`: the trace that took the same branches
            # up to there and this one at it has the same operations up to there.
            guard, value = outputs
            tried.append(concrete)
            taken = concrete.guards[:guard] + (value,)
            concrete = next(
                (t for t in paths.traces if t not in tried and t.guards[: guard + 1] == taken),
                None,
            )
        return self._trace(key, tensors, args, kwargs)

    def _trace(self, key, tensors, args, kwargs, free=None):
        self._tracing_count += 1
        _core.trace_begin(tensors)
        if free is not None:
            _core.trace_hide_sizes(free)  # they show as None, as in TensorFlow
        try:
            result = self._python_function(*args, **kwargs)
            if self._tracing_count > 1 and _core.trace_variables_created():
                raise ValueError(
                    f"{self._name}: creating variables on a non-first call to a function "
                    "decorated with ft.function; as in TensorFlow, create them on the first call "
                    "(once) or outside the function"
                )
            result = _python_numbers_as_tensors(result)
        except StopIteration:
            # An iterator (a dataset's) ran out inside: TensorFlow's iterator op raises this.
            _core.trace_abandon()
            raise OutOfRangeError("End of sequence") from None
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
            self._eager_only(key, graph)
            return result
        # The skeleton holds no tensor of this call, so the trace keeps none of them alive.
        skeleton = nest.pack_sequence_as(result, leaves)
        concrete = _Trace(graph, skeleton, leaves, slots)
        if not concrete.guards:
            self._traces[key] = concrete
            if free is not None:
                self._generalize(key, concrete, tensors, free)
            return result
        paths = self._traces.get(key)
        if type(paths) is not _Paths:
            paths = self._traces[key] = _Paths()
        paths.add(concrete)
        if len(paths.traces) > MAX_PATHS:
            self._eager_only(
                key,
                f"its branches on tensor values took more than {MAX_PATHS} paths for the same "
                f"argument shapes (the last new one at the branch{_new_branch_place(paths)})",
            )
        return result

    def _eager_only(self, key, reason):
        self._traces[key] = _EagerOnly(reason)
        self._warn_once(reason)

    def _warn_once(self, reason):
        if reason in self._warned:
            return
        self._warned.add(reason)
        warnings.warn(
            f"ft.function: {self._name} runs eagerly for these arguments: {reason}",
            RuntimeWarning,
            stacklevel=_first_caller_outside_this_module(),
        )

    def get_concrete_function(self, *args, **kwargs):
        """The function bound to one signature (a ``ConcreteFunction``), as TensorFlow's.

        The arguments are those of a call, with ``TensorSpec`` s allowed in place of tensors;
        with an ``input_signature``, none are needed. Given tensors only, it traces at once (if
        that call has no trace yet); given ``TensorSpec`` s, it traces on its first call. The
        same signature gives the same ``ConcreteFunction``.

        Raises:
            ValueError: given tensors, the trace was refused (the function runs eagerly for
                this call).
            TypeError: the arguments do not bind to the Python function's parameters, or do
                not match the ``input_signature``.
        """
        if self._input_signature is not None:
            if args or kwargs:
                self._check_specs_or_tensors(args)
            args, kwargs = tuple(self._input_signature), {}
        parameters = _parameters_of(self._python_function)
        signature = (tuple(args), dict(kwargs))
        if parameters is not None:
            try:
                bound = parameters.bind(*args, **kwargs)
            except TypeError as error:
                raise TypeError(f"{self._name}.get_concrete_function: {error}") from None
            bound.apply_defaults()
            for name, value in bound.arguments.items():
                # A tensor or spec given for a parameter is named after it, as in TensorFlow.
                if isinstance(value, TensorSpec) and value.name is None:
                    bound.arguments[name] = TensorSpec.from_spec(value, name=name)
                elif isinstance(value, (_core.Tensor, np.ndarray)):
                    bound.arguments[name] = TensorSpec.from_tensor(_spec_source(value), name=name)
            signature = (tuple(bound.args), dict(bound.kwargs))
        signature = nest.map_structure(_spec_of, signature)
        cache_key = tuple(_signature_key(leaf) for leaf in nest.flatten(signature))
        cache_key += (tuple(sorted(signature[1])),)
        concrete = self._concrete.get(cache_key)
        if concrete is None:
            concrete = ConcreteFunction(self, signature[0], signature[1], parameters)
            self._concrete[cache_key] = concrete
        if not any(isinstance(leaf, TensorSpec) for leaf in nest.flatten((args, kwargs))):
            # Tensors (or no tensors at all): trace now, as TensorFlow does.
            key, tensors, (args, kwargs) = self._key(args, kwargs)
            if key not in self._traces:
                self._trace(key, tensors, args, kwargs)
            traced = self._traces[key]
            if isinstance(traced, _EagerOnly):
                raise ValueError(
                    f"{self._name} cannot be traced for these arguments: {traced.reason}"
                )
            concrete._last_key = key
        return concrete

    def _check_specs_or_tensors(self, args):
        """``get_concrete_function``'s arguments of a function with an ``input_signature``:
        tensors (or specs) compatible with it."""
        if len(args) != len(self._input_signature):
            raise TypeError(
                f"{self._name}.get_concrete_function: the input_signature has "
                f"{len(self._input_signature)} TensorSpecs but {len(args)} arguments were given"
            )
        for i, (spec, arg) in enumerate(zip(self._input_signature, args, strict=True)):
            given = arg if isinstance(arg, TensorSpec) else _spec_of(arg)
            if not isinstance(given, TensorSpec) or not spec.is_compatible_with(given):
                raise TypeError(
                    f"{self._name}.get_concrete_function: argument {i} ({_short(arg)}) is not "
                    f"compatible with the input_signature's {spec!r}"
                )

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
        autograph: TensorFlow's option; ferrotape guards its traces on Python control flow
            over tensor values instead of converting it (see this module's documentation).
        jit_compile: Accepted; replays are always compiled kernel sequences.
        reduce_retracing: When True, a call whose tensor shapes differ from a traced call's
            only in some sizes traces once for every size of those (TensorFlow's relaxed
            shapes; see this module's documentation).
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
    del autograph, jit_compile, experimental_implements
    del experimental_autograph_options, experimental_attributes, experimental_relax_shapes
    del experimental_compile, experimental_follow_type_hints

    def decorate(f):
        if not callable(f):
            raise TypeError(f"function: expected a callable, received {type(f).__name__}")
        if inspect.isclass(f):
            raise TypeError("function: decorating a class is not supported; decorate its method")
        return Function(f, input_signature, name, reduce_retracing)

    return decorate if func is None else decorate(func)
