//! `ft.GradientTape` and `custom_gradient`'s hooks: conversions of Python nests and values
//! around `ferrotape_autodiff::tape`, where the tape's contract (its state and misuse errors)
//! lives and is tested.

use std::sync::Arc;

use ferrotape_autodiff::tape::{self, GradientTape, Pause, Rows, Source};
use ferrotape_autodiff::{ops, Error, Tape, Tensor};
use ferrotape_py_macros::op_errors;
use pyo3::exceptions::PyUserWarning;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use crate::convert::{as_tensor, to_tensor, Flag};
use crate::errors::{park, type_error, value_error, Raise};
use crate::tensor::PyTensor;
use crate::variable::{owner_of, remember_owner, PyVariable};

pub(crate) fn source_of(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
    if let Ok(v) = obj.cast::<PyVariable>() {
        remember_owner(v);
        return Ok(Source::of_variable(&v.get().var));
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Source::of_tensor(&t.get().tensor));
    }
    Err(type_error(format!(
        "gradient sources must be Tensors or Variables, received {}",
        obj.get_type().name()?
    )))
}

/// The targets of `gradient`; a variable is a target in its own right (see
/// `Variable::as_gradient_target`), not a fresh read of it.
fn targets_of(objs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Tensor>> {
    objs.iter()
        .map(|o| match o.cast::<PyVariable>() {
            Ok(v) => Ok(v.get().var.as_gradient_target()),
            Err(_) => to_tensor(o, None),
        })
        .collect()
}

/// Records the operations run inside its `with` block so that `gradient` can differentiate
/// them (`tf.GradientTape`): watched tensors and the trainable variables read are the sources.
///
/// Written in Rust so that the hot path (create, enter, exit, one gradient) costs no
/// Python-level calls. Nested `sources` other than a single tensor or a flat list/tuple go
/// through `ferrotape.nest`.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> x = ft.constant(3.0)
/// >>> with ft.GradientTape() as tape:
/// ...     tape.watch(x)
/// ...     y = x * x
/// ...
/// >>> float(tape.gradient(y, x))
/// 6.0
///
/// Args:
///     persistent: If true, `gradient` may be called more than once.
///     watch_accessed_variables: If true (the default), trainable variables read inside the
///         tape are watched.
#[pyclass(name = "GradientTape", module = "ferrotape", frozen, subclass, weakref)]
pub struct PyGradientTape {
    contract: GradientTape,
    /// `contract.tape()`, kept at hand for watching and the sweeps.
    tape: Arc<Tape>,
}

fn nest_fn<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static NEST: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    NEST.get_or_try_init(py, || py.import("ferrotape.nest").map(Bound::unbind))?
        .bind(py)
        .getattr(name)
}

fn is_leaf(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyTensor>() || obj.is_instance_of::<PyVariable>()
}

/// How a structure was flattened, to rebuild it around the results.
enum Shape {
    Leaf,
    List,
    Tuple,
    Nest,
}

fn flatten<'py>(obj: &Bound<'py, PyAny>) -> PyResult<(Vec<Bound<'py, PyAny>>, Shape)> {
    if is_leaf(obj) {
        return Ok((vec![obj.clone()], Shape::Leaf));
    }
    let flat_of = |items: Vec<Bound<'py, PyAny>>| {
        items
            .iter()
            .all(|x| is_leaf(x) || x.is_none())
            .then_some(items)
    };
    if obj.is_exact_instance_of::<PyList>() {
        if let Some(items) = flat_of(obj.cast::<PyList>()?.iter().collect()) {
            return Ok((items, Shape::List));
        }
    } else if obj.is_exact_instance_of::<PyTuple>() {
        if let Some(items) = flat_of(obj.cast::<PyTuple>()?.iter().collect()) {
            return Ok((items, Shape::Tuple));
        }
    }
    let flat = nest_fn(obj.py(), "flatten")?.call1((obj,))?;
    Ok((flat.extract()?, Shape::Nest))
}

