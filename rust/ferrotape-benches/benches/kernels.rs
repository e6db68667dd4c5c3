//! Criterion benchmarks of the kernels on the training path, at the shapes of issue 3's
//! workloads (W5's matrix products; the seed CNN's layers at batch 64). Run with
//! `cargo bench -p ferrotape-benches` (add `-- conv2d` to filter); pin the thread count with
//! `RAYON_NUM_THREADS` to compare runs.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrotape_benches::filled;
use ferrotape_core::kernels::{
    self, BinaryOp, Conv2dParams, ConvAlgorithm, Padding, ReduceOp, UnaryOp, Window2d, WinogradTile,
};
use ferrotape_core::DType;

fn matmul(c: &mut Criterion) {
    let mut group = c.benchmark_group("sgemm");
    group.sample_size(10);
    for n in [1024usize, 2048] {
        let (a, b) = (filled(&[n, n]), filled(&[n, n]));
        group.throughput(Throughput::Elements((2 * n * n * n) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |bench, _| {
            bench.iter(|| kernels::matmul(&a, &b, false, false).unwrap())
        });
    }
    group.finish();
}

/// The seed CNN's convolutions at batch 64: (height, in channels, out channels).
const CNN_CONVS: [(usize, usize, usize); 4] =
    [(28, 1, 16), (14, 16, 32), (14, 32, 32), (7, 64, 64)];

fn conv2d(c: &mut Criterion) {
    let params = Conv2dParams {
        stride: [1, 1],
        dilation: [1, 1],
        padding: Padding::Same,
    };
    let mut group = c.benchmark_group("conv2d");
    group.sample_size(20);
    for (size, cin, cout) in CNN_CONVS {
        let x = filled(&[64, size, size, cin]);
        let f = filled(&[3, 3, cin, cout]);
        let dy = filled(&[64, size, size, cout]);
        let id = format!("{size}x{size}x{cin}->{cout}");
        group.bench_function(BenchmarkId::new("forward", &id), |b| {
            b.iter(|| kernels::conv2d(&x, &f, None, &params).unwrap())
        });
        // Each forward algorithm on its own (the automatic choice is `forward` above).
        for (name, algorithm) in [
            ("forward_direct", ConvAlgorithm::Direct),
            ("forward_im2col", ConvAlgorithm::Im2col),
            (
                "forward_winograd2",
                ConvAlgorithm::Winograd(WinogradTile::F2),
            ),
            (
                "forward_winograd4",
                ConvAlgorithm::Winograd(WinogradTile::F4),
            ),
        ] {
            group.bench_function(BenchmarkId::new(name, &id), |b| {
                b.iter(|| kernels::conv2d_by(Some(algorithm), &x, &f, None, &params).unwrap())
            });
        }
        group.bench_function(BenchmarkId::new("backprop_input", &id), |b| {
            b.iter(|| kernels::conv2d_backprop_input(x.shape(), &f, &dy, &params).unwrap())
        });
        group.bench_function(BenchmarkId::new("backprop_filter", &id), |b| {
            b.iter(|| kernels::conv2d_backprop_filter(&x, f.shape(), &dy, &params).unwrap())
        });
        // Each filter-gradient algorithm on its own (the automatic choice is above).
        for (name, algorithm) in [
            ("backprop_filter_direct", ConvAlgorithm::Direct),
            ("backprop_filter_im2col", ConvAlgorithm::Im2col),
            (
                "backprop_filter_winograd2",
                ConvAlgorithm::Winograd(WinogradTile::F2),
            ),
            (
                "backprop_filter_winograd4",
                ConvAlgorithm::Winograd(WinogradTile::F4),
            ),
        ] {
            group.bench_function(BenchmarkId::new(name, &id), |b| {
                b.iter(|| {
                    kernels::conv2d_backprop_filter_by(Some(algorithm), &x, f.shape(), &dy, &params)
                        .unwrap()
                })
            });
        }
    }
    group.finish();
}

fn pooling_and_normalization(c: &mut Criterion) {
    let x = filled(&[64, 28, 28, 16]);
    let window = Window2d::new("bench", x.shape(), [2, 2], [2, 2], [1, 1], Padding::Valid).unwrap();
    let mut group = c.benchmark_group("cnn_layers_64x28x28x16");
    group.bench_function("max_pool", |b| {
        b.iter(|| kernels::max_pool(&x, &window).unwrap())
    });
    let pooled = kernels::max_pool(&x, &window).unwrap();
    let pooled_grad = filled(pooled.shape());
    group.bench_function("max_pool_grad", |b| {
        b.iter(|| kernels::max_pool_grad(&x, &pooled, &pooled_grad, &window).unwrap())
    });
    group.bench_function("avg_pool", |b| {
        b.iter(|| kernels::avg_pool(&x, &window).unwrap())
    });
    let (mean, variance) = kernels::batch_norm_statistics(&x, 3).unwrap();
    let inv_std: Vec<f64> = variance.iter().map(|v| 1.0 / (v + 1e-3).sqrt()).collect();
    let shift: Vec<f64> = mean.iter().zip(&inv_std).map(|(m, s)| -m * s).collect();
    group.bench_function("batch_norm_forward", |b| {
        b.iter(|| {
            let (mean, _) = kernels::batch_norm_statistics(&x, 3).unwrap();
            let _ = mean;
            kernels::batch_norm_apply(&x, 3, &inv_std, &shift).unwrap()
        })
    });
    group.bench_function("batch_norm_backward", |b| {
        b.iter(|| kernels::batch_norm_backward(&x, &x, 3, &mean, &inv_std, &[1.0; 16]).unwrap())
    });
    let bias = filled(&[16]);
    group.bench_function("relu", |b| {
        b.iter(|| kernels::unary(UnaryOp::Relu, &x).unwrap())
    });
    group.bench_function("bias_add", |b| {
        b.iter(|| kernels::binary(BinaryOp::Add, &x, &bias).unwrap())
    });
    let mask = [true, true, true, false];
    group.bench_function("bias_gradient_sum", |b| {
        b.iter(|| kernels::reduce(ReduceOp::Sum, &x, &mask, false).unwrap())
    });
    let scale = filled(&[]);
    group.bench_function("times_scalar", |b| {
        b.iter(|| kernels::binary(BinaryOp::Mul, &x, &scale).unwrap())
    });
    group.finish();
}

/// The seed CNN's hidden dense layer (576 → 256) at batch 64: its forward product, its input
/// gradient `dy @ kernelᵀ` (the transposed right operand) and its kernel gradient
/// `xᵀ @ dy`; and dropout's mask on its output.
fn dense_layer(c: &mut Criterion) {
    let (x, kernel, dy) = (filled(&[64, 576]), filled(&[576, 256]), filled(&[64, 256]));
    let mut group = c.benchmark_group("dense_64x576x256");
    group.bench_function("forward", |b| {
        b.iter(|| kernels::matmul(&x, &kernel, false, false).unwrap())
    });
    group.bench_function("input_gradient", |b| {
        b.iter(|| kernels::matmul(&dy, &kernel, false, true).unwrap())
    });
    group.bench_function("kernel_gradient", |b| {
        b.iter(|| kernels::matmul(&x, &dy, true, false).unwrap())
    });
    let mut rng = ferrotape_core::random::op_rng(1, 2);
    group.bench_function("dropout_mask", |b| {
        b.iter(|| {
            ferrotape_core::random::keep_mask(&mut rng, &[64, 256], 0.5, 2.0, DType::F32).unwrap()
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    matmul,
    conv2d,
    pooling_and_normalization,
    dense_layer
);
criterion_main!(benches);
