//! What the GPU test files share: whether a device is there, test values, and the check that
//! a result computed on the device stays there and equals the CPU's.

#![allow(dead_code)] // each test file uses its own subset

use ferrotape_core::{Array, Device};

pub const GPU: Device = Device::Gpu(0);

/// Whether a device is there to test (see the module docs).
pub fn gpu() -> bool {
    if !ferrotape_wgpu::init().is_empty() {
        return true;
    }
    let required = std::env::var("FERROTAPE_GPU_REQUIRE").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "FERROTAPE_GPU_REQUIRE=1 but no adapter was found"
    );
    eprintln!("no GPU adapter (set FERROTAPE_GPU_ALLOW_SOFTWARE=1 for lavapipe): skipped");
    false
}

/// Deterministic values in [lo, hi) for `shape`.
pub fn values(shape: &[usize], lo: f32, hi: f32, seed: u32) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| {
            let h = (i as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(97))
                >> 8;
            lo + (hi - lo) * (h % 10_007) as f32 / 10_007.0
        })
        .collect();
    Array::from_vec(v, shape).unwrap()
}

pub fn on_gpu(a: &Array) -> Array {
    let g = a.to_device(GPU).unwrap();
    assert_eq!(g.device(), GPU);
    g
}

/// `got` (computed on the GPU and living there) equals `want` within float32 rounding.
pub fn assert_close(got: &Array, want: &Array, what: &str) {
    assert_eq!(got.device(), GPU, "{what}: result left the device");
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w) = (got.to_vec::<f32>(), want.to_vec::<f32>());
    for (i, (x, y)) in g.iter().zip(&w).enumerate() {
        let ok = (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 2e-5 * (1.0 + y.abs());
        assert!(ok, "{what}: element {i}: GPU {x} vs CPU {y}");
    }
}
