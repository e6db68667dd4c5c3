//! The argument rules of ops whose arguments arrive from Python as plain values (split's
//! `num_or_size_splits`, pad's `paddings`, ...): each refusal is a typed error naming the op,
//! so the binding maps it to TensorFlow's `InvalidArgumentError` like any other op error.

use ferrotape_autodiff::ops;
use ferrotape_autodiff::{Array, DType, Error, Tensor};

fn floats(v: Vec<f32>, shape: &[usize]) -> Tensor {
    Tensor::new(Array::from_vec(v, shape).unwrap())
}

fn ints(v: Vec<i32>, shape: &[usize]) -> Tensor {
    Tensor::new(Array::from_vec(v, shape).unwrap())
}

/// Asserts an `InvalidArgument` (or `DType`) error of `op` whose message holds `part`.
fn refused<T: std::fmt::Debug>(r: Result<T, Error>, op: &str, part: &str) {
    let err = r.expect_err("the op should refuse its argument");
    assert!(
        matches!(err, Error::InvalidArgument { .. } | Error::DType { .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("{op}: ")) && msg.contains(part),
        "{msg}"
    );
}

fn shapes(parts: &[Tensor]) -> Vec<Vec<usize>> {
    parts.iter().map(|t| t.shape().to_vec()).collect()
}

#[test]
fn split_num_divides_the_axis_or_says_why_not() {
    let x = floats(vec![0.0; 12], &[4, 3]);
    assert_eq!(shapes(&ops::split_num(&x, 2, 0).unwrap()), [[2, 3], [2, 3]]);
    assert_eq!(shapes(&ops::split_num(&x, 3, -1).unwrap()).len(), 3);
    refused(
        ops::split_num(&x, 3, 0),
        "Split",
        "not divisible by num_split=3",
    );
    refused(
        ops::split_num(&x, 0, 0),
        "Split",
        "num_split must be in [1, ",
    );
    refused(ops::split_num(&x, -2, 0), "Split", "received -2");
    refused(ops::split_num(&x, 2, 2), "Split", "axis 2 is out of range");
    // An empty axis splits into empty parts, but not into billions of them.
    let empty = floats(vec![], &[0]);
    assert_eq!(
        shapes(&ops::split_num(&empty, 3, 0).unwrap()),
        [[0], [0], [0]]
    );
    refused(
        ops::split_num(&empty, 1 << 20, 0),
        "Split",
        "num_split must be in",
    );
}

#[test]
fn split_v_takes_sizes_with_one_inferred() {
    let x = floats(vec![0.0; 6], &[6]);
    assert_eq!(
        shapes(&ops::split_v(&x, &[1, -1, 2], 0).unwrap()),
        [[1], [3], [2]]
    );
    assert_eq!(shapes(&ops::split_v(&x, &[6, 0], 0).unwrap()), [[6], [0]]);
    refused(ops::split_v(&x, &[3, 4], 0), "SplitV", "fit in dimension 6");
    refused(ops::split_v(&x, &[-1, -1], 0), "SplitV", "at most one -1");
    refused(ops::split_v(&x, &[-2, 8], 0), "SplitV", "received [-2, 8]");
    refused(
        ops::split_v(&x, &[1, 2], 0),
        "Split",
        "do not sum to dimension 6",
    );
    refused(
        ops::split_v(&x, &[i64::MAX, i64::MAX], 0),
        "SplitV",
        "size_splits",
    );
}

#[test]
fn unstack_checks_num_against_the_axis() {
    let x = floats(vec![0.0; 6], &[2, 3]);
    assert_eq!(ops::unstack(&x, Some(3), 1).unwrap().len(), 3);
    assert_eq!(ops::unstack(&x, None, 0).unwrap().len(), 2);
    refused(
        ops::unstack(&x, Some(3), 0),
        "Unpack",
        "num=3 must equal dimension 2",
    );
    refused(ops::unstack(&x, Some(-1), 0), "Unpack", "num=-1");
}

#[test]
fn pad_reads_paddings_of_shape_rank_by_two() {
    let x = floats(vec![1.0; 4], &[2, 2]);
    let p = ints(vec![1, 0, 0, 2], &[2, 2]);
    assert_eq!(ops::paddings(&x, &p).unwrap(), [(1, 0), (0, 2)]);
    refused(
        ops::paddings(&x, &ints(vec![1, 1], &[1, 2])),
        "Pad",
        "shape [2, 2]",
    );
    refused(
        ops::paddings(&x, &ints(vec![1, 1], &[2])),
        "Pad",
        "received shape [2]",
    );
    refused(
        ops::paddings(&x, &ints(vec![-1, 1, 0, 0], &[2, 2])),
        "Pad",
        "non-negative",
    );
    let halves = floats(vec![0.5, 0.0, 0.0, 0.0], &[2, 2]);
    refused(
        ops::paddings(&x, &halves),
        "Pad",
        "expected int32 or int64 paddings",
    );
}

#[test]
fn fill_one_hot_and_dims_refuse_what_tensorflow_refuses() {
    let scalar = floats(vec![2.5], &[]);
    let filled = ops::fill(&[2, 3], &scalar).unwrap();
    assert_eq!((filled.shape(), filled.dtype()), (&[2, 3][..], DType::F32));
    refused(
        ops::fill(&[2], &floats(vec![1.0, 2.0], &[2])),
        "Fill",
        "scalar",
    );
    let idx = ints(vec![0, 1], &[2]);
    refused(
        ops::one_hot(&idx, -1, 1.0, 0.0, -1, DType::F32),
        "OneHot",
        "depth must be >= 0",
    );
    assert_eq!(ops::dims("Tile", &[2, 0]).unwrap().as_slice(), &[2, 0]);
    refused(
        ops::dims("Tile", &[2, -1]),
        "Tile",
        "received -1 in [2, -1]",
    );
}

#[test]
fn add_n_adds_same_shaped_tensors_without_broadcasting() {
    let a = floats(vec![1.0, 2.0], &[2]);
    let b = floats(vec![10.0, 20.0], &[2]);
    let sum = ops::add_n(&[a.clone(), b.clone(), a.clone()]).unwrap();
    assert_eq!(sum.value().to_vec::<f32>(), vec![12.0, 24.0]);
    assert_eq!(
        ops::add_n(std::slice::from_ref(&a))
            .unwrap()
            .value()
            .to_vec::<f32>(),
        [1.0, 2.0]
    );
    refused(ops::add_n(&[]), "AddN", "at least one tensor");
    refused(
        ops::add_n(&[a.clone(), floats(vec![1.0; 4], &[2, 2])]),
        "AddN",
        "same shape",
    );
    refused(
        ops::add_n(&[a, ints(vec![1, 2], &[2])]),
        "AddN",
        "same dtype",
    );
}

#[test]
fn silu_scales_its_input_by_beta() {
    let x = floats(vec![-1.0, 0.0, 2.0], &[3]);
    let sigmoid = |v: f32| 1.0 / (1.0 + (-v).exp());
    let got = ops::silu(&x, 2.0).unwrap().value().to_vec::<f32>();
    let want: Vec<f32> = [-1.0f32, 0.0, 2.0]
        .iter()
        .map(|&v| v * sigmoid(2.0 * v))
        .collect();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-6, "{got:?} vs {want:?}");
    }
    let swish = ops::swish(&x).unwrap().value().to_vec::<f32>();
    assert_eq!(ops::silu(&x, 1.0).unwrap().value().to_vec::<f32>(), swish);
}

