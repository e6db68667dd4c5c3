//! The native half of `ft.function`: starting and ending a trace, the traced graph Python
//! replays, and the hooks that keep a trace honest (a tensor value read into Python refuses
//! it; `tf.print` inside a trace becomes an effect that runs on every replay).
//!
//! The Python half (`ferrotape/polymorphic_function.py`) keys traces by their arguments and
//! falls back to running the function eagerly when a trace is refused; see the module docs of
//! `ferrotape_autodiff::trace` for what is recorded and why a trace can be refused.

use std::sync::Arc;

use ferrotape_autodiff::trace::{self, Graph, Replay};
use ferrotape_autodiff::Tensor;
use ferrotape_py_macros::op_errors;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::Raise;
use crate::tensor::PyTensor;

/// A trace's graph, replayed by `ft.function` on later calls with the same argument key.
#[pyclass(name = "TracedGraph", module = "ferrotape._core", frozen)]
pub struct PyTracedGraph {
    graph: Arc<Graph>,
}

#[pymethods]
impl PyTracedGraph {
    /// Runs the recorded kernels on `inputs` (tensors of the traced shapes and dtypes) and
    /// returns the traced outputs (a list), without running any Python. A replay stopped by a
    /// guard returns `(guard ordinal, value seen)` instead, a tuple (see `guard_values`).
    fn run(&self, py: Python<'_>, inputs: Vec<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let outputs = self.replay(py, &inputs, Graph::run)?;
        replay_result(py, outputs)
    }

    /// Learns how the trace's shapes follow its `None` dimensions, so that `run_at` can
    /// replay it at other sizes of them: `symbols` lists, per `None` dimension, the
    /// `(input index, axis)` pairs it sizes; `inputs` are the traced call's tensors. Returns
    /// None, or why the trace can serve its traced sizes only.
    fn generalize(
        &self,
        py: Python<'_>,
        inputs: Vec<Bound<'_, PyAny>>,
        symbols: Vec<Vec<(usize, usize)>>,
    ) -> PyResult<Option<String>> {
        let inputs = inputs
            .iter()
            .map(tensor_of)
            .collect::<PyResult<Vec<Tensor>>>()?;
        let graph = self.graph.clone();
        let result = crate::interrupts::run(py, || Ok(graph.generalize(&inputs, symbols.clone())))
            .raise()?;
        Ok(result.err())
    }

    /// `run` at the sizes of the `None` dimensions in `inputs` (see `generalize`), or None
    /// when the trace cannot serve them (the caller traces them instead).
    fn run_at(&self, py: Python<'_>, inputs: Vec<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        match self.replay(py, &inputs, Graph::run_at)? {
            None => Ok(py.None()),
            Some(replay) => replay_result(py, replay),
        }
    }

    /// The value each guard of the trace expects (a tuple of ints per guard), in the order
    /// the trace reached them: the branches on tensor values it recorded.
    fn guard_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let guards = self
            .graph
            .guard_values()
            .iter()
            .map(|v| PyTuple::new(py, v.iter()))
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, guards)
    }

    /// Where Python read the value of each guard (`" at FILE:LINE"`, or `""`), in order.
    fn guard_places(&self) -> Vec<String> {
        self.graph
            .guard_places()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// The names of the recorded kernel calls and effects kept after dead code was removed.
    fn node_names(&self) -> Vec<&'static str> {
        self.graph.node_names()
    }

    fn __len__(&self) -> usize {
        self.graph.len()
    }
}