fn pack<'py>(
    structure: &Bound<'py, PyAny>,
    shape: Shape,
    items: Vec<Option<PyTensor>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = structure.py();
    let objs: Vec<Bound<'py, PyAny>> = items
        .into_iter()
        .map(|g| {
            g.map_or_else(
                || Ok(py.None().into_bound(py)),
                |t| Ok(Bound::new(py, t)?.into_any()),
            )
        })
        .collect::<PyResult<_>>()?;
    match shape {
        Shape::Leaf => Ok(objs
            .into_iter()
            .next()
            .unwrap_or_else(|| py.None().into_bound(py))),
        Shape::List => Ok(PyList::new(py, objs)?.into_any()),
        Shape::Tuple => Ok(PyTuple::new(py, objs)?.into_any()),
        Shape::Nest => nest_fn(py, "pack_sequence_as")?.call1((structure, objs)),
    }
}

fn zero_for_unconnected(value: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    let Some(v) = value.filter(|v| !v.is_none()) else {
        return Ok(false);
    };
    let text: String = if v.is_instance_of::<pyo3::types::PyString>() {
        v.extract()?
    } else {
        v.getattr("value")?.extract()?
    };
    match text.to_ascii_lowercase().as_str() {
        "none" => Ok(false),
        "zero" => Ok(true),
        other => Err(value_error(format!(
            "Unknown value for unconnected_gradients: {other:?}"
        ))),
    }
}

/// How a Jacobian's rows are computed, from `experimental_use_pfor` and `parallel_iterations`
/// (the rows per vectorized sweep; `None` for as many as memory allows).
fn jacobian_rows(
    op: &str,
    experimental_use_pfor: bool,
    parallel_iterations: Option<&Bound<'_, PyAny>>,
) -> PyResult<Rows> {
    let limit = match parallel_iterations.filter(|v| !v.is_none()) {
        None => None,
        Some(v) => {
            let n: i64 = v.extract().map_err(|_| {
                type_error(format!(
                    "{op}: parallel_iterations must be None or a positive integer, received {}",
                    v.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                ))
            })?;
            if n < 1 {
                return Err(value_error(format!(
                    "{op}: parallel_iterations must be None or a positive integer, received {n}"
                )));
            }
            Some(n as usize)
        }
    };
    Ok(if experimental_use_pfor {
        Rows::Vectorized(limit)
    } else {
        Rows::OneSweepEach
    })
}

/// The flat sources of a structure, and how to rebuild it.
fn sources_of(sources: &Bound<'_, PyAny>) -> PyResult<(Vec<Source>, Shape)> {
    let (flat, shape) = flatten(sources)?;
    Ok((flat.iter().map(source_of).collect::<PyResult<_>>()?, shape))
}

/// Wraps results for Python; unconnected ones become zeros of `lead + source.shape` when
/// `zero` (`UnconnectedGradients.ZERO`), else stay `None`.
fn fill_unconnected(
    results: Vec<Option<Tensor>>,
    sources: &[Source],
    zero: bool,
    lead: &[usize],
) -> PyResult<Vec<Option<PyTensor>>> {
    results
        .into_iter()
        .zip(sources)
        .map(|(r, s)| match r {
            Some(t) => Ok(Some(PyTensor::new(t))),
            None if zero => {
                let mut shape = lead.to_vec();
                shape.extend_from_slice(&s.shape);
                Ok(Some(PyTensor::new(ops::zeros(s.dtype, &shape).raise()?)))
            }
            None => Ok(None),
        })
        .collect()
}

/// Sweeps longer than this release the GIL; shorter ones finish before it would matter.
const DETACH_SWEEP_ENTRIES: usize = 64;

