//! Backprop: the backward sweep over a tape's entries, and `gradient`, `jacobian` and
//! `batch_jacobian` built on it.
//!
//! Backward closures are written with ferrotape's own ops, so when an outer tape is active during
//! a sweep it records the backward pass: nested tapes give higher derivatives with no extra
//! machinery. Gradients are accumulated in a map keyed by tensor id, never written on tensors.
//! This half uses ops (seeds, zeros, stacking) and so sits above them; `record` sits below.

use std::sync::Arc;

use ferrotape_core::{DType, Error, Result, Shape};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use super::contract::ONE_SET_ONLY;
use super::record::{Entry, Tape};
use crate::ops;
use crate::tensor::{Tensor, TensorId};
use crate::variable::Variable;

/// A gradient source: what `gradient()` differentiates with respect to.
#[derive(Clone, Debug)]
pub struct Source {
    pub id: TensorId,
    pub shape: Shape,
    pub dtype: DType,
}

impl Source {
    pub fn of_tensor(t: &Tensor) -> Source {
        Source {
            id: t.id(),
            shape: t.shape().into(),
            dtype: t.dtype(),
        }
    }

    pub fn of_variable(v: &Variable) -> Source {
        Source {
            id: v.id(),
            shape: v.shape().into(),
            dtype: v.dtype(),
        }
    }
}

impl Tape {
    /// The recorded entries for one differentiation: shared for a persistent tape, taken (and
    /// the tape marked used) for a non-persistent one.
    fn entries_for_sweep(&self, op: &'static str) -> Result<Vec<Arc<Entry>>> {
        let mut st = self.state.lock();
        if st.used {
            return Err(Error::runtime(op, ONE_SET_ONLY));
        }
        if self.persistent {
            return Ok(st.entries.clone());
        }
        st.used = true;
        st.paused = true;
        Ok(std::mem::take(&mut st.entries))
    }

    fn tracked_sources(&self, sources: &[Source]) -> FxHashSet<TensorId> {
        let st = self.state.lock();
        sources
            .iter()
            .filter(|s| s.dtype.is_differentiable() && st.tracked.contains(&s.id))
            .map(|s| s.id)
            .collect()
    }

    /// d(sum of targets, weighted by `output_gradients`)/d(sources). `None` marks a source the
    /// targets do not depend on (or a non-float one).
    pub fn gradient(
        &self,
        targets: &[Tensor],
        sources: &[Source],
        output_gradients: Option<&[Tensor]>,
    ) -> Result<Vec<Option<Tensor>>> {
        let entries = self.entries_for_sweep("GradientTape.gradient")?;
        let reach = self.tracked_sources(sources);
        let mut seeds = Vec::with_capacity(targets.len());
        for (i, t) in targets.iter().enumerate() {
            if !t.dtype().is_differentiable() {
                continue;
            }
            let seed = match output_gradients.and_then(|g| g.get(i)) {
                Some(g) => ops::broadcast_to(&ops::cast(g, t.dtype())?, t.shape())?,
                None => ops::ones_like(t)?,
            };
            seeds.push((t.id(), seed));
        }
        let grads = sweep(entries, reach, seeds, !self.persistent)?;
        Ok(sources.iter().map(|s| grads.get(&s.id).cloned()).collect())
    }

    /// The full Jacobian of `target` with respect to each source: shape `target + source`.
    pub fn jacobian(&self, target: &Tensor, sources: &[Source]) -> Result<Vec<Option<Tensor>>> {
        let entries = self.entries_for_sweep("GradientTape.jacobian")?;
        let reach = self.tracked_sources(sources);
        let n = target.len();
        let mut rows: Vec<Vec<Option<Tensor>>> = vec![Vec::with_capacity(n); sources.len()];
        for i in 0..n {
            let seed = ops::one_hot_seed(target, &[i])?;
            let grads = sweep(
                entries.clone(),
                reach.clone(),
                vec![(target.id(), seed)],
                false,
            )?;
            for (k, s) in sources.iter().enumerate() {
                rows[k].push(grads.get(&s.id).cloned());
            }
        }
        sources
            .iter()
            .zip(rows)
            .map(|(s, r)| stack_rows(r, target.shape(), s))
            .collect()
    }

