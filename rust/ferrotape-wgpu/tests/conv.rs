//! The convolution and pooling kernels against the CPU's on awkward shapes (odd sizes, stride
//! and dilation 2, SAME and VALID, 1×1 and 5×3 windows, one and 17 channels, batch 1,
//! transposed views, ties and NaN in max pooling), and a small CNN's gradients, first and
//! second order, computed on the device and equal to the CPU's.
//!
//! As in `kernels.rs`: without an adapter these tests print why and pass, unless
//! `FERROTAPE_GPU_REQUIRE=1`.

use ferrotape_autodiff::ops;
use ferrotape_autodiff::{Source, Tape, Tensor};
use ferrotape_core::kernels::{self, Conv2dParams, Padding, Window2d};
use ferrotape_core::{Array, Device};

mod common;

use common::{gpu, GPU};

/// Deterministic values in [lo, hi) for `shape`, on `step`s (ties for max pooling) when given.
fn values(shape: &[usize], seed: u32, step: Option<f32>) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| {
            let h = (i as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(97))
                >> 8;
            let v = -1.0 + 2.0 * (h % 10_007) as f32 / 10_007.0;
            step.map_or(v, |s| (v / s).round() * s)
        })
        .collect();
    Array::from_vec(v, shape).unwrap()
}

/// `a` as a non-contiguous view: stored with axes 1 and 2 swapped, viewed back in place.
fn swapped_view(a: &Array) -> Array {
    a.transpose(&[0, 2, 1, 3])
        .unwrap()
        .contiguous()
        .transpose(&[0, 2, 1, 3])
        .unwrap()
}

/// The same view, its storage on the device.
fn on_gpu(a: &Array) -> Array {
    let stored = a.transpose(&[0, 2, 1, 3]).unwrap().to_device(GPU).unwrap();
    let view = stored.transpose(&[0, 2, 1, 3]).unwrap();
    assert_eq!(view.device(), GPU);
    view
}

/// `got` (computed on the GPU and living there) equals `want` within float32 rounding.
fn assert_close(got: &Array, want: &Array, what: &str) {
    assert_eq!(got.device(), GPU, "{what}: result left the device");
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w) = (got.to_vec::<f32>(), want.to_vec::<f32>());
    for (i, (x, y)) in g.iter().zip(&w).enumerate() {
        let ok = (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-5 * (1.0 + y.abs());
        assert!(ok, "{what}: element {i}: GPU {x} vs CPU {y}");
    }
}

/// (input NHWC, window, output channels, stride, dilation, padding).
type Case = (
    [usize; 4],
    [usize; 2],
    usize,
    [usize; 2],
    [usize; 2],
    Padding,
);

const CONV_CASES: [Case; 7] = [
    ([1, 7, 9, 1], [3, 3], 4, [1, 1], [1, 1], Padding::Same),
    ([2, 8, 7, 17], [5, 3], 3, [2, 2], [1, 1], Padding::Valid),
    ([3, 9, 5, 2], [1, 1], 17, [1, 1], [1, 1], Padding::Valid),
    ([2, 11, 10, 3], [3, 3], 5, [1, 1], [2, 2], Padding::Same),
    ([1, 6, 5, 17], [5, 3], 2, [2, 2], [1, 1], Padding::Same),
    ([2, 5, 7, 3], [1, 1], 4, [2, 2], [1, 1], Padding::Same),
    ([1, 9, 8, 2], [5, 3], 3, [1, 1], [2, 1], Padding::Valid),
];

#[test]
fn convolutions_and_their_gradients_match_the_cpu() {
    if !gpu() {
        return;
    }
    for (seed, (xs, k, out_c, stride, dilation, padding)) in CONV_CASES.into_iter().enumerate() {
        let seed = seed as u32 * 10;
        let what =
            format!("{xs:?} window {k:?} stride {stride:?} dilation {dilation:?} {padding:?}");
        let params = Conv2dParams {
            stride,
            dilation,
            padding,
        };
        let x = swapped_view(&values(&xs, seed, None));
        assert!(
            !on_gpu(&x).is_contiguous(),
            "{what}: the input is a strided view"
        );
        let f = swapped_view(&values(&[k[0], k[1], xs[3], out_c], seed + 1, None));
        let b = values(&[out_c], seed + 2, None);
        let want = kernels::conv2d(&x, &f, None, &params).unwrap();
        let got = kernels::conv2d(&on_gpu(&x), &on_gpu(&f), None, &params).unwrap();
        assert_close(&got, &want, &format!("Conv2D {what}"));
        let want = kernels::conv2d(&x, &f, Some(&b), &params).unwrap();
        let gb = b.to_device(GPU).unwrap();
        let got = kernels::conv2d(&on_gpu(&x), &on_gpu(&f), Some(&gb), &params).unwrap();
        assert_close(&got, &want, &format!("Conv2D with bias {what}"));
        let dy = swapped_view(&values(want.shape(), seed + 3, None));
        let want = kernels::conv2d_backprop_input(&xs, &f, &dy, &params).unwrap();
        let got = kernels::conv2d_backprop_input(&xs, &on_gpu(&f), &on_gpu(&dy), &params);
        assert_close(&got.unwrap(), &want, &format!("Conv2DBackpropInput {what}"));
        let fs = f.shape().to_vec();
        let want = kernels::conv2d_backprop_filter(&x, &fs, &dy, &params).unwrap();
        let got = kernels::conv2d_backprop_filter(&on_gpu(&x), &fs, &on_gpu(&dy), &params);
        assert_close(
            &got.unwrap(),
            &want,
            &format!("Conv2DBackpropFilter {what}"),
        );
    }
}

