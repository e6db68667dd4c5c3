//! The training step's kernels beyond the element-wise ones, each against the CPU kernel on
//! awkward shapes: reductions, relu's gradient, comparisons, `select`, casts, batch norm and
//! the optimizer rules; then the gradients (first and second order) of a batch-norm + relu net
//! through device tensors. Skipped without an adapter, as in `kernels.rs`.

use ferrotape_autodiff::ops;
use ferrotape_autodiff::{Source, Tape, Tensor};
use ferrotape_core::kernels::{self, CompareOp, OptimizerStep, ReduceOp};
use ferrotape_core::{Array, DType, Device};

mod common;

use common::{assert_close, gpu, on_gpu, values, GPU};

/// `got` lives on the device and equals `want` exactly (bool and int32 results).
fn assert_same(got: &Array, want: &Array, what: &str) {
    assert_eq!(got.device(), GPU, "{what}: result left the device");
    assert_eq!(
        (got.dtype(), got.shape()),
        (want.dtype(), want.shape()),
        "{what}"
    );
    assert_eq!(
        format!("{:?}", got.to_device(Device::Cpu).unwrap().buffer()),
        format!("{:?}", want.contiguous().buffer()),
        "{what}"
    );
}

#[test]
fn reductions_along_any_axes_match_the_cpu() {
    if !gpu() {
        return;
    }
    use ReduceOp::*;
    let a = values(&[5, 7, 3], 0.8, 1.2, 20);
    for op in [Sum, Prod, Max, Min] {
        for bits in 0..8u32 {
            let mask: Vec<bool> = (0..3).map(|i| bits & (1 << i) != 0).collect();
            for keepdims in [false, true] {
                let got = kernels::reduce(op, &on_gpu(&a), &mask, keepdims).unwrap();
                let want = kernels::reduce(op, &a, &mask, keepdims).unwrap();
                assert_close(&got, &want, &format!("{op:?} {mask:?} {keepdims}"));
            }
        }
        // Empty reductions give the identity; an empty output; one element; a long row; a
        // transposed view.
        for (shape, mask) in [
            (&[0usize, 4][..], &[true, false][..]),
            (&[4, 0], &[true, false]),
            (&[1], &[true]),
            (&[], &[]),
            (&[2, 1000], &[false, true]),
        ] {
            let a = values(shape, 0.999, 1.001, 21);
            let got = kernels::reduce(op, &on_gpu(&a), mask, false).unwrap();
            let want = kernels::reduce(op, &a, mask, false).unwrap();
            assert_close(&got, &want, &format!("{op:?} {shape:?} {mask:?}"));
        }
        let t = values(&[6, 9], -1.0, 1.0, 22);
        let got = kernels::reduce(
            op,
            &on_gpu(&t).transpose(&[1, 0]).unwrap(),
            &[false, true],
            true,
        );
        let want = kernels::reduce(op, &t.transpose(&[1, 0]).unwrap(), &[false, true], true);
        assert_close(&got.unwrap(), &want.unwrap(), &format!("{op:?} transposed"));
    }
    // NaN anywhere in a maximum or minimum wins, first, last or in the middle of a row.
    let nan = f32::NAN;
    let rows = Array::from_vec(
        vec![nan, 1.0, 2.0, 1.0, nan, 2.0, 1.0, 2.0, nan, 1.0, 2.0, 3.0],
        &[4, 3],
    )
    .unwrap();
    for op in [Max, Min, Sum] {
        let got = kernels::reduce(op, &on_gpu(&rows), &[false, true], false).unwrap();
        let want = kernels::reduce(op, &rows, &[false, true], false).unwrap();
        assert_close(&got, &want, &format!("{op:?} with NaN"));
    }
}

