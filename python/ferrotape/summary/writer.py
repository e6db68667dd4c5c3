"""Summary writers and the summary state: TensorFlow's ``tf.summary`` writer half.

TensorFlow keeps, per thread, a default writer, a default step and a recording condition;
``write`` consults all three and every summary function (``scalar``, ``histogram``, ...) ends in
``write``. The events go to disk through the ``tensorboard`` package's ``EventFileWriter``
(a queue, a background flushing thread, TFRecord framing with CRCs), so the files are exactly
what TensorBoard reads. ``tensorboard`` is an optional dependency: it is imported when the
first file writer is created, never by ``import ferrotape``, and a summary call without a file
writer needs no ``tensorboard`` at all.
"""

import contextlib
import os
import threading
import time
import weakref

import numpy as np

from ..polymorphic_function import host_output

# The one line an ImportError gives when the optional `tensorboard` package is missing.
TENSORBOARD_MISSING = (
    "ft.summary writes TensorBoard event files through the `tensorboard` package, which is not "
    "installed: pip install 'ferrotape[tensorboard]' (or pip install tensorboard)"
)


def _tensorboard():
    """The ``tensorboard`` modules the writer uses, imported on first use."""
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        from tensorboard.util import tensor_util
    except ImportError as error:
        raise ImportError(TENSORBOARD_MISSING) from error
    return event_pb2, summary_pb2, EventFileWriter, tensor_util


class _SummaryState(threading.local):
    """The per-thread default writer, default step and recording condition (as TF keeps them)."""

    def __init__(self):
        super().__init__()
        self.writer = None
        self.step = None
        self.is_recording = None


_state = _SummaryState()


def _traced_state():
    """While a trace is recorded: a factory of context managers that put back the default
    writer, step and recording condition seen now. A summary call replayed by ``ft.function``
    runs inside one, so it writes where the trace's call did, as TensorFlow's traced summary
    ops do (they capture the writer when traced: one traced without a writer never writes)."""
    seen = (_state.writer, _state.step, _state.is_recording)

    @contextlib.contextmanager
    def within():
        current = (_state.writer, _state.step, _state.is_recording)
        _state.writer, _state.step, _state.is_recording = seen
        try:
            yield
        finally:
            _state.writer, _state.step, _state.is_recording = current

    return within


class _SummaryContextManager:
    """What ``SummaryWriter.as_default`` returns; ``set_as_default`` is its ``__enter__`` alone.

    A class rather than a generator so that entering without leaving (``set_as_default``)
    leaves no generator whose ``finally`` would run when garbage-collected.
    """

    def __init__(self, writer, step=None):
        self._writer = writer
        self._step = step
        self._old_writer = None
        self._old_step = None

    def __enter__(self):
        self._old_writer = _state.writer
        _state.writer = self._writer
        if self._step is not None:
            self._old_step = _state.step
            _state.step = self._step
        return self._writer

    def __exit__(self, *exc):
        # TF flushes on leaving, so the events are on disk once the `with` block ends.
        _state.writer.flush()
        _state.writer = self._old_writer
        if self._step is not None:
            _state.step = self._old_step
        return False


class SummaryWriter:
    """The interface of a summary writer: ``create_file_writer`` and ``create_noop_writer``
    return one.

    ``as_default`` makes it the writer the summary functions write to; ``flush`` pushes the
    queued events to disk; ``close`` flushes and releases the file.
    """

    def set_as_default(self, step=None):
        """Makes this writer the default for the current thread, until another replaces it.

        Args:
            step: A default step for the summary functions (an int, a scalar tensor or a
                Variable, read when a summary is written), or ``None`` to keep the current one.
        """
        self.as_default(step).__enter__()

    def as_default(self, step=None):
        """A context manager making this writer the default; leaving it flushes the writer.

        Args:
            step: A default step for the summaries written inside, restored on leaving, or
                ``None`` to keep the current one.

        Returns:
            The context manager; ``with w.as_default() as writer`` binds the writer.
        """
        return _SummaryContextManager(self, step)

    def flush(self):
        """Writes the queued events to disk."""
        raise NotImplementedError

    def close(self):
        """Flushes and closes the writer."""
        raise NotImplementedError


