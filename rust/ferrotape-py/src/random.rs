//! `ft.random`: seeded sampling. TensorFlow's contract: with a global seed, the n-th random op
//! of a program draws the same numbers every run; an op seed fixes one op (repeated calls with
//! the same seeds still advance, as in eager TensorFlow); with neither, numbers are fresh.

use std::collections::HashMap;

use ferrotape_autodiff::core::random::{self, StdRng};
use ferrotape_autodiff::core::Array;
use ferrotape_autodiff::{trace, DType, Tensor};
use ferrotape_py_macros::op_errors;
use parking_lot::Mutex;
use pyo3::prelude::*;

use crate::convert::{dims_of, to_tensor, Real, Seed};
use crate::dtype::optional_dtype;
use crate::errors::Raise;
use crate::registry::{self, functions};
use crate::tensor::PyTensor;

/// TensorFlow's default global seed when only an op seed is given.
const DEFAULT_GLOBAL_SEED: u64 = 87_654_321;

#[derive(Default)]
struct Seeds {
    global: Option<u64>,
    op_counter: u64,
    /// How many times each (global, op) pair has drawn, so repeated calls differ.
    draws: HashMap<(u64, u64), u64>,
}

static SEEDS: Mutex<Option<Seeds>> = Mutex::new(None);

/// A tensor of fresh random draws; a trace records the draw so that each replay draws anew
/// from the same stream (as a random op inside a TensorFlow function does).
fn drawn(
    op: &'static str,
    draw: impl Fn() -> ferrotape_autodiff::Result<Array> + Send + Sync + 'static,
) -> PyResult<PyTensor> {
    let t = Tensor::new(draw().raise()?);
    trace::node1(op, &[], &t, || {
        let (shape, dtype) = (t.shape().to_vec(), t.dtype());
        move |_: &[Tensor]| {
            if trace::probing() {
                // A probe of a trace's sizes draws nothing (see `trace::probing`).
                return Ok(Tensor::new(Array::zeros(op, dtype, &shape)?));
            }
            Ok(Tensor::new(draw()?))
        }
    });
    Ok(PyTensor::new(t))
}

fn next_rng(op_seed: Option<u64>) -> StdRng {
    let mut guard = SEEDS.lock();
    let seeds = guard.get_or_insert_with(Seeds::default);
    let (global, op) = match (seeds.global, op_seed) {
        (None, None) => return random::op_rng(rand_seed(), 0),
        (Some(g), None) => {
            seeds.op_counter += 1;
            (g, seeds.op_counter)
        }
        (g, Some(o)) => (g.unwrap_or(DEFAULT_GLOBAL_SEED), o),
    };
    let n = seeds.draws.entry((global, op)).or_insert(0);
    *n += 1;
    random::op_rng(global, op.wrapping_mul(1_000_003).wrapping_add(*n))
}

fn rand_seed() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ COUNTER.fetch_add(0x9E37_79B9, std::sync::atomic::Ordering::Relaxed)
}

/// `tf.random.set_seed`: fixes the global seed and restarts the op counter.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.random.set_seed(1)
/// >>> a = ft.random.uniform([3])
/// >>> ft.random.set_seed(1)
/// >>> bool(ft.reduce_all(ft.random.uniform([3]) == a))
/// True
///
/// Args:
///     seed: An int, or None to return to fresh random numbers.
///
/// Returns:
///     None.
#[pyfunction]
fn set_seed(seed: Option<u64>) {
    *SEEDS.lock() = Some(Seeds {
        global: seed,
        ..Seeds::default()
    });
}

fn float_dtype(dtype: Option<&Bound<'_, PyAny>>) -> PyResult<DType> {
    Ok(optional_dtype(dtype)?.unwrap_or(DType::F32))
}

/// Samples of a normal distribution N(`mean`, `stddev`²) of `shape` (float32 unless `dtype`).
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> x = ft.random.normal([2, 3], seed=1)
/// >>> x.shape, x.dtype
/// (TensorShape([2, 3]), tf.float32)
///
/// Args:
///     shape: A list of ints.
///     mean: The mean (default 0).
///     stddev: The standard deviation (default 1).
///     dtype: A float dtype (default float32).
///     seed: An int op seed; with the global seed it fixes the sequence drawn.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `shape` and `dtype`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (shape, mean=Real(0.0), stddev=Real(1.0), dtype=None, seed=None, name=None))]
fn normal(
    shape: &Bound<'_, PyAny>,
    mean: Real,
    stddev: Real,
    dtype: Option<&Bound<'_, PyAny>>,
    seed: Option<Seed>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let mean = mean.0;
    let stddev = stddev.0;
    let _ = name;
    let dims = dims_of("RandomStandardNormal", shape)?;
    let arg2 = float_dtype(dtype)?;
    drawn("RandomStandardNormal", move || {
        random::normal(&mut next_rng(seed.map(|s| s.0)), &dims, mean, stddev, arg2)
    })
}

