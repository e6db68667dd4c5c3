//! Run-time choice of the instruction set for ferrotape's own loops.
//!
//! What ships is compiled for baseline x86-64 (SSE2): a wheel must run on any x86-64 CPU, so
//! `target-cpu=native` is never used. The hot loops (element-wise maps, the direct convolution,
//! pooling, the channels-last batch norm) are instead handed to [`dispatch`], which runs them
//! inside a function compiled with AVX-512 or AVX2 + FMA enabled when the CPU has them. The
//! loop bodies are inlined into those functions, so the compiler vectorises them at that width.
//! (Matrix products go through the `gemm` crate, which does its own run-time dispatch.)
//!
//! The level can be capped, never raised past what the CPU has: by the environment variable
//! `FERROTAPE_SIMD` (`baseline`, `avx2` or `avx512`), read once, or by [`set_max_level`] at run
//! time. The test suite runs the kernel checks at the baseline level this way.
//!
//! Design note: the dispatch is per call of a loop over a chunk (thousands of elements), never
//! per element, so its cost (one relaxed atomic load and a branch) does not show.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// An instruction-set level, ordered from narrowest to widest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimdLevel {
    /// x86-64's SSE2 (or whatever the target guarantees on other architectures).
    Baseline = 0,
    /// AVX2 with FMA: 8 f32 lanes.
    Avx2 = 1,
    /// AVX-512 F/BW/DQ/VL: 16 f32 lanes.
    Avx512 = 2,
}

impl SimdLevel {
    pub const ALL: [SimdLevel; 3] = [SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512];

    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Baseline => "baseline",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
        }
    }

    pub fn parse(name: &str) -> Option<SimdLevel> {
        Self::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }

    fn from_u8(v: u8) -> SimdLevel {
        Self::ALL[usize::from(v).min(2)]
    }
}

/// The widest level this CPU supports.
pub fn detected() -> SimdLevel {
    static DETECTED: OnceLock<SimdLevel> = OnceLock::new();
    *DETECTED.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return SimdLevel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return SimdLevel::Avx2;
            }
        }
        SimdLevel::Baseline
    })
}

/// The cap set by [`set_max_level`]; `UNSET` until then, when `FERROTAPE_SIMD` decides.
static CAP: AtomicU8 = AtomicU8::new(UNSET);
const UNSET: u8 = u8::MAX;

fn environment_cap() -> SimdLevel {
    static FROM_ENV: OnceLock<SimdLevel> = OnceLock::new();
    *FROM_ENV.get_or_init(|| {
        std::env::var("FERROTAPE_SIMD")
            .ok()
            .and_then(|v| SimdLevel::parse(&v))
            .unwrap_or(SimdLevel::Avx512)
    })
}

/// The level the loops run at now: what the CPU has, capped.
pub fn level() -> SimdLevel {
    let cap = match CAP.load(Ordering::Relaxed) {
        UNSET => environment_cap(),
        v => SimdLevel::from_u8(v),
    };
    detected().min(cap)
}

/// Caps the level for every following call (`None`: back to `FERROTAPE_SIMD`, or no cap).
/// Returns the level now in force.
pub fn set_max_level(cap: Option<SimdLevel>) -> SimdLevel {
    CAP.store(cap.map_or(UNSET, |l| l as u8), Ordering::Relaxed);
    level()
}

/// Runs `work` compiled for the widest level in force. `work` should be a loop whose body
/// inlines (slices and plain arithmetic); what it calls out of line runs at the baseline.
#[inline(always)]
pub fn dispatch<R>(work: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        match level() {
            // SAFETY: `level()` never exceeds `detected()`, so the CPU has these features.
            SimdLevel::Avx512 => return unsafe { with_avx512(work) },
            // SAFETY: as above: `detected()` is at least `Avx2`, so the CPU has AVX2 and FMA.
            SimdLevel::Avx2 => return unsafe { with_avx2(work) },
            SimdLevel::Baseline => {}
        }
    }
    work()
}

/// `work` compiled with AVX2 and FMA.
///
/// # Safety
/// The CPU has AVX2 and FMA (`detected()` is at least [`SimdLevel::Avx2`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn with_avx2<R>(work: impl FnOnce() -> R) -> R {
    work()
}

/// `work` compiled with AVX-512 F/BW/DQ/VL, AVX2 and FMA.
///
/// # Safety
/// The CPU has them (`detected()` is [`SimdLevel::Avx512`]; every AVX-512F CPU has AVX2).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
unsafe fn with_avx512<R>(work: impl FnOnce() -> R) -> R {
    work()
}

/// Held by the tests that change the level, so that under `cargo test`'s threads one test's
/// cap does not land in another's checks of which path ran.
#[cfg(test)]
pub(crate) static TEST_LEVEL_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` with the level capped at `level` (holding [`TEST_LEVEL_LOCK`]), restoring the
/// default after.
#[cfg(test)]
pub(crate) fn at_level<R>(level: SimdLevel, f: impl FnOnce() -> R) -> R {
    let _serial = TEST_LEVEL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    set_max_level(Some(level));
    let r = f();
    set_max_level(None);
    r
}

/// `run`'s result at every level this CPU has, each with 1 and with 3 threads (holding
/// [`TEST_LEVEL_LOCK`]), for tests that a kernel's bits depend on neither.
#[cfg(test)]
pub(crate) fn at_every_level_and_thread_count<R: Send>(run: impl Fn() -> R + Sync) -> Vec<R> {
    let _serial = TEST_LEVEL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut seen = Vec::new();
    for level in SimdLevel::ALL {
        if level > detected() {
            continue;
        }
        set_max_level(Some(level));
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            seen.push(pool.install(&run));
        }
    }
    set_max_level(None);
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_lowers_the_level_and_never_raises_it() {
        let _serial = TEST_LEVEL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let top = detected();
        assert_eq!(
            set_max_level(Some(SimdLevel::Baseline)),
            SimdLevel::Baseline
        );
        assert_eq!(dispatch(|| (0..100).map(|i| i as f32).sum::<f32>()), 4950.0);
        assert_eq!(set_max_level(Some(SimdLevel::Avx512)), top);
        set_max_level(None);
        assert!(level() <= top);
        assert_eq!(SimdLevel::parse(" AVX2 "), Some(SimdLevel::Avx2));
        assert_eq!(SimdLevel::parse("sse9"), None);
    }
}