class _FileWriter(SummaryWriter):
    """A writer of one event file in ``logdir``, through tensorboard's ``EventFileWriter``."""

    def __init__(self, logdir, max_queue, flush_millis, filename_suffix):
        self._pb = _tensorboard()
        event_file_writer = self._pb[2]
        self._logdir = logdir
        self._events = event_file_writer(
            logdir,
            max_queue_size=max_queue,
            flush_secs=flush_millis / 1000.0,
            filename_suffix=filename_suffix,
        )
        self._closed = False
        # As TF's writer resource does, flush and close the file when the writer is collected
        # or the interpreter exits, so a writer never closed loses no queued events.
        self._finalizer = weakref.finalize(self, self._events.close)

    def __repr__(self):
        state = "closed" if self._closed else "open"
        return f"<ferrotape.summary file writer logdir={self._logdir!r} ({state})>"

    def set_as_default(self, step=None):
        """Makes this writer the default for the current thread, until another replaces it.

        Args:
            step: A default step for the summary functions, or ``None`` to keep the current one.

        Raises:
            RuntimeError: if the writer is closed.
        """
        self._check_open()
        super().set_as_default(step)

    def as_default(self, step=None):
        """A context manager making this writer the default; leaving it flushes the writer.

        Args:
            step: A default step for the summaries written inside, restored on leaving, or
                ``None`` to keep the current one.

        Returns:
            The context manager.

        Raises:
            RuntimeError: if the writer is closed.
        """
        self._check_open()
        return super().as_default(step)

    def flush(self):
        """Writes the queued events to disk; does nothing once the writer is closed."""
        if not self._closed:
            self._events.flush()

    def close(self):
        """Flushes and closes the event file; later calls do nothing."""
        if not self._closed:
            self._closed = True
            self._finalizer()

    def _check_open(self):
        if self._closed:
            raise RuntimeError(f"SummaryWriter {self!r} is already closed")

    def _write(self, tag, array, step, metadata):
        """Appends one event holding ``array`` under ``tag``."""
        if self._closed:
            # TF fails here too (a NotFoundError naming a missing resource); say what happened.
            raise RuntimeError(
                f"summary: cannot write {tag!r}, the default SummaryWriter {self!r} is closed"
            )
        event_pb2, summary_pb2, _, tensor_util = self._pb
        if isinstance(metadata, bytes):
            metadata = summary_pb2.SummaryMetadata.FromString(metadata)
        value = summary_pb2.Summary.Value(tag=tag, tensor=tensor_util.make_tensor_proto(array))
        if metadata is not None:
            value.metadata.CopyFrom(metadata)
        event = event_pb2.Event(
            wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=[value])
        )
        self._events.add_event(event)
        return True


class _NoopWriter(SummaryWriter):
    """A writer that does nothing: entering it leaves the current default writer in place."""

    def set_as_default(self, step=None):
        """Does nothing (TensorFlow's no-op writer sets neither writer nor step).

        Args:
            step: Ignored.
        """
        del step

    def as_default(self, step=None):
        """A context manager that changes nothing.

        Args:
            step: Ignored.

        Returns:
            A context manager binding this writer.
        """
        del step
        return _NoopContext(self)

    def flush(self):
        """Does nothing."""

    def close(self):
        """Does nothing."""


class _NoopContext:
    def __init__(self, writer):
        self._writer = writer

    def __enter__(self):
        return self._writer

    def __exit__(self, *exc):
        return False


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None):
    """Creates a summary writer of a new event file in ``logdir`` (made if missing).

    The file is named ``events.out.tfevents.<time>.<host>.<pid>.<n><suffix>``, as TensorBoard
    expects; events are queued and written by a background thread every ``flush_millis``, when
    the queue fills, on ``flush``, on leaving ``as_default`` and on ``close``.

    Args:
        logdir: The directory to write the event file in (a string or path).
        max_queue: How many events to queue before writing them; 10 when ``None``.
        flush_millis: The longest time between two writes to disk, in milliseconds;
            120,000 when ``None``.
        filename_suffix: Appended to the file name; ``".v2"`` when ``None``, as in TF.
        name: Ignored (TensorFlow's op name).

    Returns:
        A ``SummaryWriter``.

    Raises:
        ValueError: if ``logdir`` is ``None``.
        ImportError: if the ``tensorboard`` package is not installed
            (``pip install 'ferrotape[tensorboard]'``).
    """
    del name
    if logdir is None:
        raise ValueError("create_file_writer: argument `logdir` cannot be None")
    max_queue = 10 if max_queue is None else _positive_int("max_queue", max_queue)
    flush_millis = 120_000 if flush_millis is None else _positive_int("flush_millis", flush_millis)
    suffix = ".v2" if filename_suffix is None else str(filename_suffix)
    return _FileWriter(os.fspath(logdir), max_queue, flush_millis, suffix)


