//! CPU time of max pooling and its gradient on the seed CNN's pooling layers (batch 64, 2×2
//! windows, stride 2, VALID; float32): `RAYON_NUM_THREADS=2 cargo run --release -p
//! ferrotape-benches --example pool_layers`. Prints the median microseconds of 41 calls per
//! layer for the forward pass and the gradient (`MaxPoolGrad`).

use std::time::Instant;

use ferrotape_benches::filled;
use ferrotape_core::kernels::{max_pool, max_pool_grad, Padding, Window2d};

/// The median of 41 timed calls of `f`, in microseconds.
fn median_us(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..41)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    // The inputs of the seed CNN's three pooling layers.
    for (side, channels) in [(28, 16), (14, 32), (7, 64)] {
        let x = filled(&[64, side, side, channels]);
        let w =
            Window2d::new("MaxPool", x.shape(), [2, 2], [2, 2], [1, 1], Padding::Valid).unwrap();
        let y = max_pool(&x, &w).unwrap();
        let dy = filled(y.shape());
        let forward = median_us(|| drop(max_pool(&x, &w).unwrap()));
        let grad = median_us(|| drop(max_pool_grad(&x, &y, &dy, &w).unwrap()));
        println!(
            "{side}x{side}x{channels:<2}  max_pool {forward:7.1} us  max_pool_grad {grad:7.1} us"
        );
    }
}