/// Normal samples of `shape` redrawn until within two `stddev` of `mean`.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> x = ft.random.truncated_normal([1000], stddev=2.0, seed=1)
/// >>> bool(ft.reduce_max(ft.abs(x)) <= 4.0)
/// True
///
/// Args:
///     shape: A list of ints.
///     mean: The mean (default 0).
///     stddev: The standard deviation before truncation (default 1).
///     dtype: A float dtype (default float32).
///     seed: An int op seed; with the global seed it fixes the sequence drawn.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `shape` and `dtype`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (shape, mean=Real(0.0), stddev=Real(1.0), dtype=None, seed=None, name=None))]
fn truncated_normal(
    shape: &Bound<'_, PyAny>,
    mean: Real,
    stddev: Real,
    dtype: Option<&Bound<'_, PyAny>>,
    seed: Option<Seed>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let mean = mean.0;
    let stddev = stddev.0;
    let _ = name;
    let dims = dims_of("TruncatedNormal", shape)?;
    let arg2 = float_dtype(dtype)?;
    drawn("TruncatedNormal", move || {
        random::truncated_normal(&mut next_rng(seed.map(|s| s.0)), &dims, mean, stddev, arg2)
    })
}

/// Uniform samples of `shape` in [`minval`, `maxval`) (`maxval` 1 for floats, required for
/// integers).
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> x = ft.random.uniform([4], maxval=10, dtype=ft.int32, seed=1)
/// >>> x.dtype, bool(ft.reduce_all((x >= 0) & (x < 10)))
/// (tf.int32, True)
///
/// Args:
///     shape: A list of ints.
///     minval: The lower bound, included (default 0).
///     maxval: The upper bound, excluded (default 1 for floats; required for integer dtypes).
///     dtype: The dtype (default float32).
///     seed: An int op seed; with the global seed it fixes the sequence drawn.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `shape` and `dtype`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (shape, minval=Real(0.0), maxval=None, dtype=None, seed=None, name=None))]
fn uniform(
    shape: &Bound<'_, PyAny>,
    minval: Real,
    maxval: Option<Real>,
    dtype: Option<&Bound<'_, PyAny>>,
    seed: Option<Seed>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let minval = minval.0;
    let maxval = maxval.map(|v| v.0);
    let _ = name;
    let d = float_dtype(dtype)?;
    let maxval = random::uniform_maxval(maxval, d).raise()?;
    let dims = dims_of("RandomUniform", shape)?;
    drawn("RandomUniform", move || {
        random::uniform(&mut next_rng(seed.map(|s| s.0)), &dims, minval, maxval, d)
    })
}

/// Shuffles the first axis.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> x = ft.random.shuffle(ft.range(5), seed=1)
/// >>> sorted(x.numpy().tolist())
/// [0, 1, 2, 3, 4]
///
/// Args:
///     value: A tensor, or a value convertible to one.
///     seed: An int op seed; with the global seed it fixes the permutation.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     `value` with its rows along the first axis permuted.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (value, seed=None, name=None))]
fn shuffle(
    value: &Bound<'_, PyAny>,
    seed: Option<Seed>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(value, None)?;
    if t.rank() == 0 {
        return Ok(PyTensor::new(t));
    }
    let seed = seed.map(|s| s.0);
    let a = shuffled(&t, seed).raise()?;
    let a = Tensor::new(a);
    trace::node1("RandomShuffle", &[&t], &a, || {
        move |x: &[Tensor]| {
            if trace::probing() {
                return Ok(x[0].clone());
            }
            Ok(Tensor::new(shuffled(&x[0], seed)?))
        }
    });
    Ok(PyTensor::new(a))
}

fn shuffled(t: &Tensor, seed: Option<u64>) -> ferrotape_autodiff::Result<Array> {
    let perm = random::permutation(&mut next_rng(seed), t.shape()[0]);
    let index: Vec<Option<usize>> = perm.into_iter().map(Some).collect();
    ferrotape_autodiff::core::kernels::take("RandomShuffle", t.value(), 0, &index, 0.0)
}

functions! {
    set_seed ["random.set_seed"] no_grad,
    normal ["random.normal"] no_grad,
    truncated_normal ["random.truncated_normal"] no_grad,
    uniform ["random.uniform"] no_grad,
    shuffle ["random.shuffle"] no_grad,
}

/// This namespace's binding rows (`registry::op_table`).
pub const ROWS: &[&[registry::Row]] = &[FUNCTIONS];

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_functions(m)
}