    /// Per-example Jacobians: shape `(batch,) + target[1:] + source[1:]`; zeros when unconnected.
    pub fn batch_jacobian(&self, target: &Tensor, source: &Source) -> Result<Tensor> {
        const OP: &str = "GradientTape.batch_jacobian";
        // TensorFlow's check, before the tape is used: a batch axis and at least one more.
        for shape in [target.shape(), &source.shape[..]] {
            if shape.len() < 2 {
                let shape = python_tuple(shape);
                return Err(Error::invalid(
                    OP,
                    format!("Shape {shape} must have rank at least 2"),
                ));
            }
        }
        let entries = self.entries_for_sweep(OP)?;
        if target.rank() == 0 || source.shape.is_empty() || target.shape()[0] != source.shape[0] {
            return Err(Error::invalid(
                OP,
                format!(
                    "target and source must have the same (non-scalar) batch dimension, received shapes {:?} and {:?}",
                    target.shape(),
                    source.shape
                ),
            ));
        }
        let reach = self.tracked_sources(std::slice::from_ref(source));
        let batch = target.shape()[0];
        let per = target.len() / batch.max(1);
        let mut cols = Vec::with_capacity(per);
        for j in 0..per {
            let hot: Vec<usize> = (0..batch).map(|b| b * per + j).collect();
            let seed = ops::one_hot_seed(target, &hot)?;
            let grads = sweep(
                entries.clone(),
                reach.clone(),
                vec![(target.id(), seed)],
                false,
            )?;
            cols.push(grads.get(&source.id).cloned());
        }
        let per_source: Shape = source.shape[1..].into();
        let mut out_shape: Shape = target.shape().into();
        out_shape.extend_from_slice(&per_source);
        let flat_src = source.shape.iter().product::<usize>() / batch.max(1);
        let cols = cols
            .into_iter()
            .map(|c| match c {
                Some(g) => ops::reshape(&g, &[batch, flat_src]),
                None => ops::zeros(source.dtype, &[batch, flat_src]),
            })
            .collect::<Result<Vec<_>>>()?;
        if cols.is_empty() {
            return ops::zeros(source.dtype, &out_shape);
        }
        ops::reshape(&ops::stack(&cols, 1)?, &out_shape)
    }
}

/// A shape as Python prints a tuple, as TensorFlow's message does: `(2,)`, `(2, 3)`, `()`.
fn python_tuple(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    match dims.as_slice() {
        [d] => format!("({d},)"),
        _ => format!("({})", dims.join(", ")),
    }
}

/// Stacks per-target-element gradients into a Jacobian; `None` if no element reached the source.
fn stack_rows(
    rows: Vec<Option<Tensor>>,
    target_shape: &[usize],
    s: &Source,
) -> Result<Option<Tensor>> {
    if rows.iter().all(|r| r.is_none()) {
        return Ok(None);
    }
    let rows = rows
        .into_iter()
        .map(|r| r.map_or_else(|| ops::zeros(s.dtype, &s.shape), Ok))
        .collect::<Result<Vec<_>>>()?;
    let mut shape: Shape = target_shape.into();
    shape.extend_from_slice(&s.shape);
    Ok(Some(ops::reshape(&ops::stack(&rows, 0)?, &shape)?))
}

/// The backward sweep. `reach` starts as the tracked sources and grows forward over the entries
/// to every id that depends on them; entries are then visited in reverse, each with the
/// gradients of its outputs. With `consume`, entries (and what they saved) drop as they are used.
fn sweep(
    mut entries: Vec<Arc<Entry>>,
    mut reach: FxHashSet<TensorId>,
    seeds: Vec<(TensorId, Tensor)>,
    consume: bool,
) -> Result<FxHashMap<TensorId, Tensor>> {
    // Sources are few: a small list beats a second hash set here.
    let sources: SmallVec<[TensorId; 8]> = reach.iter().copied().collect();
    reach.reserve(entries.len() * 2);
    for e in &entries {
        if e.inputs.iter().any(|i| reach.contains(i)) {
            reach.extend(e.outputs.iter().map(|o| o.0));
        }
    }
    let mut grads: FxHashMap<TensorId, Tensor> =
        FxHashMap::with_capacity_and_hasher(entries.len() * 2, Default::default());
    for (id, g) in seeds {
        if reach.contains(&id) {
            accumulate(&mut grads, id, g)?;
        }
    }
    if grads.is_empty() {
        return Ok(grads);
    }
    let visit = |e: &Entry, grads: &mut FxHashMap<TensorId, Tensor>| -> Result<()> {
        let needs: SmallVec<[bool; 2]> = e.inputs.iter().map(|i| reach.contains(i)).collect();
        if !needs.contains(&true) || !e.outputs.iter().any(|o| grads.contains_key(&o.0)) {
            return Ok(());
        }
        let out_grads: SmallVec<[Tensor; 1]> = e
            .outputs
            .iter()
            .map(|(id, shape, dtype)| {
                let g = if sources.contains(id) {
                    grads.get(id).cloned()
                } else {
                    grads.remove(id)
                };
                g.map_or_else(|| ops::zeros(*dtype, shape), Ok)
            })
            .collect::<Result<_>>()?;
        let in_grads = (e.backward)(&out_grads, &needs)?;
        for ((&id, need), g) in e.inputs.iter().zip(needs).zip(in_grads) {
            if let (true, Some(g)) = (need, g) {
                accumulate(grads, id, g)?;
            }
        }
        Ok(())
    };
    if consume {
        while let Some(e) = entries.pop() {
            ferrotape_core::interrupt::check("GradientTape.gradient")?;
            visit(&e, &mut grads).map_err(|err| name_backward(err, e.op))?;
        }
    } else {
        for e in entries.iter().rev() {
            ferrotape_core::interrupt::check("GradientTape.gradient")?;
            visit(e, &mut grads).map_err(|err| name_backward(err, e.op))?;
        }
    }
    Ok(grads)
}