impl PyGradientTape {
    /// Runs a sweep over the tape. A persistent tape's sweep runs without the GIL and can be
    /// stopped by Ctrl-C and run again (see `interrupts`); a non-persistent one frees its
    /// entries as it goes, so it cannot be run again and is never stopped halfway (it releases
    /// the GIL only for long tapes).
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl Fn(&Tape) -> ferrotape_autodiff::Result<T> + Sync,
    ) -> ferrotape_autodiff::Result<T> {
        let tape = &self.tape;
        // A backward sweep is one op to the pool's polling threads (`threads::around_op`).
        ferrotape_autodiff::core::threads::around_op(true, || {
            if tape.persistent() {
                crate::interrupts::run(py, || f(tape))
            } else if tape.len() > DETACH_SWEEP_ENTRIES {
                py.detach(|| f(tape))
            } else {
                f(tape)
            }
        })
    }
}

#[pymethods]
impl PyGradientTape {
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let mut outcome = Ok(());
        self.tape.try_for_each_host_object(|host| {
            let Some(hook) = host.downcast_ref::<CustomGradientFn>() else {
                return;
            };
            // try_lock: the collector must not wait for a thread that may wait for it.
            if let (true, Ok(function)) = (outcome.is_ok(), hook.0.try_lock()) {
                if let Some(function) = function.as_ref() {
                    outcome = visit.call(function);
                }
            }
        });
        outcome
    }

    fn __clear__(&self) {
        let mut released = Vec::new();
        self.tape.try_for_each_host_object(|host| {
            if let Some(hook) = host.downcast_ref::<CustomGradientFn>() {
                let mut guard = hook
                    .0
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                released.extend(guard.take());
            }
        });
        // Dropped here, outside the tape's lock: releasing them may run Python code.
        drop(released);
    }

    #[new]
    #[pyo3(signature = (persistent=None, watch_accessed_variables=None))]
    fn py_new(persistent: Option<Flag>, watch_accessed_variables: Option<Flag>) -> PyResult<Self> {
        let persistent = persistent.is_some_and(|f| f.0);
        let watch_accessed_variables = watch_accessed_variables.is_none_or(|f| f.0);
        let contract = GradientTape::new(persistent, watch_accessed_variables);
        let tape = contract.tape().clone();
        Ok(PyGradientTape { contract, tape })
    }

    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        slf.get().contract.enter().raise()?;
        Ok(slf)
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, PyTuple>) -> bool {
        self.contract.exit();
        false
    }

    /// Ensures `tensor` (a tensor, a variable, or a nest of them) is traced by this tape.
    ///
    /// Args:
    ///     tensor: A tensor or variable, or a nest of them.
    ///
    /// Returns:
    ///     None.
    #[op_errors("GradientTape.watch")]
    fn watch(&self, py: Python<'_>, tensor: &Bound<'_, PyAny>) -> PyResult<()> {
        for t in flatten(tensor)?.0 {
            if let Ok(v) = t.cast::<PyVariable>() {
                remember_owner(v);
                self.tape.watch_variable(&v.get().var);
                continue;
            }
            let Some(value) = as_tensor(&t) else {
                // TensorFlow's ValueError and wording.
                return Err(value_error(format!(
                    "Passed in object {} of type '{}', not tf.Tensor or tf.Variable or ExtensionType.",
                    t.repr()?.to_string().chars().take(60).collect::<String>(),
                    t.get_type().name()?
                )));
            };
            if !self.tape.watch_tensor(&value) {
                let msg = format!(
                    "The dtype of the watched tensor must be floating (e.g. tf.float32), got tf.{}",
                    value.dtype()
                );
                PyErr::warn(
                    py,
                    &py.get_type::<PyUserWarning>(),
                    &std::ffi::CString::new(msg)?,
                    1,
                )?;
            }
        }
        Ok(())
    }

    /// A context manager that pauses recording on this tape.
    fn stop_recording(&self) -> PyResult<StopRecording> {
        Ok(StopRecording {
            pause: self.contract.stop_recording().raise()?,
        })
    }

    /// Clears everything recorded and watched so far (the block keeps recording).
    fn reset(&self) -> PyResult<()> {
        self.contract.reset().raise()
    }

    /// The TensorFlow names of the ops recorded so far, in order (introspection for tests: the
    /// gradient-check table checks that every op that records a derivative is exercised).
    fn _recorded_ops(&self) -> Vec<&'static str> {
        self.tape.recorded_ops()
    }

    /// The variables this tape watched, in the order they were created.
    fn watched_variables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let vars: Vec<Bound<'py, PyAny>> = self
            .tape
            .watched_variables()
            .iter()
            .map(|v| match owner_of(py, v) {
                Some(obj) => Ok(obj),
                None => Ok(Bound::new(py, PyVariable { var: v.clone() })?.into_any()),
            })
            .collect::<PyResult<_>>()?;
        PyTuple::new(py, vars)
    }

    /// The gradient of `target` (summed over its elements, and over a list of targets) with
    /// respect to `sources`, in the structure of `sources`.
    ///
    /// Args:
    ///     target: A tensor, or a nest of tensors whose gradients are summed.
    ///     sources: A tensor or variable, or a nest of them.
    ///     output_gradients: The upstream gradient of each target (default ones), a tensor
    ///         or a nest matching `target`.
    ///     unconnected_gradients: `"none"` (the default: None for a source the target does not
    ///         depend on) or `"zero"` (zeros of the source's shape); a string or an
    ///         `UnconnectedGradients` member.
    ///
    /// Returns:
    ///     The gradients, in the structure of `sources`.
    #[pyo3(signature = (target, sources, output_gradients=None, unconnected_gradients=None))]
    #[op_errors("GradientTape.gradient")]
    fn gradient<'py>(
        &self,
        py: Python<'py>,
        target: &Bound<'py, PyAny>,
        sources: &Bound<'py, PyAny>,
        output_gradients: Option<&Bound<'py, PyAny>>,
        unconnected_gradients: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let contract = &self.contract;
        contract
            .begin_differentiation("GradientTape.gradient")
            .raise()?;
        let zero = zero_for_unconnected(unconnected_gradients)?;
        let (srcs, shape) = sources_of(sources)?;
        let targets = targets_of(&flatten(target)?.0)?;
        let seeds = match output_gradients.filter(|g| !g.is_none()) {
            None => None,
            Some(g) => Some(
                flatten(g)?
                    .0
                    .iter()
                    .zip(&targets)
                    .map(|(g, t)| match g.is_none() {
                        true => ops::ones_like(t).raise(),
                        false => to_tensor(g, Some(t.dtype())).or_else(|_| to_tensor(g, None)),
                    })
                    .collect::<PyResult<Vec<_>>>()?,
            ),
        };
        let grads = self
            .run(py, |tape| tape.gradient(&targets, &srcs, seeds.as_deref()))
            .raise()?;
        pack(sources, shape, fill_unconnected(grads, &srcs, zero, &[])?)
    }

    /// The Jacobian of `target` with respect to each source: shape `target.shape + source.shape`.
    ///
    /// Args:
    ///     target: A tensor.
    ///     sources: A tensor or variable, or a nest of them.
    ///     unconnected_gradients: `"none"` (the default: None for a source the target does not
    ///         depend on) or `"zero"` (zeros of the source's shape); a string or an
    ///         `UnconnectedGradients` member.
    ///     parallel_iterations: How many rows of the Jacobian one vectorized backward pass
    ///         computes (to bound memory); `None` for as many as fit in about 64 MiB.
    ///     experimental_use_pfor: If true (the default), backward passes carry many rows at
    ///         once; if false, one backward pass per target element (persistent tapes only).
    ///
    /// Returns:
    ///     The Jacobians, in the structure of `sources`.
    #[pyo3(signature = (target, sources, unconnected_gradients=None, parallel_iterations=None, experimental_use_pfor=Flag(true)))]
    #[op_errors("GradientTape.jacobian")]
    fn jacobian<'py>(
        &self,
        py: Python<'py>,
        target: &Bound<'py, PyAny>,
        sources: &Bound<'py, PyAny>,
        unconnected_gradients: Option<&Bound<'py, PyAny>>,
        parallel_iterations: Option<&Bound<'py, PyAny>>,
        experimental_use_pfor: Flag,
    ) -> PyResult<Bound<'py, PyAny>> {
        const OP: &str = "GradientTape.jacobian";
        self.contract
            .check_pfor(OP, experimental_use_pfor.0)
            .raise()?;
        let rows = jacobian_rows(OP, experimental_use_pfor.0, parallel_iterations)?;
        self.contract.begin_differentiation(OP).raise()?;
        let zero = zero_for_unconnected(unconnected_gradients)?;
        let target = to_tensor(target, None)?;
        let (srcs, shape) = sources_of(sources)?;
        let jacobians = self
            .run(py, |tape| tape.jacobian(&target, &srcs, rows))
            .raise()?;
        pack(
            sources,
            shape,
            fill_unconnected(jacobians, &srcs, zero, target.shape())?,
        )
    }

    /// Per-example Jacobians, shape `(batch,) + target.shape[1:] + source.shape[1:]`; zeros
    /// where the target does not depend on the source.
    ///
    /// Args:
    ///     target: A tensor of shape `(batch, ...)`.
    ///     source: A tensor of shape `(batch, ...)`.
    ///     unconnected_gradients: Ignored: an unconnected source always gives zeros.
    ///     parallel_iterations: How many columns one vectorized backward pass computes (to
    ///         bound memory); `None` for as many as fit in about 64 MiB.
    ///     experimental_use_pfor: If true (the default), backward passes carry many columns
    ///         at once; if false, one backward pass per column (persistent tapes only).
    ///
    /// Returns:
    ///     A tensor of shape `(batch,) + target.shape[1:] + source.shape[1:]`.
    #[pyo3(signature = (target, source, unconnected_gradients=None, parallel_iterations=None, experimental_use_pfor=Flag(true)))]
    #[op_errors("GradientTape.batch_jacobian")]
    fn batch_jacobian(
        &self,
        py: Python<'_>,
        target: &Bound<'_, PyAny>,
        source: &Bound<'_, PyAny>,
        unconnected_gradients: Option<&Bound<'_, PyAny>>,
        parallel_iterations: Option<&Bound<'_, PyAny>>,
        experimental_use_pfor: Flag,
    ) -> PyResult<PyTensor> {
        let _ = unconnected_gradients;
        const OP: &str = "GradientTape.batch_jacobian";
        self.contract
            .check_pfor(OP, experimental_use_pfor.0)
            .raise()?;
        let rows = jacobian_rows(OP, experimental_use_pfor.0, parallel_iterations)?;
        self.contract.begin_differentiation(OP).raise()?;
        let target = to_tensor(target, None)?;
        let source = source_of(source)?;
        Ok(PyTensor::new(
            self.run(py, |tape| tape.batch_jacobian(&target, &source, rows))
                .raise()?,
        ))
    }
}