#[test]
fn relu_grad_broadcasts_and_treats_nan_as_not_positive() {
    if !gpu() {
        return;
    }
    let g = values(&[3, 1, 5], -2.0, 2.0, 23);
    // y transposed (a strided view), with NaN, zeros of both signs and negatives.
    let y = Array::from_vec(
        vec![1.0f32, -1.0, 0.0, f32::NAN, 2.0, -0.0, 3.0, -3.0],
        &[4, 2],
    )
    .unwrap()
    .transpose(&[1, 0])
    .unwrap();
    let g2 = values(&[2, 4], -2.0, 2.0, 24);
    for (g, y) in [(&g2, &y), (&g, &values(&[1, 4, 5], -1.0, 1.0, 25))] {
        let got = kernels::relu_grad(&on_gpu(g), &on_gpu(y)).unwrap();
        let want = kernels::relu_grad(g, y).unwrap();
        assert_close(
            &got,
            &want,
            &format!("relu_grad {:?} {:?}", g.shape(), y.shape()),
        );
    }
    let empty = values(&[0, 3], -1.0, 1.0, 26);
    let got = kernels::relu_grad(&on_gpu(&empty), &on_gpu(&empty)).unwrap();
    assert_close(&got, &empty, "relu_grad empty");
}

/// Operands of each dtype the kernels cover, with NaN, ties and signed zeros among the floats.
fn operands(dtype: DType) -> (Array, Array) {
    let f =
        |v: Vec<f32>, shape: &[usize]| kernels::cast(&Array::from_vec(v, shape).unwrap(), dtype);
    let a = vec![1.0, -2.0, f32::NAN, 0.0, 3.0, -0.0, 2.0, 1.0, 5.0];
    let b = vec![1.0, f32::NAN, -0.0];
    (f(a, &[3, 3]).unwrap(), f(b, &[3, 1]).unwrap())
}

#[test]
fn comparisons_broadcast_for_every_dtype() {
    if !gpu() {
        return;
    }
    use CompareOp::*;
    for dtype in [DType::F32, DType::I32, DType::Bool] {
        let (a, b) = operands(dtype);
        for op in [Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual] {
            for (x, y) in [(&a, &b), (&b, &a), (&a, &a.transpose(&[1, 0]).unwrap())] {
                let got = kernels::compare(op, &on_gpu(x), &on_gpu(y)).unwrap();
                let want = kernels::compare(op, x, y).unwrap();
                assert_same(
                    &got,
                    &want,
                    &format!("{op:?} {dtype} {:?} {:?}", x.shape(), y.shape()),
                );
            }
            // A scalar operand, an empty one, and a bool output of odd length (not whole words).
            let s = kernels::cast(&Array::scalar(1.0f32), dtype).unwrap();
            let odd = kernels::cast(&values(&[7], -2.0, 2.0, 27), dtype).unwrap();
            let empty = kernels::cast(&values(&[2, 0], -2.0, 2.0, 28), dtype).unwrap();
            for (x, y) in [(&odd, &s), (&s, &s), (&empty, &s)] {
                let got = kernels::compare(op, &on_gpu(x), &on_gpu(y)).unwrap();
                assert_same(
                    &got,
                    &kernels::compare(op, x, y).unwrap(),
                    &format!("{op:?} {dtype}"),
                );
            }
        }
    }
}

#[test]
fn select_broadcasts_its_condition_and_branches() {
    if !gpu() {
        return;
    }
    let cond = kernels::compare(
        CompareOp::Greater,
        &values(&[5, 1], -1.0, 1.0, 29),
        &Array::scalar(0.0f32),
    )
    .unwrap();
    for dtype in [DType::F32, DType::I32, DType::Bool] {
        let x = kernels::cast(&values(&[5, 3], -3.0, 3.0, 30), dtype).unwrap();
        let y = kernels::cast(&values(&[3], -3.0, 3.0, 31), dtype).unwrap();
        let zero = kernels::cast(&Array::scalar(0.0f32), dtype).unwrap();
        let xt = kernels::cast(&values(&[3, 5], -3.0, 3.0, 32), dtype)
            .unwrap()
            .transpose(&[1, 0])
            .unwrap();
        for (c, a, b) in [(&cond, &x, &y), (&cond, &zero, &x), (&cond, &xt, &zero)] {
            let got = kernels::select(&on_gpu(c), &on_gpu(a), &on_gpu(b)).unwrap();
            assert_same(
                &got,
                &kernels::select(c, a, b).unwrap(),
                &format!("select {dtype}"),
            );
        }
        // A transposed (non-contiguous) bool view becomes contiguous on the device.
        let view = on_gpu(&cond.reshape(&[1, 5]).unwrap())
            .transpose(&[1, 0])
            .unwrap();
        let copy = view.contiguous();
        assert_same(&copy, &cond.reshape(&[5, 1]).unwrap(), "bool copy");
    }
}

