//! Every GPU kernel against the CPU kernel on awkward shapes and layouts, placement and soft
//! placement, and gradients (second order included) through device tensors.
//!
//! Without an adapter these tests print why and pass, unless `FERROTAPE_GPU_REQUIRE=1` (CI sets
//! it, with `FERROTAPE_GPU_ALLOW_SOFTWARE=1` and Mesa's lavapipe installed), where they fail.

use ferrotape_autodiff::ops;
use ferrotape_autodiff::{Source, Tape, Tensor};
use ferrotape_core::device::{placement, set_placement};
use ferrotape_core::kernels::{self, BinaryOp, ReduceOp, UnaryOp};
use ferrotape_core::{Array, Complex, Device};

mod common;

use common::{assert_close, gpu, on_gpu, values, GPU};

#[test]
fn arrays_of_every_dtype_round_trip() {
    if !gpu() {
        return;
    }
    let cases = [
        Array::from_vec(vec![1.5f32, -2.0, 3.25], &[3]).unwrap(),
        Array::from_vec(vec![1.5f64, -2.0], &[2, 1]).unwrap(),
        Array::from_vec(vec![7i32, -8, 9, 10, 11], &[5]).unwrap(),
        Array::from_vec(vec![i64::MIN, 3], &[2]).unwrap(),
        Array::from_vec(vec![true, false, true], &[3]).unwrap(),
        Array::from_vec(vec![ferrotape_core::f16::from_f32(0.5); 3], &[3]).unwrap(),
        Array::from_vec(Vec::<f32>::new(), &[0, 4]).unwrap(),
        Array::scalar(4.0f32),
        Array::from_vec(
            vec![
                Complex {
                    re: 1.5f32,
                    im: -2.0
                };
                3
            ],
            &[3],
        )
        .unwrap(),
        Array::from_vec(
            vec![
                Complex {
                    re: -0.25f64,
                    im: 8.0
                };
                2
            ],
            &[1, 2],
        )
        .unwrap(),
    ];
    for a in cases {
        let g = on_gpu(&a);
        assert_eq!(g.dtype(), a.dtype());
        let back = g.to_device(Device::Cpu).unwrap();
        assert_eq!(back.device(), Device::Cpu);
        assert_eq!(
            format!("{:?}", back.buffer()),
            format!("{:?}", a.contiguous().buffer())
        );
    }
    // A strided view uploads as its own elements.
    let t = values(&[3, 4], -1.0, 1.0, 1).transpose(&[1, 0]).unwrap();
    assert_eq!(on_gpu(&t).to_vec::<f32>(), t.to_vec::<f32>());
}

#[test]
fn unary_kernels_match_the_cpu() {
    if !gpu() {
        return;
    }
    use UnaryOp::*;
    let ops = [
        (Neg, -3.0, 3.0),
        (Abs, -3.0, 3.0),
        (Sign, -3.0, 3.0),
        (Square, -3.0, 3.0),
        (Exp, -10.0, 10.0),
        (Expm1, -1.0, 1.0),
        (Log, 0.01, 10.0),
        (Log1p, -0.5, 2.0),
        (Sqrt, 0.0, 9.0),
        (Rsqrt, 0.1, 9.0),
        (Reciprocal, 0.5, 4.0),
        (Sin, -3.0, 3.0),
        (Cos, -3.0, 3.0),
        (Tan, -1.0, 1.0),
        (Asin, -0.9, 0.9),
        (Acos, -0.9, 0.9),
        (Atan, -5.0, 5.0),
        (Sinh, -3.0, 3.0),
        (Cosh, -3.0, 3.0),
        (Tanh, -20.0, 20.0),
        (Asinh, -5.0, 5.0),
        (Acosh, 1.0, 5.0),
        (Atanh, -0.9, 0.9),
        (Sigmoid, -30.0, 30.0),
        (Relu, -2.0, 2.0),
        (Softplus, -20.0, 20.0),
        (Floor, -5.0, 5.0),
        (Ceil, -5.0, 5.0),
        (Round, -5.0, 5.0),
    ];
    for (seed, (op, lo, hi)) in ops.into_iter().enumerate() {
        for shape in [&[0usize][..], &[], &[1], &[7], &[3, 5], &[2, 3, 65]] {
            let a = values(shape, lo, hi, seed as u32);
            let got = kernels::unary(op, &on_gpu(&a)).unwrap();
            assert_close(
                &got,
                &kernels::unary(op, &a).unwrap(),
                &format!("{op:?} {shape:?}"),
            );
        }
        // A transposed view is read in place.
        let a = values(&[4, 7], lo, hi, 3).transpose(&[1, 0]).unwrap();
        let got = kernels::unary(
            op,
            &on_gpu(&values(&[4, 7], lo, hi, 3))
                .transpose(&[1, 0])
                .unwrap(),
        );
        assert_close(
            &got.unwrap(),
            &kernels::unary(op, &a).unwrap(),
            &format!("{op:?} transposed"),
        );
    }
    // Round breaks ties to even; NaN passes through relu and sign.
    let ties = Array::from_vec(vec![0.5f32, 1.5, 2.5, -0.5, f32::NAN], &[5]).unwrap();
    for op in [Round, Relu, Sign] {
        let got = kernels::unary(op, &on_gpu(&ties)).unwrap();
        assert_close(
            &got,
            &kernels::unary(op, &ties).unwrap(),
            &format!("{op:?} ties"),
        );
    }
}

