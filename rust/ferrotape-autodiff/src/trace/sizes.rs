//! One trace for every size of a `None` dimension (`ft.function` with an `input_signature`
//! holding `None`), as TensorFlow builds one graph for it.
//!
//! Design choice (hard to undo): ferrotape's ops do not carry symbolic shapes. A trace is
//! recorded at the first call's concrete sizes, and [`Graph::generalize`] then learns how each
//! value's shape depends on the sizes of the `None` dimensions (the *symbols*) by **probing**:
//! it replays the kernels, effects skipped and random draws replaced by zeros, once per symbol
//! at that symbol's traced size plus one, and once more at every symbol plus three. Each
//! dimension of each value is fitted as an integer affine function of the symbols from the
//! first probes (`constant + Σ coefficient · symbol`) and the fit is checked on the last. A
//! replay at other sizes ([`Graph::run_at`]) checks every result against the fit.
//!
//! Probing finds how shapes move; it cannot see a kernel that computes a wrong value of a right
//! shape because it replays an attribute computed from the traced sizes (a slice's resolved end,
//! a mean's count). So only kernels recorded as recomputing everything from their inputs'
//! shapes ([`super::follows_input_shapes`]) may receive a value whose shape moves. Any other
//! kernel, effect or host callback receiving one, a guard reading another value, the host
//! having read a moving dimension (`x.shape[0]` in Python, see [`super::shape_read`]), or an
//! error while probing leaves the trace at its concrete sizes, with the reason; the host then
//! traces once per size as before, which is always correct.

use std::collections::HashSet;
use std::sync::Mutex;

use ferrotape_core::{Error, Result, Shape};
use smallvec::SmallVec;

use crate::tensor::Tensor;

/// The least size of a `None` dimension a trace serving other sizes is traced at or replays
/// at (see [`SizeModel::sizes_of`]).
pub const MIN_SIZE: usize = 2;

/// One dimension as a function of the symbols: `constant + Σ per_symbol[k] · symbol[k]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Dim {
    constant: i64,
    per_symbol: SmallVec<[i64; 2]>,
}

impl Dim {
    fn at(&self, sizes: &[usize]) -> Option<usize> {
        let value = self.constant
            + self
                .per_symbol
                .iter()
                .zip(sizes)
                .map(|(&c, &s)| c * s as i64)
                .sum::<i64>();
        usize::try_from(value).ok()
    }

    fn is_static(&self) -> bool {
        self.per_symbol.iter().all(|&c| c == 0)
    }
}

/// How the shape of every value of a trace follows its symbols (see the module docs).
pub struct SizeModel {
    /// For each symbol, the (input index, axis) pairs it sizes.
    symbols: Vec<Vec<(usize, usize)>>,
    /// Each symbol's size in the trace.
    traced: Vec<usize>,
    /// For each slot, its dimensions (`None`: a slot no replay fills).
    dims: Vec<Option<SmallVec<[Dim; 4]>>>,
    /// Sizes a replay has run at to the end: a first replay at other sizes keeps an undo
    /// journal, in case a result shows the fit wrong there.
    seen: Mutex<HashSet<Vec<usize>>>,
}

impl SizeModel {
    /// The model of a trace whose `symbols` (their (input, axis) pairs) were `traced` at those
    /// sizes, with each slot's fitted `dims` (see [`fit`]).
    pub(super) fn new(
        symbols: Vec<Vec<(usize, usize)>>,
        traced: Vec<usize>,
        dims: Vec<Option<SmallVec<[Dim; 4]>>>,
    ) -> SizeModel {
        let seen = HashSet::from([traced.clone()]);
        SizeModel {
            symbols,
            traced,
            dims,
            seen: Mutex::new(seen),
        }
    }

    /// Whether `slot`'s dimension `axis` is the same at every size.
    pub(super) fn is_static(&self, slot: usize, axis: usize) -> Option<bool> {
        Some(self.dims[slot].as_ref()?.get(axis)?.is_static())
    }

    pub(super) fn traced_sizes(&self) -> &[usize] {
        &self.traced
    }

    /// The shape `slot` has at `sizes`, if the fit knows it.
    pub(super) fn shape_at(&self, slot: usize, sizes: &[usize]) -> Option<Shape> {
        self.dims[slot]
            .as_ref()?
            .iter()
            .map(|d| d.at(sizes))
            .collect()
    }

