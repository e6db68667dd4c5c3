//! TensorFlow's tape contract as a Rust type: [`GradientTape`] is `tf.GradientTape` without the
//! host language. It holds the state TensorFlow's Python class keeps (entered, recording,
//! persistent) and enforces its rules, each with TensorFlow's message, defined here once.
//!
//! Why a separate part: the rules are about the order of API calls, not about recording or
//! differentiating, and they used to live in the PyO3 binding where no Rust test reached them.
//! Errors are core [`Error`]s: `Runtime` where TensorFlow raises `RuntimeError`, `Usage` where
//! it raises `ValueError`; the binding maps both to those types with the message verbatim.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ferrotape_core::{Error, Result};

use super::record::Tape;

/// A second differentiation of a non-persistent tape, or one of a tape never entered.
pub const ONE_SET_ONLY: &str =
    "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)";
/// Entering a tape whose `with` block is still open.
pub const STILL_RECORDING: &str =
    "Tape is still recording, This can happen if you try to re-enter an already-active tape.";
/// `reset()` or `stop_recording()` outside the tape's `with` block.
pub const NOT_RECORDING: &str = "Tape is not recording.";
/// `stop_recording()` on a tape that was never entered.
pub const NEVER_RECORDED: &str = "Trying to stop recording a tape which is not recording.";
/// `jacobian(..., experimental_use_pfor=False)` needs the tape's entries more than once.
pub const PFOR_NEEDS_PERSISTENT: &str = "GradientTape must be created with persistent=True to \
     compute the jacobian with experimental_use_pfor set to False.";

/// `tf.GradientTape`'s state and rules around a [`Tape`].
pub struct GradientTape {
    tape: Arc<Tape>,
    /// Inside the `with` block (and, for a non-persistent tape, not yet differentiated).
    recording: AtomicBool,
    /// The `with` block was entered at least once.
    entered: AtomicBool,
}

impl GradientTape {
    pub fn new(persistent: bool, watch_accessed_variables: bool) -> GradientTape {
        GradientTape {
            tape: Tape::new(persistent, watch_accessed_variables),
            recording: AtomicBool::new(false),
            entered: AtomicBool::new(false),
        }
    }

    /// The engine (for watching, recording and the sweeps themselves).
    pub fn tape(&self) -> &Arc<Tape> {
        &self.tape
    }

    pub fn persistent(&self) -> bool {
        self.tape.persistent()
    }

    /// Entering the `with` block: the tape becomes active on this thread.
    pub fn enter(&self) -> Result<()> {
        if self.recording.swap(true, Ordering::Relaxed) {
            return Err(Error::usage("GradientTape.__enter__", STILL_RECORDING));
        }
        self.entered.store(true, Ordering::Relaxed);
        self.tape.push();
        Ok(())
    }

    /// Leaving the `with` block (a no-op when differentiation already stopped the recording).
    pub fn exit(&self) {
        if self.recording.swap(false, Ordering::Relaxed) {
            self.tape.pop();
        }
    }

    /// Forgets everything recorded and watched; only inside the `with` block.
    pub fn reset(&self) -> Result<()> {
        if !self.recording.load(Ordering::Relaxed) {
            return Err(Error::usage("GradientTape.reset", NOT_RECORDING));
        }
        self.tape.reset();
        Ok(())
    }

    /// A pause of the recording for a nested block; only inside the `with` block.
    pub fn stop_recording(&self) -> Result<Pause> {
        const OP: &str = "GradientTape.stop_recording";
        if !self.recording.load(Ordering::Relaxed) {
            if !self.entered.load(Ordering::Relaxed) {
                return Err(Error::runtime(OP, NEVER_RECORDED));
            }
            return Err(Error::usage(OP, NOT_RECORDING));
        }
        Ok(Pause {
            tape: self.tape.clone(),
            was_paused: AtomicBool::new(false),
        })
    }

    /// Called before each `gradient`/`jacobian`/`batch_jacobian` (`op`): refuses a tape never
    /// entered; a non-persistent tape stops recording, as in TensorFlow. The tape itself
    /// refuses a second sweep of a non-persistent tape (see `backprop`).
    pub fn begin_differentiation(&self, op: &'static str) -> Result<()> {
        if !self.entered.load(Ordering::Relaxed) {
            return Err(Error::runtime(op, ONE_SET_ONLY));
        }
        if !self.persistent() && self.recording.swap(false, Ordering::Relaxed) {
            self.tape.pop();
        }
        Ok(())
    }

    /// `experimental_use_pfor=False` runs one sweep per target element: persistent tapes only.
    pub fn check_pfor(&self, op: &'static str, experimental_use_pfor: bool) -> Result<()> {
        if !experimental_use_pfor && !self.persistent() {
            return Err(Error::runtime(op, PFOR_NEEDS_PERSISTENT));
        }
        Ok(())
    }
}

/// What `stop_recording()` returns: pauses the tape between [`Pause::enter`] and
/// [`Pause::exit`], restoring the state it found (pauses nest).
pub struct Pause {
    tape: Arc<Tape>,
    was_paused: AtomicBool,
}

impl Pause {
    pub fn enter(&self) {
        self.was_paused
            .store(self.tape.set_paused(true), Ordering::Relaxed);
    }