#[test]
fn binary_kernels_broadcast_like_the_cpu() {
    if !gpu() {
        return;
    }
    use BinaryOp::*;
    let shapes: [(&[usize], &[usize]); 8] = [
        (&[3, 1, 5], &[4, 1]),
        (&[1], &[7]),
        (&[0, 3], &[1, 3]),
        (&[2, 3], &[3]),
        (&[], &[4, 4]),
        (&[], &[]),
        (&[5, 1, 1, 2], &[1, 3, 2, 1]),
        (&[130, 17], &[130, 1]),
    ];
    for op in [
        Add,
        Sub,
        Mul,
        Div,
        Maximum,
        Minimum,
        SquaredDifference,
        FloorDiv,
        Atan2,
    ] {
        for (sa, sb) in shapes {
            let (a, b) = (values(sa, -3.0, 3.0, 1), values(sb, 0.5, 3.0, 2));
            let got = kernels::binary(op, &on_gpu(&a), &on_gpu(&b)).unwrap();
            let want = kernels::binary(op, &a, &b).unwrap();
            assert_close(&got, &want, &format!("{op:?} {sa:?} {sb:?}"));
        }
    }
    // A reversed slice and a transposed view as operands; NaN propagates through maximum.
    let a = values(&[6, 4], -1.0, 1.0, 5);
    let reversed = a.slice_view(&[5, 0], &[6, 4], &[-1, 1]);
    let on = on_gpu(&a).slice_view(&[5, 0], &[6, 4], &[-1, 1]);
    let t = values(&[4, 6], -1.0, 1.0, 6);
    let got = kernels::binary(Mul, &on, &on_gpu(&t).transpose(&[1, 0]).unwrap()).unwrap();
    let want = kernels::binary(Mul, &reversed, &t.transpose(&[1, 0]).unwrap()).unwrap();
    assert_close(&got, &want, "reversed and transposed views");
    let nan = Array::from_vec(vec![f32::NAN, 1.0], &[2]).unwrap();
    let one = Array::from_vec(vec![0.0f32, f32::NAN], &[2]).unwrap();
    let got = kernels::binary(Maximum, &on_gpu(&nan), &on_gpu(&one)).unwrap();
    assert!(got.to_vec::<f32>().iter().all(|x| x.is_nan()));
}

#[test]
fn large_element_wise_work_spans_two_dispatch_dimensions() {
    if !gpu() {
        return;
    }
    // More than 65,535 workgroups of 64: the grid folds into y.
    let n = 65_536 * 64 + 3;
    let a = values(&[n], -1.0, 1.0, 7);
    let got = kernels::binary(BinaryOp::Add, &on_gpu(&a), &on_gpu(&a)).unwrap();
    assert_close(
        &got,
        &kernels::binary(BinaryOp::Add, &a, &a).unwrap(),
        "large add",
    );
}