impl PyTracedGraph {
    /// `how` (a way to replay the graph) on `inputs`, interruptible and with the pool's
    /// threads as a small graph needs them.
    fn replay<T: Send>(
        &self,
        py: Python<'_>,
        inputs: &[Bound<'_, PyAny>],
        how: impl Fn(&Graph, &[Tensor]) -> ferrotape_autodiff::Result<T> + Sync,
    ) -> PyResult<T> {
        let inputs = inputs
            .iter()
            .map(tensor_of)
            .collect::<PyResult<Vec<Tensor>>>()?;
        let graph = &self.graph;
        // A small graph (no kernel large enough to split) leaves the pool's threads as they
        // are (see `threads::around_op`).
        let parallel = graph.runs_parallel_kernels();
        ferrotape_autodiff::core::threads::around_op(parallel, || {
            crate::interrupts::run(py, || how(graph, &inputs))
        })
        .raise()
    }
}

/// A replay's outputs as a list, or `(guard ordinal, value seen)` for one a guard stopped.
fn replay_result(py: Python<'_>, replay: Replay) -> PyResult<Py<PyAny>> {
    Ok(match replay {
        Replay::Finished(outputs) => {
            let outputs: Vec<PyTensor> = outputs.into_iter().map(PyTensor::new).collect();
            outputs.into_pyobject(py)?.into_any().unbind()
        }
        Replay::Diverged { guard, value } => (guard, PyTuple::new(py, value)?)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
    })
}

fn tensor_of(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    match crate::convert::as_tensor(obj) {
        Some(t) => Ok(t),
        None => Err(crate::errors::type_error(format!(
            "function: expected tensors, received {}",
            obj.get_type().name()?
        ))),
    }
}

/// Starts recording a trace on this thread with `inputs` as the function's tensor arguments.
///
/// Args:
///     inputs: The tensors standing for the function's tensor arguments, in order.
///
/// Returns:
///     None.
#[op_errors]
#[pyfunction]
pub fn trace_begin(inputs: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
    let inputs = inputs
        .iter()
        .map(tensor_of)
        .collect::<PyResult<Vec<Tensor>>>()?;
    trace::begin(&inputs).raise()
}

/// Ends the trace being recorded: its graph, or the reason it cannot be replayed (a string).
///
/// Args:
///     outputs: The tensors the function returned, in order.
///
/// Returns:
///     A `TracedGraph`, or a `str` saying why the function must run eagerly.
#[op_errors]
#[pyfunction]
pub fn trace_end(py: Python<'_>, outputs: Vec<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
    let outputs = match outputs.iter().map(tensor_of).collect::<PyResult<Vec<_>>>() {
        Ok(outputs) => outputs,
        Err(e) => {
            trace::abandon();
            return Err(e);
        }
    };
    Ok(match trace::end(&outputs) {
        Ok(graph) => Bound::new(
            py,
            PyTracedGraph {
                graph: Arc::new(graph),
            },
        )?
        .into_any()
        .unbind(),
        Err(reason) => reason.into_pyobject(py)?.into_any().unbind(),
    })
}

/// Abandons the trace being recorded on this thread (the traced function raised).
///
/// Returns:
///     None.
#[pyfunction]
pub fn trace_abandon() {
    trace::abandon();
}

/// The number of variables created so far in the trace being recorded on this thread (0
/// when none is).
///
/// Returns:
///     An int.
#[pyfunction]
pub fn trace_variables_created() -> usize {
    trace::variables_created()
}

/// Refuses the trace being recorded on this thread, if any, for `reason` (the first reason
/// given is kept): the function then runs eagerly for that call's key, with a warning saying
/// `reason`. For host code that made something a replay would not make again.
///
/// Args:
///     reason: Why the trace cannot be replayed.
///
/// Returns:
///     None.
#[pyfunction]
pub fn trace_refuse(reason: String) {
    trace::refuse(|| reason);
}

/// Sets the trace being recorded on this thread (if any) aside: nothing is recorded until
/// `trace_resume` (for host arithmetic that a host callback redoes on every replay).
///
/// Returns:
///     None.
#[pyfunction]
pub fn trace_pause() {
    trace::pause();
}

/// Puts back the trace the last `trace_pause` set aside.
///
/// Returns:
///     None.
///
/// Raises:
///     ValueError: no trace was paused.
#[op_errors]
#[pyfunction]
pub fn trace_resume() -> PyResult<()> {
    if trace::resume() {
        Ok(())
    } else {
        Err(crate::errors::value_error(
            "trace_resume: no trace was paused on this thread",
        ))
    }
}

/// Whether a trace is being recorded on this thread.
///
/// Returns:
///     A bool.
#[pyfunction]
pub fn is_tracing() -> bool {
    trace::is_tracing()
}

/// The sizes of some axes of `tensor`, noted as read by the trace being recorded (if any):
/// for library code that uses only these sizes, where `tensor.shape` notes every axis as read
/// (a trace serving every size of a `None` dimension cannot let the host compute with it).
///
/// Args:
///     tensor: A tensor.
///     axes: The axes to read (non-negative, below the rank).
///
/// Returns:
///     A list of ints, the sizes of `axes` in order.
#[op_errors]
#[pyfunction]
pub fn trace_dims(tensor: &Bound<'_, PyAny>, axes: Vec<usize>) -> PyResult<Vec<usize>> {
    let t = tensor_of(tensor)?;
    let dims = axes
        .iter()
        .map(|&a| {
            t.shape().get(a).copied().ok_or_else(|| {
                crate::errors::value_error(format!(
                    "trace_dims: axis {a} is not an axis of a rank-{} tensor",
                    t.rank()
                ))
            })
        })
        .collect::<PyResult<Vec<usize>>>()?;
    trace::shape_read_axes(&t, &axes, || python_line(tensor.py()).unwrap_or_default());
    Ok(dims)
}

/// Hides sizes of the function's tensor arguments from Python while the trace being
/// recorded runs: their `shape` shows `None` for them, as TensorFlow's trace of an
/// `input_signature` with `None` does.
///
/// Args:
///     axes: For each tensor argument, the axes to hide.
///
/// Returns:
///     None.
#[pyfunction]
pub fn trace_hide_sizes(axes: Vec<Vec<usize>>) {
    trace::hide_sizes(&axes);
}

/// The shape of `tensor`, *not* noted as read by the trace being recorded: for library code
/// that only checks it (raising when it is wrong) or compares sizes with 0 or 1. A trace
/// serves other sizes of a `None` dimension only where they are 2 or more and keep equal
/// sizes equal, so there such checks decide as they did while tracing; a replay that would
/// have failed a check fails in a kernel, and the host then traces those sizes (raising).
///
/// Args:
///     tensor: A tensor.
///
/// Returns:
///     A `TensorShape`.
#[op_errors]
#[pyfunction]
pub fn checked_shape<'py>(tensor: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let t = tensor_of(tensor)?;
    crate::tensor::tensor_shape(tensor.py(), t.shape())
}