/// (input NHWC, window, stride, padding).
type PoolCase = ([usize; 4], [usize; 2], [usize; 2], Padding);

const POOL_CASES: [PoolCase; 7] = [
    ([2, 8, 6, 3], [2, 2], [2, 2], Padding::Valid),
    ([1, 7, 9, 17], [3, 3], [2, 2], Padding::Same),
    ([2, 5, 7, 1], [3, 2], [1, 1], Padding::Same),
    ([3, 6, 5, 2], [2, 2], [1, 1], Padding::Valid),
    ([1, 4, 4, 3], [5, 5], [1, 1], Padding::Same),
    ([2, 9, 8, 4], [1, 1], [2, 2], Padding::Valid),
    ([1, 7, 10, 2], [3, 2], [1, 2], Padding::Same),
];

#[test]
fn pooling_and_its_gradients_match_the_cpu() {
    if !gpu() {
        return;
    }
    for (seed, (xs, window, stride, padding)) in POOL_CASES.into_iter().enumerate() {
        let seed = seed as u32 * 10 + 100;
        let what = format!("{xs:?} window {window:?} stride {stride:?} {padding:?}");
        let w = Window2d::new("MaxPool", &xs, window, stride, [1, 1], padding).unwrap();
        // Values on a coarse grid, so windows hold ties (the first maximum takes the
        // gradient), and one NaN (it wins its windows).
        let mut v = values(&xs, seed, Some(0.25)).to_vec::<f32>();
        v[xs[3] * 3 + 1] = f32::NAN;
        let x = swapped_view(&Array::from_vec(v, &xs).unwrap());
        let gx = on_gpu(&x);
        let y = kernels::max_pool(&x, &w).unwrap();
        let gy = kernels::max_pool(&gx, &w).unwrap();
        assert_close(&gy, &y, &format!("MaxPool {what}"));
        let dy = swapped_view(&values(y.shape(), seed + 1, None));
        let want = kernels::max_pool_grad(&x, &y, &dy, &w).unwrap();
        let got = kernels::max_pool_grad(&gx, &gy, &on_gpu(&dy), &w).unwrap();
        assert_close(&got, &want, &format!("MaxPoolGrad {what}"));
        let g = swapped_view(&values(&xs, seed + 2, None));
        let want = kernels::max_pool_grad_grad(&x, &y, &g, &w).unwrap();
        let got = kernels::max_pool_grad_grad(&gx, &gy, &on_gpu(&g), &w).unwrap();
        assert_close(&got, &want, &format!("MaxPoolGradGrad {what}"));
        let x = swapped_view(&values(&xs, seed + 3, None));
        let want = kernels::avg_pool(&x, &w).unwrap();
        assert_close(
            &kernels::avg_pool(&on_gpu(&x), &w).unwrap(),
            &want,
            &format!("AvgPool {what}"),
        );
        let want = kernels::avg_pool_grad(&dy, &w).unwrap();
        assert_close(
            &kernels::avg_pool_grad(&on_gpu(&dy), &w).unwrap(),
            &want,
            &format!("AvgPoolGrad {what}"),
        );
    }
}