#[test]
fn matmul_matches_the_cpu_batched_and_transposed() {
    if !gpu() {
        return;
    }
    let cases: [(&[usize], &[usize], bool, bool); 10] = [
        (&[1, 1], &[1, 1], false, false),
        (&[17, 33], &[33, 5], false, false),
        (&[64, 64], &[64, 64], false, false),
        (&[33, 17], &[33, 5], true, false),
        (&[17, 33], &[5, 33], false, true),
        (&[33, 17], &[5, 33], true, true),
        (&[3, 0], &[0, 4], false, false),
        (&[0, 3], &[3, 4], false, false),
        (&[2, 1, 5, 7], &[3, 7, 4], false, false),
        (&[4, 9, 3], &[9, 2], true, false),
    ];
    for (sa, sb, ta, tb) in cases {
        let (a, b) = (values(sa, -1.0, 1.0, 8), values(sb, -1.0, 1.0, 9));
        let got = kernels::matmul(&on_gpu(&a), &on_gpu(&b), ta, tb).unwrap();
        let want = kernels::matmul(&a, &b, ta, tb).unwrap();
        assert_close(&got, &want, &format!("matmul {sa:?} {sb:?} {ta} {tb}"));
    }
}

#[test]
fn sums_along_any_axes_match_the_cpu() {
    if !gpu() {
        return;
    }
    let a = values(&[5, 7, 3], -1.0, 1.0, 10);
    for bits in 0..8u32 {
        let mask: Vec<bool> = (0..3).map(|i| bits & (1 << i) != 0).collect();
        for keepdims in [false, true] {
            let got = kernels::reduce(ReduceOp::Sum, &on_gpu(&a), &mask, keepdims).unwrap();
            let want = kernels::reduce(ReduceOp::Sum, &a, &mask, keepdims).unwrap();
            assert_close(&got, &want, &format!("sum {mask:?} keepdims={keepdims}"));
        }
    }
    // Empty inputs (zeros out, or nothing out), a long reduction, and a transposed view.
    for (shape, mask) in [
        (&[0usize, 4][..], &[true, false][..]),
        (&[4, 0], &[true, false]),
        (&[1, 200_003], &[false, true]),
        (&[200_003], &[true]),
    ] {
        let a = values(shape, -1.0, 1.0, 11);
        let got = kernels::reduce(ReduceOp::Sum, &on_gpu(&a), mask, false).unwrap();
        let want = kernels::reduce(ReduceOp::Sum, &a, mask, false).unwrap();
        assert_close(&got, &want, &format!("sum {shape:?} {mask:?}"));
    }
    let t = values(&[6, 9], -1.0, 1.0, 12);
    let got = kernels::reduce(
        ReduceOp::Sum,
        &on_gpu(&t).transpose(&[1, 0]).unwrap(),
        &[false, true],
        false,
    );
    let want = kernels::reduce(
        ReduceOp::Sum,
        &t.transpose(&[1, 0]).unwrap(),
        &[false, true],
        false,
    );
    assert_close(&got.unwrap(), &want.unwrap(), "sum of a transposed view");
}

#[test]
fn views_materialise_on_the_device() {
    if !gpu() {
        return;
    }
    let a = values(&[3, 5], -1.0, 1.0, 13);
    let got = on_gpu(&a).transpose(&[1, 0]).unwrap().contiguous();
    assert_close(
        &got,
        &a.transpose(&[1, 0]).unwrap().contiguous(),
        "contiguous",
    );
    let r = on_gpu(&a)
        .transpose(&[1, 0])
        .unwrap()
        .reshape(&[15])
        .unwrap();
    assert_close(
        &r,
        &a.transpose(&[1, 0]).unwrap().reshape(&[15]).unwrap(),
        "reshape",
    );
}