#[test]
fn casts_between_float32_int32_and_bool_follow_the_cpu() {
    if !gpu() {
        return;
    }
    let floats = Array::from_vec(
        vec![
            1.7f32,
            -1.7,
            0.0,
            -0.0,
            f32::NAN,
            3e9,
            -3e9,
            2147483520.0,
            0.5,
            -2.5,
            f32::INFINITY,
        ],
        &[11],
    )
    .unwrap();
    let ints = Array::from_vec(vec![0i32, 1, -1, 7, i32::MAX, i32::MIN, 16_777_216], &[7]).unwrap();
    let bools = Array::from_vec(vec![true, false, false, true, true], &[5]).unwrap();
    for a in [&floats, &ints, &bools] {
        for to in [DType::F32, DType::I32, DType::Bool] {
            if to == a.dtype() {
                continue;
            }
            let got = kernels::cast(&on_gpu(a), to).unwrap();
            assert_same(
                &got,
                &kernels::cast(a, to).unwrap(),
                &format!("{} to {to}", a.dtype()),
            );
            // A reversed view too.
            let n = a.len();
            let rev = |x: &Array| x.slice_view(&[n - 1], &[n], &[-1]);
            let got = kernels::cast(&rev(&on_gpu(a)), to).unwrap();
            assert_same(
                &got,
                &kernels::cast(&rev(a), to).unwrap(),
                &format!("{} to {to} reversed", a.dtype()),
            );
        }
    }
    // Casts the GPU lacks (to float64) still work, on the CPU.
    let d = kernels::cast(&on_gpu(&floats), DType::F64).unwrap();
    assert_eq!(d.device(), Device::Cpu);
}

/// Batch-norm inputs: shape, feature axis, and whether to read a transposed view.
const NORM_CASES: [(&[usize], usize, bool); 8] = [
    (&[7, 3], 1, false),
    (&[2, 5, 3, 4], 1, false),
    (&[4, 3, 3, 5], 3, false),
    (&[1, 1], 0, false),
    (&[0, 3], 1, false),
    (&[9, 130], 1, false),
    (&[3, 130], 0, false),
    (&[6, 4], 0, true),
];

fn norm_input(shape: &[usize], transposed: bool, seed: u32) -> Array {
    let x = values(shape, -2.0, 3.0, seed);
    if transposed {
        values(&[shape[1], shape[0]], -2.0, 3.0, seed)
            .transpose(&[1, 0])
            .unwrap()
    } else {
        x
    }
}