#[test]
fn float64_and_mismatched_inputs_keep_the_cpu_behaviour() {
    if !gpu() {
        return;
    }
    let params = Conv2dParams {
        stride: [1, 1],
        dilation: [1, 1],
        padding: Padding::Same,
    };
    // No float64 kernel: the CPU's runs on the downloaded copy.
    let x = Array::from_vec(vec![1.0f64; 2 * 3 * 3], &[1, 3, 3, 2]).unwrap();
    let f = Array::from_vec(vec![0.5f64; 2 * 2 * 2], &[1, 2, 2, 2]).unwrap();
    let x_on = x.to_device(GPU).unwrap();
    let y = kernels::conv2d(&x_on, &f, None, &params).unwrap();
    assert_eq!(y.device(), Device::Cpu);
    assert_eq!(
        y.to_vec::<f64>(),
        kernels::conv2d(&x, &f, None, &params)
            .unwrap()
            .to_vec::<f64>()
    );
    // Errors are the CPU's: checked before the device is asked.
    let f32_filter = values(&[1, 2, 2, 2], 1, None).to_device(GPU).unwrap();
    let err = kernels::conv2d(&x_on, &f32_filter, None, &params).unwrap_err();
    assert!(err.to_string().contains("Conv2D"), "{err}");
    let bad = values(&[3, 3, 5, 2], 2, None).to_device(GPU).unwrap();
    let x32 = values(&[1, 3, 3, 2], 3, None).to_device(GPU).unwrap();
    let err = kernels::conv2d(&x32, &bad, None, &params).unwrap_err();
    assert!(err.to_string().contains("input channels"), "{err}");
}

/// A small CNN: avg_pool(max_pool(tanh(conv2d(x, f) + b))), its loss the sum of squares.
fn cnn(x: &Tensor, f: &Tensor, b: &Tensor) -> Tensor {
    let params = Conv2dParams {
        stride: [1, 1],
        dilation: [1, 1],
        padding: Padding::Same,
    };
    let h = ops::tanh(&ops::conv2d(x, f, Some(b), params).unwrap()).unwrap();
    let shape = h.shape().to_vec();
    let w = Window2d::new("MaxPool", &shape, [2, 2], [2, 2], [1, 1], Padding::Valid).unwrap();
    let p = ops::max_pool2d(&h, &w).unwrap();
    let shape = p.shape().to_vec();
    let w = Window2d::new("AvgPool", &shape, [3, 3], [1, 1], [1, 1], Padding::Same).unwrap();
    let a = ops::avg_pool2d(&p, &w).unwrap();
    ops::reduce_sum(&ops::mul(&a, &a).unwrap(), None, false).unwrap()
}

/// The CNN's parameters on `device`.
fn parameters(device: Device) -> [Tensor; 3] {
    [
        values(&[2, 9, 8, 3], 1, None),
        values(&[3, 3, 3, 5], 2, None),
        values(&[5], 3, None),
    ]
    .map(|a| Tensor::new(a.to_device(device).unwrap()))
}

/// d loss / d (x, f, b), and the second order d/d(x, f) of the sum of squares of d loss/df.
fn cnn_gradients(device: Device) -> Vec<Array> {
    let [x, f, b] = parameters(device);
    let outer = Tape::new(false, true);
    outer.push();
    outer.watch_tensor(&x);
    outer.watch_tensor(&f);
    let inner = Tape::new(false, true);
    inner.push();
    for t in [&x, &f, &b] {
        inner.watch_tensor(t);
    }
    let loss = cnn(&x, &f, &b);
    inner.pop();
    let sources = [&x, &f, &b].map(Source::of_tensor);
    let first: Vec<Tensor> = inner
        .gradient(&[loss], &sources, None)
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect();
    let df = &first[1];
    let penalty = ops::reduce_sum(&ops::mul(df, df).unwrap(), None, false).unwrap();
    outer.pop();
    let second = outer
        .gradient(
            &[penalty],
            &[Source::of_tensor(&x), Source::of_tensor(&f)],
            None,
        )
        .unwrap();
    first
        .into_iter()
        .chain(second.into_iter().map(Option::unwrap))
        .map(|t| t.value().clone())
        .collect()
}

#[test]
fn cnn_gradients_first_and_second_order_run_on_the_device_and_match_the_cpu() {
    if !gpu() {
        return;
    }
    let names = ["dx", "df", "db", "d2/dx", "d2/df"];
    let (on_device, on_cpu) = (cnn_gradients(GPU), cnn_gradients(Device::Cpu));
    for ((got, want), name) in on_device.iter().zip(&on_cpu).zip(names) {
        assert_eq!(got.device(), GPU, "{name} left the device");
        let (g, w) = (got.to_vec::<f32>(), want.to_vec::<f32>());
        let scale = w.iter().fold(1.0f32, |m, v| m.max(v.abs()));
        for (i, (a, b)) in g.iter().zip(&w).enumerate() {
            assert!(
                (a - b).abs() <= 1e-4 * scale,
                "{name}[{i}]: GPU {a} vs CPU {b}"
            );
        }
    }
}
