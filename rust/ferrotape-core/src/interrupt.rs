//! Stopping a long op when the user presses Ctrl-C.
//!
//! Design choice: cancellation is cooperative and global. The Python bindings mark the ops they
//! run as cancellable ([`Cancellable`]) and, on SIGINT, [`on_signal`] raises one process-wide
//! flag, but only while such an op runs (a signal between ops is Python's alone). The long loops
//! of the kernels (matrix products, convolutions, factorisations, a gradient sweep) call
//! [`check`] between blocks of work, a relaxed atomic load, and stop with
//! [`Error::Cancelled`]; their partial results are dropped. Kernels that update their inputs in
//! place (the optimizers) never check, so a variable is never left half updated.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::{Error, Result};

/// The process's one flag and count (a struct so that tests can have their own).
struct Interrupt {
    /// Cancellable ops running now, on any thread.
    running: AtomicUsize,
    /// Set by a signal that arrived while some cancellable op was running.
    requested: AtomicBool,
}

impl Interrupt {
    const fn new() -> Interrupt {
        Interrupt {
            running: AtomicUsize::new(0),
            requested: AtomicBool::new(false),
        }
    }

    fn on_signal(&self) {
        if self.running.load(Ordering::SeqCst) > 0 {
            self.requested.store(true, Ordering::SeqCst);
        }
    }

    fn enter(&self) {
        self.running.fetch_add(1, Ordering::SeqCst);
    }

    fn leave(&self) {
        if self.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.requested.store(false, Ordering::SeqCst);
        }
    }

    #[inline]
    fn requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }
}

static PROCESS: Interrupt = Interrupt::new();

/// The signal handler's part: only atomics, so it is async-signal-safe.
pub fn on_signal() {
    PROCESS.on_signal();
}

/// Whether the running ops were asked to stop.
#[inline]
pub fn requested() -> bool {
    PROCESS.requested()
}

/// `Err(Error::Cancelled)` once the running ops were asked to stop.
#[inline]
pub fn check(op: &'static str) -> Result<()> {
    if requested() {
        return Err(Error::Cancelled { op });
    }
    Ok(())
}

/// Marks an op as running and cancellable for as long as it lives. When the last one ends, a
/// request that came too late to stop anything is forgotten.
pub struct Cancellable(());

impl Cancellable {
    pub fn enter() -> Cancellable {
        PROCESS.enter();
        Cancellable(())
    }
}

impl Drop for Cancellable {
    fn drop(&mut self) {
        PROCESS.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_stops_only_running_ops_and_is_forgotten_after_them() {
        let flag = Interrupt::new();
        flag.on_signal(); // Nothing runs: the signal is not ours.
        assert!(!flag.requested());
        flag.enter();
        flag.enter();
        flag.on_signal();
        assert!(flag.requested());
        flag.leave();
        assert!(flag.requested(), "one op still runs");
        flag.leave();
        assert!(!flag.requested());
    }

    #[test]
    fn check_names_the_op_only_when_asked_to_stop() {
        // The process flag is never raised by tests (no signals), so check passes.
        assert!(check("MatMul").is_ok());
        let err = Error::Cancelled { op: "MatMul" };
        assert_eq!(err.to_string(), "MatMul: interrupted");
    }
}