#[test]
fn placement_follows_the_scope_then_the_inputs_with_soft_placement() {
    if !gpu() {
        return;
    }
    let a = values(&[4], 0.5, 2.0, 14);
    // Inputs on the device: the op runs there.
    assert_eq!(
        kernels::unary(UnaryOp::Exp, &on_gpu(&a)).unwrap().device(),
        GPU
    );
    // A device scope moves host inputs there; a CPU scope brings device inputs back.
    let before = set_placement(Some(GPU));
    assert_eq!(kernels::unary(UnaryOp::Exp, &a).unwrap().device(), GPU);
    set_placement(Some(Device::Cpu));
    assert_eq!(
        kernels::unary(UnaryOp::Exp, &on_gpu(&a)).unwrap().device(),
        Device::Cpu
    );
    set_placement(before);
    assert_eq!(placement(), None);
    // No GPU kernel (Lgamma, Pow, float64): the CPU kernel runs on the downloaded copy.
    let g = kernels::unary(UnaryOp::Lgamma, &on_gpu(&a)).unwrap();
    assert_eq!(g.device(), Device::Cpu);
    assert_eq!(
        g.to_vec::<f32>(),
        kernels::unary(UnaryOp::Lgamma, &a).unwrap().to_vec::<f32>()
    );
    let p = kernels::binary(BinaryOp::Pow, &on_gpu(&a), &a).unwrap();
    assert_eq!(
        p.to_vec::<f32>(),
        kernels::binary(BinaryOp::Pow, &a, &a)
            .unwrap()
            .to_vec::<f32>()
    );
    let d = Array::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    let e = kernels::unary(UnaryOp::Exp, &on_gpu(&d)).unwrap();
    assert_eq!(
        e.to_vec::<f64>(),
        kernels::unary(UnaryOp::Exp, &d).unwrap().to_vec::<f64>()
    );
    // Mismatched dtypes still fail as on the CPU.
    assert!(kernels::binary(BinaryOp::Add, &on_gpu(&a), &on_gpu(&d)).is_err());
}

/// d/dx and d/dw of sum(tanh(x @ w) * x[:, :1]) + sum(lgamma(x)), on `device`'s tensors.
fn gradients(device: Device) -> Vec<Vec<f32>> {
    let x = Tensor::new(values(&[5, 3], 0.5, 2.0, 15).to_device(device).unwrap());
    let w = Tensor::new(values(&[3, 4], -1.0, 1.0, 16).to_device(device).unwrap());
    let tape = Tape::new(false, true);
    tape.push();
    tape.watch_tensor(&x);
    tape.watch_tensor(&w);
    let h = ops::tanh(&ops::matmul(&x, &w, false, false).unwrap()).unwrap();
    let y = ops::reduce_sum(&ops::mul(&h, &first_column(&x)).unwrap(), None, false).unwrap();
    // lgamma has no GPU kernel: its forward and backward fall back to the CPU.
    let z = ops::add(
        &y,
        &ops::reduce_sum(&ops::lgamma(&x).unwrap(), None, false).unwrap(),
    )
    .unwrap();
    tape.pop();
    let g = tape
        .gradient(&[z], &[Source::of_tensor(&x), Source::of_tensor(&w)], None)
        .unwrap();
    g.into_iter()
        .map(|t| t.unwrap().value().to_vec::<f32>())
        .collect()
}

/// `x[:, :1]`, as a matmul the tape records.
fn first_column(x: &Tensor) -> Tensor {
    let pick = Tensor::new(Array::from_vec(vec![1.0f32, 0.0, 0.0], &[3, 1]).unwrap());
    ops::matmul(x, &pick, false, false).unwrap()
}

#[test]
fn gradients_through_device_tensors_equal_the_cpu_ones() {
    if !gpu() {
        return;
    }
    let (on_device, on_cpu) = (gradients(GPU), gradients(Device::Cpu));
    for (g, c) in on_device.iter().zip(&on_cpu) {
        for (x, y) in g.iter().zip(c) {
            assert!((x - y).abs() <= 1e-4 * (1.0 + y.abs()), "{x} vs {y}");
        }
    }
}

#[test]
fn second_order_gradients_run_on_the_device() {
    if !gpu() {
        return;
    }
    let x = Tensor::new(on_gpu(&Array::from_vec(vec![2.0f32, -1.0], &[2]).unwrap()));
    let outer = Tape::new(false, true);
    outer.push();
    outer.watch_tensor(&x);
    let inner = Tape::new(false, true);
    inner.push();
    inner.watch_tensor(&x);
    let y = ops::reduce_sum(
        &ops::mul(&ops::mul(&x, &x).unwrap(), &x).unwrap(),
        None,
        false,
    )
    .unwrap();
    inner.pop();
    let dy = inner
        .gradient(&[y], &[Source::of_tensor(&x)], None)
        .unwrap()[0]
        .clone()
        .unwrap();
    outer.pop();
    let d2y = outer
        .gradient(std::slice::from_ref(&dy), &[Source::of_tensor(&x)], None)
        .unwrap()[0]
        .clone()
        .unwrap();
    assert_eq!(dy.value().device(), GPU);
    assert_eq!(d2y.value().device(), GPU);
    assert_eq!(dy.value().to_vec::<f32>(), vec![12.0, 3.0]); // 3x²
    assert_eq!(d2y.value().to_vec::<f32>(), vec![12.0, -6.0]); // 6x
}