/// Whether `tensor` holds a value that differs from one replay of the trace being recorded to
/// the next (an argument of the traced function or a value computed from them): what
/// TensorFlow's graph knows only when it runs. False when no trace is being recorded.
///
/// Args:
///     tensor: A tensor.
///
/// Returns:
///     A bool.
#[op_errors]
#[pyfunction]
pub fn trace_holds_value(tensor: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(trace::is_traced_value(&tensor_of(tensor)?))
}

/// Whether a gradient tape on this thread is recording or a forward accumulator is active (a
/// traced function then runs eagerly, so that they see its operations).
///
/// Returns:
///     A bool.
#[pyfunction]
pub fn tape_is_recording() -> bool {
    ferrotape_autodiff::tape::any_recording() || ferrotape_autodiff::tape::any_accumulating()
}

/// Python read a value of the trace being recorded, if any (`what` names how): a small
/// integer or bool value becomes a guard of the trace (replays are valid while it holds the
/// same value), any other value refuses the trace, naming the Python line that read it.
pub fn note_value_read(py: Python<'_>, t: &Tensor, what: &str) {
    if !trace::is_traced_value(t) {
        return;
    }
    let place = || python_line(py).unwrap_or_default();
    if trace::guard(t, place) {
        return;
    }
    let place = place();
    trace::refuse(|| {
        format!(
            "{what} reads a traced {} tensor's value into Python{place}",
            t.dtype()
        )
    });
}

