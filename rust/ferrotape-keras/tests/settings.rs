//! Native layers read their settings on every call: a change between two calls of the same
//! layer takes effect at once (Keras reads `self.rate` etc. in `call`).

use ferrotape_autodiff::core::Array;
use ferrotape_autodiff::{Error, Tensor, Variable};
use ferrotape_keras::{Activation, NativeLayer, Setting, Weights};

fn variable(values: Vec<f32>, shape: &[usize]) -> Variable {
    Variable::new(Array::from_vec(values, shape).unwrap(), true, "v")
}

fn tensor(values: Vec<f32>, shape: &[usize]) -> Tensor {
    Tensor::new(Array::from_vec(values, shape).unwrap())
}

fn values(t: &Tensor) -> Vec<f32> {
    t.value().to_vec::<f32>()
}

fn text(s: &str) -> Setting {
    Setting::Text(s.to_owned())
}

#[test]
fn dense_applies_the_activation_of_each_call() {
    let weights = Weights::new()
        .with("kernel", Some(variable(vec![1.0, -1.0], &[1, 2])))
        .with("bias", None);
    let dense = NativeLayer::new("Dense", weights, 0).unwrap();
    let x = tensor(vec![2.0], &[1, 1]);
    let relu = dense.settings().with("activation", text("relu"));
    assert_eq!(values(&dense.call(&x, false, &relu).unwrap()), [2.0, 0.0]);
    let linear = dense.settings().with("activation", Setting::None);
    assert_eq!(
        values(&dense.call(&x, false, &linear).unwrap()),
        [2.0, -2.0]
    );
}

#[test]
fn dropout_reads_its_rate_on_each_call() {
    let dropout = NativeLayer::new("Dropout", Weights::new(), 7).unwrap();
    let x = tensor(vec![1.0; 1000], &[1000]);
    let with_rate = |rate| {
        dropout
            .settings()
            .with("rate", Setting::Number(rate))
            .with("noise_shape", Setting::None)
    };
    assert_eq!(
        values(&dropout.call(&x, true, &with_rate(0.0)).unwrap()),
        [1.0; 1000]
    );
    let dropped = values(&dropout.call(&x, true, &with_rate(0.5)).unwrap());
    let zeros = dropped.iter().filter(|&&v| v == 0.0).count();
    assert!(
        (350..650).contains(&zeros),
        "{zeros} of 1000 dropped at rate 0.5"
    );
    assert!(dropped.iter().all(|&v| v == 0.0 || v == 2.0));
    let refused = dropout.call(&x, true, &with_rate(1.5)).unwrap_err();
    assert!(matches!(
        refused,
        Error::InvalidArgument { op: "Dropout", .. }
    ));
}

#[test]
fn batch_normalization_updates_with_the_momentum_of_each_call() {
    let moving_mean = variable(vec![0.0], &[1]);
    let weights = Weights::new()
        .with("gamma", None)
        .with("beta", None)
        .with("moving_mean", Some(moving_mean.clone()))
        .with("moving_variance", Some(variable(vec![1.0], &[1])));
    let bn = NativeLayer::new("BatchNormalization", weights, 0).unwrap();
    let batch = tensor(vec![1.0, 3.0], &[2, 1]); // batch mean 2
    let with_momentum = |momentum| {
        bn.settings()
            .with("axis", Setting::Number(-1.0))
            .with("momentum", Setting::Number(momentum))
            .with("epsilon", Setting::Number(1e-3))
    };
    bn.call(&batch, true, &with_momentum(1.0)).unwrap();
    assert_eq!(moving_mean.snapshot().to_vec::<f32>(), [0.0]);
    bn.call(&batch, true, &with_momentum(0.5)).unwrap();
    assert_eq!(moving_mean.snapshot().to_vec::<f32>(), [1.0]);
    bn.call(&batch, true, &with_momentum(0.0)).unwrap();
    assert_eq!(moving_mean.snapshot().to_vec::<f32>(), [2.0]);
}

#[test]
fn a_setting_of_the_wrong_kind_or_missing_is_a_usage_error() {
    let dense = NativeLayer::new(
        "Dense",
        Weights::new().with("kernel", Some(variable(vec![1.0], &[1, 1]))),
        0,
    )
    .unwrap();
    let x = tensor(vec![1.0], &[1, 1]);
    let missing = dense.call(&x, false, &dense.settings()).unwrap_err();
    assert!(matches!(missing, Error::Usage { op: "Dense", .. }));
    let unknown = dense
        .settings()
        .with("activation", text("no_such_activation"));
    let err = dense.call(&x, false, &unknown).unwrap_err();
    assert!(err.to_string().contains("unknown activation"), "{err}");
    let wrong = dense.settings().with("activation", Setting::Number(1.0));
    assert!(matches!(
        dense.call(&x, false, &wrong).unwrap_err(),
        Error::Usage { .. }
    ));
}

#[test]
fn weights_are_checked_when_the_native_layer_is_made() {
    let err = NativeLayer::new("Dense", Weights::new(), 0).err().unwrap();
    assert!(err.to_string().contains("`kernel`"), "{err}");
    let misspelt = Weights::new()
        .with("kernel", Some(variable(vec![1.0], &[1, 1])))
        .with("biass", None);
    let err = NativeLayer::new("Dense", misspelt, 0).err().unwrap();
    assert!(err.to_string().contains("unknown weight `biass`"), "{err}");
    let err = NativeLayer::new("Nope", Weights::new(), 0).err().unwrap();
    assert!(err.to_string().contains("known: Activation"), "{err}");
}

#[test]
fn every_activation_name_parses_and_silu_is_swish() {
    for &(name, activation) in Activation::TABLE {
        assert_eq!(Activation::parse("test", name).unwrap(), activation);
    }
    assert_eq!(
        Activation::parse("test", "silu").unwrap(),
        Activation::Swish
    );
}

#[test]
fn dense_takes_one_sample_of_rank_1_and_leading_batch_axes() {
    let weights = Weights::new().with("kernel", Some(variable(vec![1.0, 2.0], &[1, 2])));
    let dense = NativeLayer::new("Dense", weights, 0).unwrap();
    let linear = dense.settings().with("activation", Setting::None);
    let one = dense
        .call(&tensor(vec![3.0], &[1]), false, &linear)
        .unwrap();
    assert_eq!(
        (one.shape().to_vec(), values(&one)),
        (vec![2], vec![3.0, 6.0])
    );
    let batch = dense
        .call(&tensor(vec![1.0, 2.0], &[2, 1, 1]), false, &linear)
        .unwrap();
    assert_eq!(batch.shape(), [2, 1, 2]);
    let wrong = dense
        .call(&tensor(vec![1.0, 2.0], &[2]), false, &linear)
        .unwrap_err();
    assert!(wrong.to_string().contains("1 features"), "{wrong}");
}
