//! Ctrl-C during a long op. The kernels stop between blocks of work once asked to (see
//! `ferrotape_core::interrupt`); this module asks them and lets Python decide what follows.
//!
//! At import, if Python handles SIGINT itself (it does unless the program set `SIG_DFL` or
//! `SIG_IGN`), a second handler is chained after Python's: Python's still records the signal
//! as usual, ours raises the kernels' stop flag while an op that [`run`] started is running.
//! The stopped op then asks Python to run its handler now: the default raises
//! `KeyboardInterrupt`, which the op raises in place of its result. A handler that raises
//! nothing (a program that finishes its epoch on Ctrl-C) gets the op run again to the end.
//!
//! Only ops of the main thread are stopped, because only there does Python run signal
//! handlers. A program that later installs its own handler with `signal.signal` replaces the
//! chained one: its handler still runs, between ops, as before this module existed.

use std::sync::OnceLock;

use ferrotape_autodiff::core::interrupt::{self, Cancellable};
use ferrotape_autodiff::{Error, Result};
use pyo3::prelude::*;

/// Python's identifier of the main thread, read at import.
static MAIN_THREAD: OnceLock<u64> = OnceLock::new();

/// Chains the kernels' stop flag after Python's SIGINT handler (see the module docs).
pub fn install(py: Python<'_>) -> PyResult<()> {
    let threading = py.import("threading")?;
    let ident: u64 = threading
        .call_method0("main_thread")?
        .getattr("ident")?
        .extract()?;
    let _ = MAIN_THREAD.set(ident);
    #[cfg(unix)]
    {
        let signal = py.import("signal")?;
        let sigint: i32 = signal.getattr("SIGINT")?.extract()?;
        let python_handles_it = signal.call_method1("getsignal", (sigint,))?.is_callable();
        if python_handles_it {
            // SAFETY: the action only touches atomics (async-signal-safe), and SIGINT is not
            // one of the signals the registry refuses.
            unsafe { signal_hook_registry::register(sigint, interrupt::on_signal) }
                .map_err(|e| crate::errors::os_error(e.to_string()))?;
        }
    }
    Ok(())
}

pub fn on_main_thread() -> bool {
    // SAFETY: a plain query of the calling thread's identifier; needs no GIL.
    let current = unsafe { pyo3::ffi::PyThread_get_thread_ident() } as u64;
    MAIN_THREAD.get() == Some(&current)
}

/// Runs `f` (an op: no side effects before it succeeds) without the GIL, stoppable by Ctrl-C
/// on the main thread. A stopped op returns what Python's signal handler raised.
pub fn run<T: Send>(py: Python<'_>, f: impl Fn() -> Result<T> + Sync) -> Result<T> {
    let main = on_main_thread();
    loop {
        let out = py.detach(|| {
            let _stoppable = main.then(Cancellable::enter);
            f()
        });
        if !matches!(out, Err(Error::Cancelled { .. })) {
            return out;
        }
        if main {
            if let Err(raised) = py.check_signals() {
                return Err(crate::errors::park(raised));
            }
        }
        // The handler raised nothing, or the main thread's Ctrl-C stopped this op on its way:
        // the flag is down once the main thread's op ends (which needs the GIL), so wait for
        // that without the GIL and run this one again.
        py.detach(|| {
            while interrupt::requested() {
                std::thread::yield_now();
            }
        });
    }
}