fn name_backward(err: Error, op: &'static str) -> Error {
    match err {
        Error::Unimplemented { msg, .. } => Error::unimplemented(op, msg),
        other => other,
    }
}

fn accumulate(grads: &mut FxHashMap<TensorId, Tensor>, id: TensorId, g: Tensor) -> Result<()> {
    use std::collections::hash_map::Entry as Slot;
    match grads.entry(id) {
        Slot::Occupied(mut slot) => {
            let sum = ops::add(slot.get(), &g)?;
            slot.insert(sum);
        }
        Slot::Vacant(slot) => {
            slot.insert(g);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrotape_core::Array;

    fn scalar(v: f64) -> Tensor {
        Tensor::new(Array::scalar(v))
    }

    fn value(t: &Tensor) -> f64 {
        t.value().scalar_f64().unwrap()
    }

    /// Records `f(x)` on a fresh tape watching `x`.
    fn taped(
        persistent: bool,
        x: &Tensor,
        f: impl FnOnce(&Tensor) -> Tensor,
    ) -> (Arc<Tape>, Tensor) {
        let tape = Tape::new(persistent, true);
        tape.push();
        tape.watch_tensor(x);
        let y = f(x);
        tape.pop();
        (tape, y)
    }

    #[test]
    fn gradient_of_a_product_rule_expression() {
        let x = scalar(3.0);
        let (tape, y) = taped(false, &x, |x| ops::mul(&ops::exp(x).unwrap(), x).unwrap());
        let g = tape.gradient(&[y], &[Source::of_tensor(&x)], None).unwrap();
        // d/dx x·e^x = e^x (1 + x)
        assert!((value(g[0].as_ref().unwrap()) - 3f64.exp() * 4.0).abs() < 1e-9);
    }

    #[test]
    fn nested_tapes_give_the_second_derivative() {
        let x = scalar(2.0);
        let outer = Tape::new(false, true);
        outer.push();
        outer.watch_tensor(&x);
        let (inner, y) = taped(false, &x, |x| {
            ops::mul(&ops::mul(x, x).unwrap(), x).unwrap()
        });
        let dy = inner
            .gradient(&[y], &[Source::of_tensor(&x)], None)
            .unwrap()[0]
            .clone()
            .unwrap();
        outer.pop();
        let d2y = outer
            .gradient(std::slice::from_ref(&dy), &[Source::of_tensor(&x)], None)
            .unwrap();
        assert_eq!(value(&dy), 12.0); // 3x²
        assert_eq!(value(d2y[0].as_ref().unwrap()), 12.0); // 6x
    }

    #[test]
    fn batch_jacobian_needs_rank_two_on_both_sides_and_leaves_the_tape_unused() {
        let x = Tensor::new(Array::from_vec(vec![1.0, 2.0], &[2]).unwrap());
        let (tape, y) = taped(false, &x, |x| ops::mul(x, x).unwrap());
        let err = tape.batch_jacobian(&y, &Source::of_tensor(&x)).unwrap_err();
        assert_eq!(
            err,
            Error::invalid(
                "GradientTape.batch_jacobian",
                "Shape (2,) must have rank at least 2"
            )
        );
        assert!(tape.gradient(&[y], &[Source::of_tensor(&x)], None).is_ok());
    }

    #[test]
    fn unconnected_sources_get_none_and_a_second_sweep_is_refused() {
        let (x, z) = (scalar(1.0), scalar(5.0));
        let (tape, y) = taped(false, &x, |x| ops::sin(x).unwrap());
        let g = tape
            .gradient(std::slice::from_ref(&y), &[Source::of_tensor(&z)], None)
            .unwrap();
        assert!(g[0].is_none());
        assert!(matches!(
            tape.gradient(&[y], &[Source::of_tensor(&x)], None),
            Err(Error::Runtime { .. })
        ));
    }

    #[test]
    fn a_non_persistent_sweep_frees_saved_tensors_and_a_persistent_tape_keeps_them() {
        for persistent in [false, true] {
            let x = scalar(0.5);
            let mut weak = None;
            let (tape, target) = taped(persistent, &x, |x| {
                let saved = ops::exp(x).unwrap(); // Exp saves its output for the backward pass
                weak = Some(saved.downgrade());
                ops::reduce_sum(&saved, None, false).unwrap()
            });
            let weak = weak.unwrap();
            assert!(
                weak.upgrade().is_some(),
                "the tape keeps what backward needs"
            );
            tape.gradient(&[target], &[Source::of_tensor(&x)], None)
                .unwrap();
            assert_eq!(weak.upgrade().is_some(), persistent);
            drop(tape);
            assert!(
                weak.upgrade().is_none(),
                "dropping the tape frees everything"
            );
        }
    }
}
