//! What every native layer is: its weights, taken once when the Python layer is built, and a
//! call that reads the layer's settings afresh each time.
//!
//! Why settings are read per call: Keras's `call` reads `self.rate`, `self.momentum` or
//! `self.activation` when it runs, so a user who changes one after the first call sees the
//! change at once. A native layer that copied them when it was built would silently keep the
//! old values; so a native layer keeps only its weights (fixed once built, as in Keras) and
//! receives its settings with the inputs.
//!
//! One generic binding serves every layer: the Python layer names its Keras class and hands its
//! weights to [`NativeLayer::new`], then passes its current settings on each call. Adding a native
//! layer is a struct implementing [`Layer`] and one row in the table of [`NativeLayer::new`].

use std::collections::BTreeMap;

use ferrotape_autodiff::{Error, Result, Tensor, Variable};

use crate::{
    Activation, ActivationLayer, BatchNormalization, Conv2D, Dense, DepthwiseConv2D, Dropout,
    Embedding, LayerNormalization,
};

/// A layer's forward pass; the weights live in the implementing struct, the settings come in.
pub trait Layer: Send + Sync {
    /// Runs the layer on `inputs`. `training` is Keras's flag (dropout, batch statistics).
    fn call(&self, inputs: &Tensor, training: bool, settings: &Settings) -> Result<Tensor>;
}

/// One setting's value, as Python hands it over.
#[derive(Clone, Debug, PartialEq)]
pub enum Setting {
    None,
    Number(f64),
    Text(String),
    /// A tuple or list of ints, or of ints and `None` (`noise_shape`).
    Dims(Vec<Option<i64>>),
}

/// The settings of one call, by Keras's attribute names (`rate`, `momentum`, `activation`...).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    layer: &'static str,
    values: BTreeMap<String, Setting>,
}

impl Settings {
    /// Settings for a call of `layer` (Keras's class name, used in messages).
    pub fn new(layer: &'static str) -> Settings {
        Settings {
            layer,
            values: BTreeMap::new(),
        }
    }

    pub fn with(mut self, name: &str, value: Setting) -> Settings {
        self.insert(name, value);
        self
    }

    pub fn insert(&mut self, name: &str, value: Setting) {
        self.values.insert(name.to_owned(), value);
    }

    fn get(&self, name: &str) -> Result<&Setting> {
        self.values.get(name).ok_or_else(|| {
            Error::usage(
                self.layer,
                format!("{}: the call is missing the setting `{name}`", self.layer),
            )
        })
    }

    fn expected(&self, name: &str, what: &str, got: &Setting) -> Error {
        Error::usage(
            self.layer,
            format!("{}: `{name}` must be {what}, received {got:?}", self.layer),
        )
    }

    pub fn number(&self, name: &str) -> Result<f64> {
        match self.get(name)? {
            Setting::Number(x) => Ok(*x),
            other => Err(self.expected(name, "a number", other)),
        }
    }

    pub fn text(&self, name: &str) -> Result<&str> {
        match self.get(name)? {
            Setting::Text(s) => Ok(s),
            other => Err(self.expected(name, "a string", other)),
        }
    }

    /// A single int or a tuple of ints (Keras accepts both for an axis).
    pub fn ints(&self, name: &str) -> Result<Vec<i64>> {
        match self.get(name)? {
            Setting::Number(x) if x.fract() == 0.0 => Ok(vec![*x as i64]),
            Setting::Dims(dims) if dims.iter().all(Option::is_some) => {
                Ok(dims.iter().flatten().copied().collect())
            }
            other => Err(self.expected(name, "an int or a tuple of ints", other)),
        }
    }

    /// A pair of positive ints (strides, dilation rates).
    pub fn pair(&self, name: &str) -> Result<[usize; 2]> {
        let ints = self.ints(name)?;
        match ints[..] {
            [a, b] if a >= 1 && b >= 1 => Ok([a as usize, b as usize]),
            [a] if a >= 1 => Ok([a as usize; 2]),
            _ => Err(self.expected(name, "a positive int or a pair of them", self.get(name)?)),
        }
    }

    /// `None`, or dimensions where `None` stands for "the input's" (`noise_shape`).
    pub fn optional_dims(&self, name: &str) -> Result<Option<Vec<Option<usize>>>> {
        match self.get(name)? {
            Setting::None => Ok(None),
            Setting::Dims(dims) if dims.iter().flatten().all(|&d| d >= 0) => {
                Ok(Some(dims.iter().map(|d| d.map(|d| d as usize)).collect()))
            }
            other => Err(self.expected(name, "None or a tuple of ints and None", other)),
        }
    }