#[test]
fn batch_norm_kernels_match_the_cpu() {
    if !gpu() {
        return;
    }
    for (shape, axis, transposed) in NORM_CASES {
        let what = format!("{shape:?} axis {axis}");
        let x = norm_input(shape, transposed, 33);
        let gx = on_gpu(&x.contiguous());
        let gx = if transposed {
            on_gpu(&values(&[shape[1], shape[0]], -2.0, 3.0, 33))
                .transpose(&[1, 0])
                .unwrap()
        } else {
            gx
        };
        let (mean, var) = kernels::batch_norm_statistics(&x, axis).unwrap();
        let (gmean, gvar) = kernels::batch_norm_statistics(&gx, axis).unwrap();
        for (g, c) in gmean.iter().chain(&gvar).zip(mean.iter().chain(&var)) {
            assert!(
                (g - c).abs() <= 1e-5 * (1.0 + c.abs()),
                "{what}: statistics {g} vs {c}"
            );
        }
        let features = shape[axis];
        let scale: Vec<f64> = (0..features).map(|c| 0.5 + c as f64 * 0.25).collect();
        let shift: Vec<f64> = (0..features).map(|c| c as f64 - 1.0).collect();
        let got = kernels::batch_norm_apply(&gx, axis, &scale, &shift).unwrap();
        assert_close(
            &got,
            &kernels::batch_norm_apply(&x, axis, &scale, &shift).unwrap(),
            &what,
        );
        let dy = values(shape, -1.0, 1.0, 34);
        let inv: Vec<f64> = var.iter().map(|v| 1.0 / (v + 1e-3).sqrt()).collect();
        let gamma: Vec<f64> = (0..features).map(|c| 1.5 - c as f64 * 0.5).collect();
        let want = kernels::batch_norm_backward(&x, &dy, axis, &mean, &inv, &gamma).unwrap();
        let got =
            kernels::batch_norm_backward(&gx, &on_gpu(&dy), axis, &mean, &inv, &gamma).unwrap();
        assert_close(&got.dx, &want.dx, &format!("{what} dx"));
        assert_close(&got.dgamma, &want.dgamma, &format!("{what} dgamma"));
        assert_close(&got.dbeta, &want.dbeta, &format!("{what} dbeta"));
    }
}

/// Every rule with every option, as `OptimizerStep::new` builds them at `step`.
fn rules(step: u64) -> Vec<OptimizerStep> {
    let with = |rule: &str, pairs: &[(&str, f64)]| {
        let pairs: Vec<(String, f64)> = pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        OptimizerStep::new(rule, 0.05, step, |name| {
            pairs.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
        })
        .unwrap()
    };
    let mut out = Vec::new();
    for (momentum, nesterov) in [(0.0, 0.0), (0.9, 0.0), (0.9, 1.0)] {
        out.push(with(
            "sgd",
            &[("momentum", momentum), ("nesterov", nesterov)],
        ));
    }
    for amsgrad in [0.0, 1.0] {
        let hyper = [
            ("beta_1", 0.9),
            ("beta_2", 0.999),
            ("epsilon", 1e-7),
            ("amsgrad", amsgrad),
        ];
        out.push(with("adam", &hyper));
    }
    for momentum in [0.0, 0.5] {
        for centered in [0.0, 1.0] {
            let hyper = [
                ("rho", 0.9),
                ("momentum", momentum),
                ("epsilon", 1e-7),
                ("centered", centered),
            ];
            out.push(with("rmsprop", &hyper));
        }
    }
    out.push(with("adagrad", &[("epsilon", 1e-7)]));
    out
}

#[test]
fn optimizer_rules_match_the_cpu_over_steps_and_stay_on_the_device() {
    if !gpu() {
        return;
    }
    for (index, rule) in rules(1).into_iter().enumerate() {
        for shape in [&[3usize, 5][..], &[1], &[0, 2], &[70]] {
            let what = format!("{rule:?} {shape:?}");
            let mut cpu = values(shape, -1.0, 1.0, 40);
            let mut dev = on_gpu(&cpu);
            let zeros = || Array::zeros("test", DType::F32, shape).unwrap();
            let mut cpu_slots: Vec<Array> = (0..rule.slot_count()).map(|_| zeros()).collect();
            let mut dev_slots: Vec<Array> = cpu_slots.iter().map(on_gpu).collect();
            for step in 1..=3u64 {
                let rule = rules(step)[index];
                let grad = values(shape, -1.0, 1.0, 41 + step as u32);
                let mut refs: Vec<&mut Array> = cpu_slots.iter_mut().collect();
                kernels::apply_optimizer_step(&rule, &mut cpu, &mut refs, &grad).unwrap();
                // The gradient may be a strided view on the device.
                let dgrad = if shape.len() == 2 {
                    let t = on_gpu(&grad.transpose(&[1, 0]).unwrap().contiguous());
                    t.transpose(&[1, 0]).unwrap()
                } else {
                    on_gpu(&grad)
                };
                let mut refs: Vec<&mut Array> = dev_slots.iter_mut().collect();
                kernels::apply_optimizer_step(&rule, &mut dev, &mut refs, &dgrad).unwrap();
                assert_close(&dev, &cpu, &format!("{what} step {step}"));
                for (d, c) in dev_slots.iter().zip(&cpu_slots) {
                    assert_close(d, c, &format!("{what} step {step} slot"));
                }
            }
        }
    }
    // A variable on the CPU is updated there, even with device gradients.
    let rule = rules(1)[0];
    let mut host = values(&[4], -1.0, 1.0, 45);
    kernels::apply_optimizer_step(
        &rule,
        &mut host,
        &mut [],
        &on_gpu(&values(&[4], 0.0, 1.0, 46)),
    )
    .unwrap();
    assert_eq!(host.device(), Device::Cpu);
}

