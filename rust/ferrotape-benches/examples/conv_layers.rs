//! CPU time of each convolution algorithm on the seed CNN's layers and an RGB first layer
//! (batch 64), and of the filter gradient by each, for choosing
//! between them: `RAYON_NUM_THREADS=1 cargo run --release -p ferrotape-benches --example
//! conv_layers` (CONV_ALGORITHM=<name> for one algorithm). Prints the median milliseconds of 15 calls per layer and algorithm.

use std::time::Instant;

use ferrotape_benches::filled;
use ferrotape_core::kernels::{
    conv2d_backprop_filter_by, conv2d_by, Conv2dParams, ConvAlgorithm, Padding, WinogradTile,
};

fn main() {
    let layers = [
        (28, 1, 16),
        (32, 3, 32),
        (14, 16, 32),
        (14, 32, 32),
        (7, 32, 64),
        (7, 64, 64),
    ];
    let algorithms = [
        ("direct", ConvAlgorithm::Direct),
        ("im2col", ConvAlgorithm::Im2col),
        ("winograd2", ConvAlgorithm::Winograd(WinogradTile::F2)),
        ("winograd4", ConvAlgorithm::Winograd(WinogradTile::F4)),
    ];
    // CONV_ALGORITHM=winograd4 (say) times only that one, for profiling.
    let only = std::env::var("CONV_ALGORITHM").ok();
    let params = Conv2dParams {
        stride: [1, 1],
        dilation: [1, 1],
        padding: Padding::Same,
    };
    for (side, in_c, out_c) in layers {
        if std::env::var("CONV_MIN_CHANNELS").is_ok_and(|m| in_c < m.parse().unwrap_or(0)) {
            continue;
        }
        let x = filled(&[64, side, side, in_c]);
        let f = filled(&[3, 3, in_c, out_c]);
        let b = filled(&[out_c]);
        let mut line = format!("{side}x{side} {in_c:>2}->{out_c:<2}");
        for (name, algorithm) in algorithms {
            if only.as_deref().is_some_and(|o| o != name) {
                continue;
            }
            let mut times: Vec<f64> = (0..17)
                .map(|_| {
                    let start = Instant::now();
                    conv2d_by(Some(algorithm), &x, &f, Some(&b), &params).unwrap();
                    start.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            times.sort_by(f64::total_cmp);
            line += &format!("  {name} {:.3}", times[times.len() / 2]);
        }
        // The filter gradient, by each algorithm.
        let dy = filled(&[64, side, side, out_c]);
        for (name, algorithm) in &algorithms {
            if only.as_deref().is_some_and(|o| o != *name) {
                continue;
            }
            let mut times: Vec<f64> = (0..17)
                .map(|_| {
                    let start = Instant::now();
                    conv2d_backprop_filter_by(Some(*algorithm), &x, f.shape(), &dy, &params)
                        .unwrap();
                    start.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            times.sort_by(f64::total_cmp);
            line += &format!("  dW-{name} {:.3}", times[times.len() / 2]);
        }
        println!("{line}");
    }
}