    pub fn exit(&self) {
        self.tape
            .set_paused(self.was_paused.load(Ordering::Relaxed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::Source;
    use crate::{ops, Tensor};
    use ferrotape_core::Array;

    fn x() -> Tensor {
        Tensor::new(Array::scalar(2.0))
    }

    fn message(err: Error) -> (bool, String) {
        match err {
            Error::Runtime { msg, .. } => (true, msg),
            Error::Usage { msg, .. } => (false, msg),
            other => panic!("unexpected error {other:?}"),
        }
    }

    /// Records `x²` inside the block and returns the target.
    fn square_in_block(tape: &GradientTape, x: &Tensor) -> Tensor {
        tape.enter().unwrap();
        tape.tape().watch_tensor(x);
        let y = ops::mul(x, x).unwrap();
        tape.exit();
        y
    }

    #[test]
    fn entering_a_recording_tape_again_is_a_usage_error() {
        let tape = GradientTape::new(false, true);
        tape.enter().unwrap();
        let err = tape.enter().unwrap_err();
        tape.exit();
        assert_eq!(message(err), (false, STILL_RECORDING.to_string()));
    }

    #[test]
    fn differentiating_a_tape_never_entered_is_a_runtime_error() {
        let tape = GradientTape::new(true, true);
        let err = tape
            .begin_differentiation("GradientTape.gradient")
            .unwrap_err();
        assert_eq!(message(err), (true, ONE_SET_ONLY.to_string()));
    }

    #[test]
    fn a_second_gradient_of_a_non_persistent_tape_is_a_runtime_error() {
        let (tape, x) = (GradientTape::new(false, true), x());
        let y = square_in_block(&tape, &x);
        let src = [Source::of_tensor(&x)];
        tape.begin_differentiation("GradientTape.gradient").unwrap();
        tape.tape()
            .gradient(std::slice::from_ref(&y), &src, None)
            .unwrap();
        tape.begin_differentiation("GradientTape.gradient").unwrap();
        let err = tape.tape().gradient(&[y], &src, None).unwrap_err();
        assert_eq!(message(err), (true, ONE_SET_ONLY.to_string()));
    }

    #[test]
    fn a_persistent_tape_differentiates_again() {
        let (tape, x) = (GradientTape::new(true, true), x());
        let y = square_in_block(&tape, &x);
        for _ in 0..2 {
            tape.begin_differentiation("GradientTape.gradient").unwrap();
            let g = tape
                .tape()
                .gradient(std::slice::from_ref(&y), &[Source::of_tensor(&x)], None);
            assert_eq!(
                g.unwrap()[0].as_ref().unwrap().value().scalar_f64(),
                Some(4.0)
            );
        }
    }

    #[test]
    fn differentiating_a_non_persistent_tape_stops_its_recording() {
        let (tape, x) = (GradientTape::new(false, true), x());
        tape.enter().unwrap();
        tape.tape().watch_tensor(&x);
        tape.begin_differentiation("GradientTape.gradient").unwrap();
        assert!(!tape.tape().is_active());
        ops::mul(&x, &x).unwrap();
        assert!(tape.tape().is_empty(), "recorded after differentiation");
        assert_eq!(message(tape.reset().unwrap_err()).1, NOT_RECORDING);
        tape.exit();
    }

    #[test]
    fn reset_outside_the_block_is_a_usage_error_and_inside_forgets_the_record() {
        let (tape, x) = (GradientTape::new(true, true), x());
        square_in_block(&tape, &x);
        assert_eq!(
            message(tape.reset().unwrap_err()),
            (false, NOT_RECORDING.to_string())
        );
        tape.enter().unwrap();
        assert!(!tape.tape().is_empty());
        tape.reset().unwrap();
        tape.exit();
        assert!(tape.tape().is_empty());
    }

    #[test]
    fn stop_recording_of_a_tape_never_entered_is_a_runtime_error() {
        let tape = GradientTape::new(false, true);
        let err = tape.stop_recording().err().unwrap();
        assert_eq!(message(err), (true, NEVER_RECORDED.to_string()));
    }

    #[test]
    fn stop_recording_after_the_block_is_a_usage_error() {
        let (tape, x) = (GradientTape::new(false, true), x());
        square_in_block(&tape, &x);
        let err = tape.stop_recording().err().unwrap();
        assert_eq!(message(err), (false, NOT_RECORDING.to_string()));
    }

    #[test]
    fn a_pause_records_nothing_and_restores_the_recording() {
        let (tape, x) = (GradientTape::new(true, true), x());
        tape.enter().unwrap();
        tape.tape().watch_tensor(&x);
        let pause = tape.stop_recording().unwrap();
        pause.enter();
        ops::mul(&x, &x).unwrap();
        pause.exit();
        assert!(tape.tape().is_empty());
        ops::mul(&x, &x).unwrap();
        tape.exit();
        assert_eq!(tape.tape().len(), 1);
    }

    #[test]
    fn jacobian_without_pfor_needs_a_persistent_tape() {
        let err = GradientTape::new(false, true)
            .check_pfor("GradientTape.jacobian", false)
            .unwrap_err();
        assert_eq!(message(err), (true, PFOR_NEEDS_PERSISTENT.to_string()));
        let persistent = GradientTape::new(true, true);
        assert!(persistent
            .check_pfor("GradientTape.jacobian", false)
            .is_ok());
        assert!(GradientTape::new(false, true)
            .check_pfor("GradientTape.jacobian", true)
            .is_ok());
    }
}
