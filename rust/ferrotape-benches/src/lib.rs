//! Benchmarks only: see `benches/kernels.rs` and run `cargo bench -p ferrotape-benches`; the
//! examples time one kernel family each. What they share lives here.

use ferrotape_core::aligned_alloc::CacheLineAligned;
use ferrotape_core::Array;

/// The Python module's allocator, so that the kernels are timed on buffers placed as they are
/// there.
#[global_allocator]
static ALLOCATOR: CacheLineAligned<mimalloc::MiMalloc> = CacheLineAligned(mimalloc::MiMalloc);

/// A float32 array of `shape` with values spread over [-0.5, 0.5) (deterministic, no zeros
/// runs, no denormals): the input every benchmark times its kernels on.
pub fn filled(shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1013) as f32 / 1013.0 - 0.5)
        .collect();
    Array::from_vec(values, shape).expect("sizes agree")
}