/// The elements' bit patterns (float32 or int32), for exact comparisons.
fn bits(a: &Array) -> Vec<u32> {
    match a.dtype() {
        ferrotape_core::DType::F32 => a.to_vec::<f32>().iter().map(|x| x.to_bits()).collect(),
        _ => a.to_vec::<i32>().iter().map(|&x| x as u32).collect(),
    }
}

fn indices(values: &[i32], shape: &[usize]) -> Array {
    Array::from_vec(values.to_vec(), shape).unwrap()
}

#[test]
fn gathers_and_pads_copy_the_cpu_bits() {
    if !gpu() {
        return;
    }
    let x = values(&[4, 5, 3], -2.0, 2.0, 31);
    let ints = Array::from_vec(
        (0..60).map(|i| i * 7 - 100).collect::<Vec<i32>>(),
        &[4, 5, 3],
    )
    .unwrap();
    let index = [Some(4), None, Some(0), Some(4), Some(2)];
    for a in [&x, &ints] {
        let views = [a.clone(), a.transpose(&[1, 0, 2]).unwrap()];
        for view in &views {
            for axis in 0..3 {
                let picks: Vec<Option<usize>> = index
                    .iter()
                    .filter(|i| i.is_none_or(|i| i < view.shape()[axis]))
                    .copied()
                    .collect();
                let want = kernels::take("Take", view, axis, &picks, -3.0).unwrap();
                let got = kernels::take("Take", &on_gpu(view), axis, &picks, -3.0).unwrap();
                assert_eq!(got.device(), GPU, "take axis {axis}");
                assert_eq!(got.shape(), want.shape());
                assert_eq!(bits(&got), bits(&want), "take axis {axis}");
            }
        }
        let nd = indices(&[3, 1, 0, 4, 3, 1], &[3, 2]);
        let want = kernels::gather_nd(a, &nd).unwrap();
        let got = kernels::gather_nd(&on_gpu(a), &nd).unwrap();
        assert_eq!(got.device(), GPU);
        assert_eq!(bits(&got), bits(&want), "gather_nd");
    }
    // Nothing picked, and an empty input padded with the fill only.
    let none = kernels::take("Take", &on_gpu(&x), 1, &[], 0.0).unwrap();
    assert_eq!(none.shape(), &[4, 0, 3]);
    let empty = values(&[0, 2], 0.0, 1.0, 1);
    let padded = kernels::take("Pad", &on_gpu(&empty), 0, &[None, None], 5.0).unwrap();
    assert_eq!(padded.to_vec::<f32>(), vec![5.0; 4]);
}