/// ` at FILE:LINE` of the innermost Python frame, if there is one.
pub fn python_line(py: Python<'_>) -> Option<String> {
    let frame = py
        .import("sys")
        .ok()?
        .call_method1("_getframe", (0,))
        .ok()?;
    let file: String = frame
        .getattr("f_code")
        .ok()?
        .getattr("co_filename")
        .ok()?
        .extract()
        .ok()?;
    let line: u32 = frame.getattr("f_lineno").ok()?.extract().ok()?;
    Some(format!(" at {file}:{line}"))
}

/// The value of a tensor as numpy, read without refusing a trace: for `tf.print`, whose
/// reads are recorded as an effect that runs again on every replay.
///
/// Args:
///     tensor: A tensor or variable.
///
/// Returns:
///     A numpy array (a numpy scalar for rank 0).
#[op_errors]
#[pyfunction]
pub fn host_value<'py>(tensor: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let t = crate::convert::to_tensor(tensor, None)?;
    crate::convert::numpy_value(tensor.py(), t.value())
}

/// Records `callback(*tensors)` as an effect of the trace being recorded, run on every replay
/// (`tf.print` inside a traced function): the host callback runs with the replayed values.
///
/// Args:
///     callback: A Python callable taking the tensors.
///     tensors: The tensors it reads.
///     output_only: Whether the callback only writes output (`tf.print`), so that a replay
///         may hold it back until the trace's guards have passed; other callbacks run in order.
///
/// Returns:
///     None.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (callback, tensors, output_only=false))]
pub fn trace_host_effect(
    callback: Bound<'_, PyAny>,
    tensors: Vec<Bound<'_, PyAny>>,
    output_only: bool,
) -> PyResult<()> {
    let tensors = tensors
        .iter()
        .map(tensor_of)
        .collect::<PyResult<Vec<Tensor>>>()?;
    let refs: Vec<&Tensor> = tensors.iter().collect();
    let callback = callback.unbind();
    trace::host_effect("HostCallback", &refs, output_only, || {
        move |t: &[Tensor]| {
            Python::attach(|py| {
                let args = t
                    .iter()
                    .map(|t| PyTensor::new(t.clone()))
                    .collect::<Vec<_>>();
                let args = PyTuple::new(py, args)?;
                callback.bind(py).call1(args).map(drop)
            })
            .map_err(|e| {
                ferrotape_autodiff::Error::invalid(
                    "HostCallback",
                    Python::attach(|py| e.value(py).to_string()),
                )
            })
        }
    });
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTracedGraph>()?;
    m.add_function(wrap_pyfunction!(trace_begin, m)?)?;
    m.add_function(wrap_pyfunction!(trace_end, m)?)?;
    m.add_function(wrap_pyfunction!(trace_abandon, m)?)?;
    m.add_function(wrap_pyfunction!(trace_variables_created, m)?)?;
    m.add_function(wrap_pyfunction!(trace_pause, m)?)?;
    m.add_function(wrap_pyfunction!(trace_refuse, m)?)?;
    m.add_function(wrap_pyfunction!(trace_holds_value, m)?)?;
    m.add_function(wrap_pyfunction!(trace_dims, m)?)?;
    m.add_function(wrap_pyfunction!(checked_shape, m)?)?;
    m.add_function(wrap_pyfunction!(trace_hide_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(trace_resume, m)?)?;
    m.add_function(wrap_pyfunction!(is_tracing, m)?)?;
    m.add_function(wrap_pyfunction!(tape_is_recording, m)?)?;
    m.add_function(wrap_pyfunction!(trace_host_effect, m)?)?;
    m.add_function(wrap_pyfunction!(host_value, m)?)?;
    Ok(())
}