    /// A named activation the layer applies inside its own call (see [`Activation`]).
    pub fn activation(&self, name: &str) -> Result<Activation> {
        match self.get(name)? {
            Setting::None => Ok(Activation::Linear),
            Setting::Text(s) => Activation::parse(self.layer, s),
            other => Err(self.expected(name, "an activation name", other)),
        }
    }
}

/// The weights a Python layer hands over when it is built, by their Keras names.
#[derive(Default)]
pub struct Weights {
    /// Set by [`NativeLayer::new`] from its table, for messages.
    layer: &'static str,
    variables: BTreeMap<String, Option<Variable>>,
}

impl Weights {
    pub fn new() -> Weights {
        Weights::default()
    }

    pub fn with(mut self, name: &str, variable: Option<Variable>) -> Weights {
        self.insert(name, variable);
        self
    }

    /// `None` stands for a weight the layer does without (`use_bias=False`, `center=False`).
    pub fn insert(&mut self, name: &str, variable: Option<Variable>) {
        self.variables.insert(name.to_owned(), variable);
    }

    /// A weight the layer may do without.
    fn optional(&mut self, name: &str) -> Option<Variable> {
        self.variables.remove(name).flatten()
    }

    /// A weight the layer needs.
    fn required(&mut self, name: &str) -> Result<Variable> {
        self.optional(name).ok_or_else(|| {
            Error::usage(
                self.layer,
                format!("{}: the weight `{name}` must be a Variable", self.layer),
            )
        })
    }

    /// Refuses weights the layer does not know (a misspelt name would otherwise be ignored).
    fn finish(self) -> Result<()> {
        match self.variables.keys().next() {
            None => Ok(()),
            Some(name) => Err(Error::usage(
                self.layer,
                format!("{}: unknown weight `{name}`", self.layer),
            )),
        }
    }
}

type Constructor = fn(&mut Weights, u64) -> Result<Box<dyn Layer>>;

/// Keras's class name → how its native form is made from the weights (and a seed, for layers
/// that draw random numbers).
const LAYERS: &[(&str, Constructor)] = &[
    ("Activation", |_, _| Ok(Box::new(ActivationLayer))),
    ("BatchNormalization", |w, _| {
        Ok(Box::new(BatchNormalization {
            gamma: w.optional("gamma"),
            beta: w.optional("beta"),
            moving_mean: w.required("moving_mean")?,
            moving_variance: w.required("moving_variance")?,
        }))
    }),
    ("Conv2D", |w, _| {
        Ok(Box::new(Conv2D {
            kernel: w.required("kernel")?,
            bias: w.optional("bias"),
        }))
    }),
    ("Dense", |w, _| {
        Ok(Box::new(Dense {
            kernel: w.required("kernel")?,
            bias: w.optional("bias"),
        }))
    }),
    ("DepthwiseConv2D", |w, _| {
        Ok(Box::new(DepthwiseConv2D {
            kernel: w.required("kernel")?,
            bias: w.optional("bias"),
        }))
    }),
    ("Dropout", |_, seed| Ok(Box::new(Dropout::new(seed)))),
    ("Embedding", |w, _| {
        Ok(Box::new(Embedding {
            embeddings: w.required("embeddings")?,
        }))
    }),
    ("LayerNormalization", |w, _| {
        Ok(Box::new(LayerNormalization {
            gamma: w.optional("gamma"),
            beta: w.optional("beta"),
        }))
    }),
];

/// A layer's native form, as the generic binding holds it.
pub struct NativeLayer {
    class_name: &'static str,
    layer: Box<dyn Layer>,
}

impl NativeLayer {
    /// The names of the layers that have a native form.
    pub fn names() -> impl Iterator<Item = &'static str> {
        LAYERS.iter().map(|(name, _)| *name)
    }

    /// The native form of Keras's `class_name` layer over `weights`; `seed` seeds the layers
    /// that draw random numbers.
    pub fn new(class_name: &str, mut weights: Weights, seed: u64) -> Result<NativeLayer> {
        let Some(&(name, make)) = LAYERS.iter().find(|(name, _)| *name == class_name) else {
            return Err(Error::usage(
                "NativeLayer",
                format!(
                    "no native layer is called {class_name:?}; known: {}",
                    NativeLayer::names().collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        weights.layer = name;
        let layer = make(&mut weights, seed)?;
        weights.finish()?;
        Ok(NativeLayer {
            class_name: name,
            layer,
        })
    }

    pub fn class_name(&self) -> &'static str {
        self.class_name
    }

    /// Empty settings for a call of this layer.
    pub fn settings(&self) -> Settings {
        Settings::new(self.class_name)
    }

    pub fn call(&self, inputs: &Tensor, training: bool, settings: &Settings) -> Result<Tensor> {
        self.layer.call(inputs, training, settings)
    }
}