/// The gradients of Σ relu(bn(x @ w))² · c with batch statistics (first order), and of the
/// squared norm of those first-order gradients with respect to `x` (second order, through the
/// composed backward pass), on `device`'s tensors.
fn bn_relu_gradients(device: Device) -> Vec<Vec<f32>> {
    let put = |a: Array| Tensor::new(a.to_device(device).unwrap());
    let x = put(values(&[6, 4], -1.0, 1.0, 50));
    let w = put(values(&[4, 3], -1.0, 1.0, 51));
    let gamma = put(values(&[3], 0.5, 1.5, 52));
    let beta = put(values(&[3], -0.5, 0.5, 53));
    let c = put(values(&[6, 3], -1.0, 1.0, 54));
    let sources = [&x, &w, &gamma, &beta].map(Source::of_tensor);
    let outer = Tape::new(false, true);
    outer.push();
    for t in [&x, &w, &gamma, &beta] {
        outer.watch_tensor(t);
    }
    let inner = Tape::new(false, true);
    inner.push();
    for t in [&x, &w, &gamma, &beta] {
        inner.watch_tensor(t);
    }
    let h = ops::matmul(&x, &w, false, false).unwrap();
    let (y, _, _) = ops::fused_batch_norm(&h, Some(&gamma), Some(&beta), 1, 1e-3).unwrap();
    let r = ops::relu(&y).unwrap();
    let loss = ops::reduce_sum(
        &ops::mul(&ops::mul(&r, &r).unwrap(), &c).unwrap(),
        None,
        false,
    )
    .unwrap();
    inner.pop();
    let first: Vec<Tensor> = inner
        .gradient(&[loss], &sources, None)
        .unwrap()
        .into_iter()
        .map(|g| g.unwrap())
        .collect();
    let squares: Vec<Tensor> = first
        .iter()
        .map(|g| ops::reduce_sum(&ops::mul(g, g).unwrap(), None, false).unwrap())
        .collect();
    let total = squares[1..]
        .iter()
        .fold(squares[0].clone(), |acc, s| ops::add(&acc, s).unwrap());
    outer.pop();
    let second = outer.gradient(&[total], &sources[..1], None).unwrap();
    let mut out = Vec::new();
    for g in first
        .iter()
        .chain(second.iter().map(|g| g.as_ref().unwrap()))
    {
        assert_eq!(g.value().device(), device, "gradient left its device");
        out.push(g.value().to_vec::<f32>());
    }
    out
}

#[test]
fn batch_norm_relu_gradients_on_the_device_equal_the_cpu_ones() {
    if !gpu() {
        return;
    }
    let (on_device, on_cpu) = (bn_relu_gradients(GPU), bn_relu_gradients(Device::Cpu));
    for (i, (g, c)) in on_device.iter().zip(&on_cpu).enumerate() {
        for (x, y) in g.iter().zip(c) {
            assert!(
                (x - y).abs() <= 1e-3 * (1.0 + y.abs()),
                "gradient {i}: {x} vs {y}"
            );
        }
    }
}