    /// The symbols' sizes in a call with `inputs`: `None` when two dimensions of one symbol
    /// differ, or an input's other dimensions are not the traced ones.
    pub(super) fn sizes_of(&self, input_slots: &[usize], inputs: &[Tensor]) -> Option<Vec<usize>> {
        let mut sizes = Vec::with_capacity(self.symbols.len());
        for members in &self.symbols {
            let mut size = None;
            for &(input, axis) in members {
                let d = *inputs.get(input)?.shape().get(axis)?;
                if size.is_some_and(|s| s != d) {
                    return None;
                }
                size = Some(d);
            }
            // Sizes 0 and 1 are the traced call's own: at 1 an axis broadcasts (or `squeeze`
            // drops it) and at 0 the host may take another path, where 2 and more behave alike.
            sizes.push(size.filter(|&s| s >= MIN_SIZE)?);
        }
        for (&slot, t) in input_slots.iter().zip(inputs) {
            if self.shape_at(slot, &sizes)?[..] != t.shape()[..] {
                return None;
            }
        }
        Some(sizes)
    }

    /// Whether a replay at `sizes` has already run to the end.
    pub(super) fn has_run_at(&self, sizes: &[usize]) -> bool {
        self.seen.lock().expect("never poisoned").contains(sizes)
    }

    pub(super) fn ran_at(&self, sizes: Vec<usize>) {
        self.seen.lock().expect("never poisoned").insert(sizes);
    }
}

/// Fits every slot's dimensions from its traced shape, its shapes in the per-symbol probes
/// (probe `k` at the traced sizes with symbol `k` one larger) and checks the fit on the last
/// probe (`check_sizes`). `name_of(slot)` names the kernel making a slot, for the reason.
pub(super) fn fit(
    traced_shapes: &[Option<Shape>],
    traced: &[usize],
    probes: &[Vec<Option<Shape>>],
    check: &[Option<Shape>],
    check_sizes: &[usize],
    name_of: impl Fn(usize) -> &'static str,
) -> std::result::Result<Vec<Option<SmallVec<[Dim; 4]>>>, String> {
    let mut dims = Vec::with_capacity(traced_shapes.len());
    for (slot, shape) in traced_shapes.iter().enumerate() {
        // A slot no replay fills (dead code's): no fit, its traced shape serves (see `plan`).
        let replayed = check[slot].is_some() || probes.iter().any(|p| p[slot].is_some());
        let Some(shape) = shape.as_ref().filter(|_| replayed) else {
            dims.push(None);
            continue;
        };
        let mut slot_dims: SmallVec<[Dim; 4]> = SmallVec::new();
        for (axis, &d) in shape.iter().enumerate() {
            let mut per_symbol = SmallVec::new();
            for probe in probes {
                let moved = match &probe[slot] {
                    Some(p) if p.len() == shape.len() => p[axis] as i64 - d as i64,
                    _ => {
                        return Err(format!(
                            "the rank of {}'s result changes with the size",
                            name_of(slot)
                        ))
                    }
                };
                per_symbol.push(moved);
            }
            let constant = d as i64
                - per_symbol
                    .iter()
                    .zip(traced)
                    .map(|(&c, &s)| c * s as i64)
                    .sum::<i64>();
            slot_dims.push(Dim {
                constant,
                per_symbol,
            });
        }
        let predicted: Option<Shape> = slot_dims.iter().map(|d| d.at(check_sizes)).collect();
        if check[slot].is_none() || predicted != check[slot] {
            return Err(format!(
                "the shape of {}'s result is not a linear function of the None dimensions",
                name_of(slot)
            ));
        }
        dims.push(Some(slot_dims));
    }
    Ok(dims)
}

/// `t` with `axis` of size `n`, its entries repeated cyclically (a probe's input: values of
/// the traced call's kind, so that integer labels stay in range).
pub(super) fn resized(t: &Tensor, axis: usize, n: usize) -> Result<Tensor> {
    let d = t.shape()[axis];
    if d == 0 {
        return Err(Error::invalid(
            "function",
            "a None dimension of size 0 cannot be probed",
        ));
    }
    let index: Vec<Option<usize>> = (0..n).map(|i| Some(i % d)).collect();
    Ok(Tensor::new(ferrotape_core::kernels::take(
        "function",
        t.value(),
        axis,
        &index,
        0.0,
    )?))
}