#[test]
fn scatters_add_in_the_cpu_order_bit_for_bit() {
    if !gpu() {
        return;
    }
    // Duplicates sum; a missing index drops its run; values of mixed magnitude make the order
    // of the additions visible in the last bits.
    let g = values(&[3, 6, 4], -1e3, 1e3, 41);
    let index = [Some(2), Some(0), Some(2), None, Some(2), Some(1)];
    for axis in [0, 1, 2] {
        let picks = &index[..g.shape()[axis].min(index.len())];
        let d = 3;
        let want = kernels::take_add(&g, axis, picks, d).unwrap();
        let got = kernels::take_add(&on_gpu(&g), axis, picks, d).unwrap();
        assert_eq!(got.device(), GPU);
        assert_eq!(got.shape(), want.shape());
        assert_eq!(
            got.to_vec::<f32>(),
            want.to_vec::<f32>(),
            "take_add axis {axis}"
        );
    }
    let nd = indices(&[1, 0, 1, 1, 0, 0, 1, 1], &[4, 2]);
    let updates = values(&[4, 5], -1e3, 1e3, 43);
    let want = kernels::scatter_nd(&nd, &updates, &[2, 2, 5]).unwrap();
    let got = kernels::scatter_nd(&nd, &on_gpu(&updates), &[2, 2, 5]).unwrap();
    assert_eq!(got.device(), GPU);
    assert_eq!(got.to_vec::<f32>(), want.to_vec::<f32>(), "scatter_nd");
    let ints = Array::from_vec(vec![1i32, 2, 3, 4], &[4]).unwrap();
    let rows = indices(&[2, 0, 2, 2], &[4, 1]);
    let summed = kernels::scatter_nd(&rows, &on_gpu(&ints), &[3]).unwrap();
    assert_eq!(summed.device(), GPU);
    assert_eq!(summed.to_vec::<i32>(), vec![2, 0, 8]);
    // Nothing to add: zeros on the device.
    let zero = kernels::take_add(&on_gpu(&values(&[0, 3], 0.0, 1.0, 2)), 0, &[], 4).unwrap();
    assert_eq!((zero.device(), zero.to_vec::<f32>()), (GPU, vec![0.0; 12]));
}

#[test]
fn a_gather_and_its_gradient_stay_on_the_device() {
    if !gpu() {
        return;
    }
    let run = |device: Device| {
        let params = Tensor::new(values(&[5, 3], -1.0, 1.0, 51).to_device(device).unwrap());
        let picks = Tensor::new(indices(&[4, 0, 4, 2], &[4]));
        let tape = Tape::new(false, true);
        tape.push();
        tape.watch_tensor(&params);
        let rows = ops::gather(&params, &picks, 0).unwrap();
        let loss = ops::reduce_sum(&ops::mul(&rows, &rows).unwrap(), None, false).unwrap();
        tape.pop();
        let g = tape
            .gradient(&[loss], &[Source::of_tensor(&params)], None)
            .unwrap();
        g.into_iter().next().unwrap().unwrap()
    };
    let (on_device, on_cpu) = (run(GPU), run(Device::Cpu));
    assert_close(on_device.value(), on_cpu.value(), "gather gradient");
}

#[test]
fn float16_computes_in_float32_and_rounds_once_as_on_the_cpu() {
    if !gpu() {
        return;
    }
    let half = |a: &Array| kernels::cast(a, ferrotape_core::DType::F16).unwrap();
    let x = half(&values(&[7, 5], -3.0, 3.0, 61));
    let y = half(&values(&[5], 0.5, 2.0, 62));
    let m = half(&values(&[5, 3], -1.0, 1.0, 63));
    let results = |x: &Array, y: &Array, m: &Array| {
        vec![
            kernels::unary(UnaryOp::Exp, x).unwrap(),
            kernels::unary(UnaryOp::Tanh, &x.transpose(&[1, 0]).unwrap()).unwrap(),
            kernels::binary(BinaryOp::Div, x, y).unwrap(),
            kernels::matmul(x, m, false, false).unwrap(),
            kernels::reduce(ReduceOp::Sum, x, &[true, false], false).unwrap(),
            x.transpose(&[1, 0]).unwrap().contiguous(),
        ]
    };
    let want = results(&x, &y, &m);
    let got = results(&on_gpu(&x), &on_gpu(&y), &on_gpu(&m));
    let float16 = ferrotape_wgpu::init()[0].float16;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        // Without float16 support every one of them runs on the CPU (soft placement).
        let expected = if float16 { GPU } else { Device::Cpu };
        assert_eq!(g.device(), expected, "result {i}");
        assert_eq!(g.dtype(), ferrotape_core::DType::F16);
        let as32 = |a: &Array| kernels::cast(a, ferrotape_core::DType::F32).unwrap();
        let (g, w) = (as32(g).to_vec::<f32>(), as32(w).to_vec::<f32>());
        for (j, (a, b)) in g.iter().zip(&w).enumerate() {
            // One float16 rounding of nearly the same float32 value: at most one step apart.
            assert!(
                (a - b).abs() <= b.abs() * 1e-3 + 1e-6,
                "result {i}[{j}]: {a} vs {b}"
            );
        }
    }
    eprintln!("float16 on the device: {float16}");
}