def create_noop_writer():
    """A summary writer that writes nothing (to pass where a writer is expected).

    Returns:
        A ``SummaryWriter`` whose ``as_default`` leaves the current writer and step in place.

    >>> import ferrotape as ft
    >>> with ft.summary.create_noop_writer().as_default(step=1):
    ...     print(bool(ft.summary.scalar("loss", 0.5)))
    False
    """
    return _NoopWriter()


def _positive_int(argument, value):
    number = int(value)
    if number <= 0 or number != value:
        raise ValueError(
            f"create_file_writer: {argument} must be a positive int, received {argument}={value!r}"
        )
    return number


class _RecordIf:
    def __init__(self, condition):
        self._condition = condition
        self._old = None

    def __enter__(self):
        self._old = _state.is_recording
        _state.is_recording = self._condition

    def __exit__(self, *exc):
        _state.is_recording = self._old
        return False


def record_if(condition):
    """A context manager setting whether the summaries written inside are recorded.

    Args:
        condition: A bool (or a 0-d bool tensor), or a callable returning one, asked at every
            summary call (Keras's callback passes ``lambda: step % update_freq == 0``).

    Returns:
        The context manager; leaving it restores the previous condition.

    >>> import ferrotape as ft
    >>> with ft.summary.create_noop_writer().as_default(), ft.summary.record_if(False):
    ...     print(bool(ft.summary.should_record_summaries()))
    False
    """
    return _RecordIf(condition)


def _recording():
    """Whether a summary written now is recorded (a default writer, and the condition holds)."""
    if _state.writer is None:
        return False
    condition = _state.is_recording
    if callable(condition):
        condition = condition()
    return True if condition is None else bool(np.asarray(_numpy(condition)))


def should_record_summaries():
    """Whether summaries are recorded now: a default writer is set and ``record_if`` allows it.

    Returns:
        A 0-d bool tensor.

    >>> import ferrotape as ft
    >>> bool(ft.summary.should_record_summaries())
    False
    """
    return _bool_tensor(_recording())


def flush(writer=None, name=None):
    """Writes the queued events of ``writer`` (the default writer when ``None``) to disk.

    Args:
        writer: A ``SummaryWriter``, or ``None`` for the default writer (nothing happens when
            there is none).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``.
    """
    del name
    writer = _state.writer if writer is None else writer
    if writer is not None:
        writer.flush()


@host_output(context=_traced_state)
def write(tag, tensor, step=None, metadata=None, name=None):
    """Writes ``tensor`` under ``tag`` to the default writer: the primitive under every summary.

    Args:
        tag: The summary's tag, the name TensorBoard shows.
        tensor: The value (a tensor, array or Python value), or a callable returning it, called
            only when the summary is recorded.
        step: The step (an int, a scalar tensor or a Variable); the default step
            (``ft.summary.experimental.get_step()``) when ``None``.
        metadata: A ``SummaryMetadata`` proto or its serialized bytes, naming the TensorBoard
            plugin that shows the value; ``None`` for none.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 0-d bool tensor: ``True`` when the summary was written, ``False`` when there is no
        default writer or ``record_if`` is off.

    Raises:
        ValueError: if the summary is recorded but no step is given or set.
        RuntimeError: if the default writer is closed.
    """
    del name
    writer = _state.writer
    if writer is None:
        return _bool_tensor(False)
    if step is None:
        step = _state.step
    if not _recording():
        return _bool_tensor(False)
    if step is None:
        raise ValueError(
            "No step set. Please specify one either through the `step` argument or through "
            "tf.summary.experimental.set_step()"
        )
    value = tensor() if callable(tensor) else tensor
    # The summary functions pass their metadata as a callable, so that a summary that is not
    # recorded never imports tensorboard.
    metadata = metadata() if callable(metadata) else metadata
    return _bool_tensor(writer._write(str(tag), np.asarray(_numpy(value)), _step(step), metadata))


def _numpy(value):
    return value.numpy() if hasattr(value, "numpy") else value


def _step(step):
    """The step as a Python int (TF casts it to int64 when writing)."""
    array = np.asarray(_numpy(step))
    if array.ndim != 0 or not (
        np.issubdtype(array.dtype, np.integer)
        or (np.issubdtype(array.dtype, np.floating) and float(array).is_integer())
    ):
        raise ValueError(f"summary: step must be a scalar integer, received step={step!r}")
    return int(array)


def _bool_tensor(value):
    from .._core import constant

    return constant(bool(value))
