//! PyO3 bindings of ferrotape: conversion and exposure only, one file per Python namespace.
//! The native module is `ferrotape._core`; `python/ferrotape/` arranges it into TensorFlow's
//! namespaces (`ft`, `ft.math`, `ft.nn`, `ft.linalg`, `ft.random`, and the layer cores of
//! `ft.keras.layers`).

// The doc comments of the Python-facing functions and classes are Python docstrings (Google
// style, with `>>>` examples whose output lines continue the prompt), not Markdown: rustdoc's
// quote-continuation lint does not apply to them.
#![allow(clippy::doc_lazy_continuation)]
// Each `unsafe` block says what it relies on in a safety comment above it.
#![warn(clippy::undocumented_unsafe_blocks)]

use ferrotape_py_macros::op_errors;
use pyo3::prelude::*;

/// Every op allocates its result (buffer, array, tensor); mimalloc's small-object paths make
/// that measurably cheaper than the system allocator on the tape's hot path. Large blocks start
/// on a cache line, for the kernels' whole-vector loads and stores (see `aligned_alloc`).
#[global_allocator]
static ALLOCATOR: ferrotape_core::aligned_alloc::CacheLineAligned<mimalloc::MiMalloc> =
    ferrotape_core::aligned_alloc::CacheLineAligned(mimalloc::MiMalloc);

// `op_doc!(name)` (an op's doc comment) and `RECORDING_OPS`, read from ferrotape-autodiff's
// sources by build.rs; defined before the modules so that their binding rows can use it.
include!(concat!(env!("OUT_DIR"), "/op_docs.rs"));

mod array;
mod checkpoint;
mod convert;
mod devices;
mod dtype;
mod errors;
mod forwardprop;
mod function;
mod interrupts;
mod keras;
mod linalg;
mod math;
mod nn;
mod optimizers;
mod protocols;
mod random;
mod registry;
mod tape;
mod tensor;
mod variable;

/// Submodules become attributes of `_core` (`_core.nn.relu`, ...).
fn submodule<'py>(
    parent: &Bound<'py, PyModule>,
    name: &str,
    register: fn(&Bound<'py, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let m = PyModule::new(parent.py(), name)?;
    register(&m)?;
    parent.add_submodule(&m)?;
    // Registering in sys.modules lets Python code write `from ferrotape._core.nn import relu`.
    let modules = parent.py().import("sys")?.getattr("modules")?;
    modules.set_item(format!("ferrotape._core.{name}"), m)
}

/// The instruction-set level ferrotape's own loops run at, one of baseline, avx2 or avx512
/// (the CPU's widest, capped by `FERROTAPE_SIMD` or `set_simd_level`).
#[pyfunction]
fn simd_level() -> &'static str {
    ferrotape_core::simd::level().name()
}

/// Caps the SIMD level (None lifts this cap) and returns the level now in force.
/// A cap never raises the level past what the CPU has.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (cap, /))]
fn set_simd_level(cap: Option<&str>) -> PyResult<&'static str> {
    use ferrotape_core::simd::{set_max_level, SimdLevel};
    let cap = cap
        .map(|name| {
            SimdLevel::parse(name).ok_or_else(|| {
                errors::value_error(format!(
                    "set_simd_level: expected \"baseline\", \"avx2\", \"avx512\" or None, received {name:?}"
                ))
            })
        })
        .transpose()?;
    Ok(set_max_level(cap).name())
}

/// The classes' rows (`registry::op_table`): the names TensorFlow programs construct.
const CLASSES: &[&[registry::Row]] = &[&[
    class_row("Tensor", &["Tensor"]),
    class_row("Variable", &["Variable"]),
    class_row("DType", &[]),
]];

const fn class_row(name: &'static str, tf_names: &'static [&'static str]) -> registry::Row {
    registry::Row {
        name,
        tf_names,
        differentiable: false,
        op: None,
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simd_level, m)?)?;
    m.add_function(wrap_pyfunction!(set_simd_level, m)?)?;
    m.add_function(wrap_pyfunction!(registry::op_table, m)?)?;
    m.add_function(wrap_pyfunction!(registry::recording_ops, m)?)?;
    m.add_function(wrap_pyfunction!(protocols::share_numpy, m)?)?;
    m.add_class::<tensor::PyTensor>()?;
    m.add_class::<variable::PyVariable>()?;
    m.add_class::<dtype::PyDType>()?;
    m.add_class::<protocols::PyReference>()?;
    tape::register(m)?;
    forwardprop::register(m)?;
    function::register(m)?;
    array::register(m)?;
    devices::register(m)?;
    math::register(m)?;
    submodule(m, "nn", nn::register)?;
    submodule(m, "linalg", linalg::register)?;
    submodule(m, "random", random::register)?;
    submodule(m, "keras", keras::register)?;
    submodule(m, "optimizers", optimizers::register)?;
    submodule(m, "checkpoint", checkpoint::register)?;
    interrupts::install(m.py())?;
    // The main thread (which runs most programs' ops) becomes one of the compute pool's
    // threads, so that its parallel kernels do not hand their work over and sleep (see
    // `join_pool_from_this_thread`); FERROTAPE_MAIN_THREAD_IN_POOL=0 keeps it out, to compare.
    if interrupts::on_main_thread()
        && std::env::var_os("FERROTAPE_MAIN_THREAD_IN_POOL").is_none_or(|v| v != "0")
    {
        ferrotape_autodiff::core::threads::join_pool_from_this_thread();
    }
    Ok(())
}