/// What `GradientTape.stop_recording()` returns: pauses the tape for its `with` block.
#[pyclass(module = "ferrotape", frozen)]
pub struct StopRecording {
    pause: Pause,
}

#[pymethods]
impl StopRecording {
    fn __enter__(&self) {
        self.pause.enter();
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, PyTuple>) -> bool {
        self.pause.exit();
        false
    }
}

/// Starts collecting the variables read on this thread (for `custom_gradient`).
#[pyfunction]
fn push_variable_watcher() {
    tape::push_variable_watcher();
}

/// Stops collecting and returns the variables read since the matching push.
#[op_errors]
#[pyfunction]
fn pop_variable_watcher(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyAny>>> {
    tape::pop_variable_watcher()
        .iter()
        .map(|v| match owner_of(py, v) {
            Some(obj) => Ok(obj),
            None => Ok(Bound::new(py, PyVariable { var: v.clone() })?.into_any()),
        })
        .collect()
}

/// Records `outputs` as a function of `inputs` (tensors or variables) whose derivative is the
/// Python callable `backward(*output_grads) -> list of input grads`.
/// The Python function of one tape's `custom_gradient` entry. The tape's `__traverse__`
/// reports it to Python's garbage collector and `__clear__` drops it, so a cycle through it (a
/// gradient function that refers to the tape) is collected like any Python cycle.
struct CustomGradientFn(std::sync::Mutex<Option<Py<PyAny>>>);

impl CustomGradientFn {
    fn get(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let guard = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        guard.as_ref().map(|f| f.clone_ref(py))
    }
}

#[op_errors]
#[pyfunction]
fn record_custom_gradient(
    py: Python<'_>,
    inputs: Vec<Bound<'_, PyAny>>,
    outputs: Vec<Bound<'_, PyAny>>,
    backward: Py<PyAny>,
) -> PyResult<()> {
    let ids = inputs
        .iter()
        .map(|i| source_of(i).map(|s| s.id))
        .collect::<PyResult<Vec<_>>>()?;
    let outs = outputs
        .iter()
        .map(|o| to_tensor(o, None))
        .collect::<PyResult<Vec<_>>>()?;
    let n_inputs = ids.len();
    let refs: Vec<&Tensor> = outs.iter().collect();
    let make = || {
        let hook = Arc::new(CustomGradientFn(std::sync::Mutex::new(Some(
            backward.clone_ref(py),
        ))));
        let callable = hook.clone();
        let backward_fn = move |grads: &[Tensor], _needs: &[bool]| {
            Python::attach(|py| {
                let Some(function) = callable.get(py) else {
                    return Err(Error::runtime(
                        "custom_gradient",
                        "custom_gradient: the gradient function was released with its tape",
                    ));
                };
                custom_gradient_call(py, &function, grads, n_inputs).map_err(park)
            })
        };
        let boxed: Box<tape::BackwardFn> = Box::new(backward_fn);
        (boxed, hook as tape::HostObject)
    };
    tape::record_custom("CustomGradient", &ids, &refs, make);
    Ok(())
}

/// Calls a `custom_gradient` function with the output gradients; its input gradients.
fn custom_gradient_call(
    py: Python<'_>,
    backward: &Py<PyAny>,
    grads: &[Tensor],
    n_inputs: usize,
) -> PyResult<Vec<Option<Tensor>>> {
    let args: Vec<PyTensor> = grads.iter().cloned().map(PyTensor::new).collect();
    let result = backward.bind(py).call1(PyTuple::new(py, args)?)?;
    let result: Vec<Bound<'_, PyAny>> = result.extract()?;
    if result.len() != n_inputs {
        return Err(value_error(format!(
            "custom_gradient function expected to return {n_inputs} gradients, but returned {} instead",
            result.len()
        )));
    }
    result
        .iter()
        .map(|g| {
            if g.is_none() {
                Ok(None)
            } else {
                to_tensor(g, None).map(Some)
            }
        })
        .collect::<PyResult<Vec<_>>>()
}

/// A new tensor with the same value as `x` and no recorded history.
#[op_errors]
#[pyfunction]
fn fresh_tensor(x: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    Ok(PyTensor::new(ops::stop_gradient(&to_tensor(x, None)?)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGradientTape>()?;
    m.add_class::<StopRecording>()?;
    m.add_function(wrap_pyfunction!(push_variable_watcher, m)?)?;
    m.add_function(wrap_pyfunction!(pop_variable_watcher, m)?)?;
    m.add_function(wrap_pyfunction!(record_custom_gradient, m)?)?;
    m.add_function(wrap_pyfunction!(fresh_tensor, m)?)?;
    Ok(())
}