#[test]
fn batched_gathers_pick_per_batch_and_refuse_what_tensorflow_refuses() {
    let params = floats((0..24).map(|v| v as f32).collect(), &[2, 3, 4]);
    let index = ints(vec![0, 2, 1, 1], &[2, 2]);
    // Batch k takes rows of params[k]: [[0, 2], [1, 1]] along axis 1.
    let y = ops::gather_v2(&params, &index, None, 1).unwrap();
    assert_eq!(y.shape(), [2, 2, 4]);
    let got = y.value().to_vec::<f32>();
    assert_eq!(&got[..4], &[0.0, 1.0, 2.0, 3.0]);
    assert_eq!(&got[4..8], &[8.0, 9.0, 10.0, 11.0]);
    assert_eq!(&got[8..12], &[16.0, 17.0, 18.0, 19.0]);
    // Along the last axis, past an axis of params that is not a batch axis.
    let y = ops::gather_v2(&params, &index, Some(2), -1).unwrap();
    assert_eq!(y.shape(), [2, 3, 2]);
    assert_eq!(&y.value().to_vec::<f32>()[..4], &[0.0, 2.0, 4.0, 6.0]);
    refused(
        ops::gather_v2(&params, &index, None, 3),
        "GatherV2",
        "Expected batch_dims in the range [-2, 2], but got 3",
    );
    refused(
        ops::gather_v2(&params, &ints(vec![0, 3], &[2, 1]), None, 1),
        "GatherV2",
        "indices[1,0] = 3 is not in [0, 3)",
    );
    let y = ops::gather_nd_v2(&params, &index, 1).unwrap();
    assert_eq!(y.value().to_vec::<f32>(), [2.0, 17.0]);
    refused(
        ops::gather_nd_v2(&params, &index, -1),
        "GatherNd",
        "does not allow negative batch_dims",
    );
}
