//! Backprop: the backward sweep over a tape's entries, and `gradient`, `jacobian` and
//! `batch_jacobian` built on it.
//!
//! Jacobians are vectorized as TensorFlow's pfor vectorizes them: one sweep carries many rows
//! of the Jacobian at once, its output gradients holding a leading axis of rows (the seeds
//! are rows of an identity). That needs every backward closure the sweep visits to keep such
//! an axis in front ([`record_vectorizable`](super::record::record_vectorizable)); when one
//! cannot, the Jacobian falls back to one sweep per row, as with `experimental_use_pfor=False`.
//! A batched sweep holds every row's intermediates at once, so rows go in chunks of at most
//! [`ROWS_ELEMENT_BUDGET`] elements per row-sized tensor (or `parallel_iterations` rows).
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
use super::record::{any_accumulating, idle, with_batch_axes, Entry, Tape};
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
        // With nothing active to record the backward ops (no outer tape, accumulator or trace)
        // and no host code in it, the sweep is plain kernels: it runs on the compute pool when
        // it is large enough to gain from that.
        let plain = idle()
            && !crate::trace::is_tracing()
            && crate::compute_thread::worth_moving(largest_tensor(&entries, sources))
            && !entries.iter().any(|e| e.calls_host());
        let consume = !self.persistent;
        let run = move || sweep(entries, reach, seeds, consume, &[]);
        let grads = if plain {
            crate::compute_thread::on_compute_thread(run)
        } else {
            run()
        }?
        .expect("an unbatched sweep visits every entry");
        Ok(sources.iter().map(|s| grads.get(&s.id).cloned()).collect())
    }

    /// The full Jacobian of `target` with respect to each source: shape `target + source`.
    /// `rows` says how it is computed (see [`Rows`]).
    pub fn jacobian(
        &self,
        target: &Tensor,
        sources: &[Source],
        rows: Rows,
    ) -> Result<Vec<Option<Tensor>>> {
        let entries = self.entries_for_sweep("GradientTape.jacobian")?;
        let reach = self.tracked_sources(sources);
        let n = target.len();
        if let Some(chunk) = rows.chunk(n, largest_tensor(&entries, sources)) {
            let seeds = |range: std::ops::Range<usize>| -> Result<Tensor> {
                let hot: Vec<Vec<usize>> = range.map(|i| vec![i]).collect();
                ops::one_hot_seeds(target, &hot)
            };
            if let Some(blocks) = batched_rows(&entries, &reach, target, sources, n, chunk, seeds)?
            {
                return sources
                    .iter()
                    .zip(blocks)
                    .map(|(s, block)| {
                        let mut shape: Shape = target.shape().into();
                        shape.extend_from_slice(&s.shape);
                        block.map(|b| ops::reshape(&b, &shape)).transpose()
                    })
                    .collect();
            }
        }
        let mut rows: Vec<Vec<Option<Tensor>>> = vec![Vec::with_capacity(n); sources.len()];
        for i in 0..n {
            let seed = ops::one_hot_seed(target, &[i])?;
            let grads = sweep(
                entries.clone(),
                reach.clone(),
                vec![(target.id(), seed)],
                false,
                &[],
            )?
            .expect("an unbatched sweep visits every entry");
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
    /// `rows` says how they are computed (see [`Rows`]).
    pub fn batch_jacobian(&self, target: &Tensor, source: &Source, rows: Rows) -> Result<Tensor> {
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
        let per_source: Shape = source.shape[1..].into();
        let mut out_shape: Shape = target.shape().into();
        out_shape.extend_from_slice(&per_source);
        if let Some(chunk) = rows.chunk(per, largest_tensor(&entries, std::slice::from_ref(source)))
        {
            // Row j of the batched sweep seeds element j of every example.
            let seeds = |range: std::ops::Range<usize>| -> Result<Tensor> {
                let hot: Vec<Vec<usize>> = range
                    .map(|j| (0..batch).map(|b| b * per + j).collect())
                    .collect();
                ops::one_hot_seeds(target, &hot)
            };
            let sources = std::slice::from_ref(source);
            if let Some(mut blocks) =
                batched_rows(&entries, &reach, target, sources, per, chunk, seeds)?
            {
                let Some(block) = blocks.pop().flatten() else {
                    return ops::zeros(source.dtype, &out_shape);
                };
                // [per, batch, source[1:]...] with the example axis first.
                let mut perm: Vec<usize> = (0..block.rank()).collect();
                perm.swap(0, 1);
                return ops::reshape(&ops::transpose(&block, &perm)?, &out_shape);
            }
        }
        let mut cols = Vec::with_capacity(per);
        for j in 0..per {
            let hot: Vec<usize> = (0..batch).map(|b| b * per + j).collect();
            let seed = ops::one_hot_seed(target, &hot)?;
            let grads = sweep(
                entries.clone(),
                reach.clone(),
                vec![(target.id(), seed)],
                false,
                &[],
            )?
            .expect("an unbatched sweep visits every entry");
            cols.push(grads.get(&source.id).cloned());
        }
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

/// How a Jacobian's rows are computed: `tf.GradientTape.jacobian`'s `experimental_use_pfor`
/// and `parallel_iterations`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// One sweep per row (`experimental_use_pfor=False`).
    OneSweepEach,
    /// Batched sweeps of at most this many rows each, or of as many as [`ROWS_ELEMENT_BUDGET`]
    /// allows when `None` (`experimental_use_pfor=True`, TensorFlow's default).
    Vectorized(Option<usize>),
}

/// The most elements a tensor of a batched sweep may hold: a chunk of rows costs at most
/// about this many elements per tensor the sweep makes (64 MiB of float32).
pub const ROWS_ELEMENT_BUDGET: usize = 1 << 24;

impl Rows {
    /// The rows per batched sweep for `rows` rows whose widest row tensor has `width`
    /// elements; `None` for one sweep per row (also when a forward accumulator is active: it
    /// derives tangents from backward closures, which must then see unbatched gradients).
    fn chunk(self, rows: usize, width: usize) -> Option<usize> {
        let Rows::Vectorized(limit) = self else {
            return None;
        };
        if rows < 2 || any_accumulating() {
            return None;
        }
        let chunk = limit
            .unwrap_or(ROWS_ELEMENT_BUDGET / width.max(1))
            .clamp(1, rows);
        (chunk > 1).then_some(chunk)
    }
}

/// The most elements a tensor of a sweep holds (per row, in a batched one): gradients have the
/// shapes of what the tape recorded, and of the sources.
fn largest_tensor(entries: &[Arc<Entry>], sources: &[Source]) -> usize {
    let recorded = entries.iter().flat_map(|e| {
        e.outputs
            .iter()
            .map(|(_, shape, _)| shape.iter().product::<usize>())
    });
    let sources = sources.iter().map(|s| s.shape.iter().product::<usize>());
    recorded.chain(sources).max().unwrap_or(1)
}

/// The rows of a Jacobian by batched sweeps of `chunk` rows each (`seeds(range)` makes the
/// seed of rows `range`, shape `[range.len()] + target`): per source, a tensor of shape
/// `[rows] + source`, or `None` when no row reaches it. `None` as a whole when some entry the
/// sweep visits cannot take batched gradients, or a source's gradient lost its row axis.
fn batched_rows(
    entries: &[Arc<Entry>],
    reach: &FxHashSet<TensorId>,
    target: &Tensor,
    sources: &[Source],
    rows: usize,
    chunk: usize,
    seeds: impl Fn(std::ops::Range<usize>) -> Result<Tensor>,
) -> Result<Option<Vec<Option<Tensor>>>> {
    let mut blocks: Vec<Vec<Tensor>> = vec![Vec::new(); sources.len()];
    let mut start = 0;
    while start < rows {
        let end = (start + chunk).min(rows);
        let seed = seeds(start..end)?;
        let count = end - start;
        let grads = with_batch_axes(1, || {
            sweep(
                entries.to_vec(),
                reach.clone(),
                vec![(target.id(), seed)],
                false,
                &[count],
            )
        })?;
        let Some(grads) = grads else {
            return Ok(None);
        };
        for (s, block) in sources.iter().zip(&mut blocks) {
            let Some(g) = grads.get(&s.id) else {
                continue;
            };
            let full: Shape = std::iter::once(count)
                .chain(s.shape.iter().copied())
                .collect();
            if g.shape() != &full[..] {
                return Ok(None);
            }
            block.push(g.clone());
        }
        start = end;
    }
    let chunks = rows.div_ceil(chunk);
    sources
        .iter()
        .zip(blocks)
        .map(|(s, block)| match block.len() {
            0 => Ok(None),
            n if n == chunks => Ok(Some(if n == 1 {
                block.into_iter().next().expect("one block")
            } else {
                ops::concat(&block, 0)?
            })),
            // Reached by some chunks only: cannot happen (the seeds differ only in values),
            // but the row-by-row path decides it row by row.
            _ => Err(ferrotape_core::Error::invalid(
                "GradientTape.jacobian",
                format!("source {} was reached by some rows only", s.id),
            )),
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
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
///
/// `batch` are the leading axes the seeds carry beyond their targets' shapes (empty, except
/// for a vectorized Jacobian, which sets [`batch_axes`](super::record::batch_axes) to match);
/// a batched sweep returns `None` as soon as it must visit an entry not recorded as
/// vectorizable.
fn sweep(
    mut entries: Vec<Arc<Entry>>,
    mut reach: FxHashSet<TensorId>,
    seeds: Vec<(TensorId, Tensor)>,
    consume: bool,
    batch: &[usize],
) -> Result<Option<FxHashMap<TensorId, Tensor>>> {
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
        return Ok(Some(grads));
    }
    // Whether the entry could be visited: false stops a batched sweep.
    let visit = |e: &Entry, grads: &mut FxHashMap<TensorId, Tensor>| -> Result<bool> {
        let needs: SmallVec<[bool; 2]> = e.inputs.iter().map(|i| reach.contains(i)).collect();
        if !needs.contains(&true) || !e.outputs.iter().any(|o| grads.contains_key(&o.0)) {
            return Ok(true);
        }
        if !batch.is_empty() && !e.vectorizable {
            return Ok(false);
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
                g.map_or_else(
                    || {
                        let full: Shape = batch.iter().chain(shape).copied().collect();
                        ops::zeros(*dtype, &full)
                    },
                    Ok,
                )
            })
            .collect::<Result<_>>()?;
        let in_grads = (e.backward)(&out_grads, &needs)?;
        for ((&id, need), g) in e.inputs.iter().zip(needs).zip(in_grads) {
            if let (true, Some(g)) = (need, g) {
                accumulate(grads, id, g)?;
            }
        }
        Ok(true)
    };
    if consume {
        while let Some(e) = entries.pop() {
            ferrotape_core::interrupt::check("GradientTape.gradient")?;
            if !visit(&e, &mut grads).map_err(|err| name_backward(err, e.op))? {
                return Ok(None);
            }
        }
    } else {
        for e in entries.iter().rev() {
            ferrotape_core::interrupt::check("GradientTape.gradient")?;
            if !visit(e, &mut grads).map_err(|err| name_backward(err, e.op))? {
                return Ok(None);
            }
        }
    }
    Ok(Some(grads))
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

    fn matrix(rows: usize, cols: usize, seed: u64) -> Tensor {
        // Deterministic values spread over (-1.5, 1.5), none at 0 (relu's kink) or 1.
        let v: Vec<f64> = (0..rows * cols)
            .map(|i| {
                let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15 ^ seed);
                ((h >> 11) as f64 / (1u64 << 53) as f64) * 3.0 - 1.5 + 1e-3
            })
            .collect();
        Tensor::new(Array::from_vec(v, &[rows, cols]).unwrap())
    }

    fn assert_same(a: &Tensor, b: &Tensor) {
        assert_eq!(a.shape(), b.shape());
        let (a, b) = (a.value().to_vec::<f64>(), b.value().to_vec::<f64>());
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-12 * (1.0 + y.abs()), "{x} vs {y}");
        }
    }

    /// Whether `tape`'s Jacobian of `y` takes the batched path (no entry refuses batched rows).
    fn vectorizes(tape: &Tape, y: &Tensor, sources: &[Source]) -> bool {
        let entries = tape.entries_for_sweep("test").unwrap();
        let reach = tape.tracked_sources(sources);
        let seeds = |r: std::ops::Range<usize>| {
            ops::one_hot_seeds(y, &r.map(|i| vec![i]).collect::<Vec<_>>())
        };
        batched_rows(&entries, &reach, y, sources, y.len(), y.len(), seeds)
            .unwrap()
            .is_some()
    }

    /// A function touching every family of vectorizable backward: matrix products (plain and
    /// transposed), broadcasting arithmetic, element-wise math, selects, reductions with and
    /// without kept axes, reshapes, transposes and broadcasts.
    fn composite(x: &Tensor, w: &Tensor) -> Tensor {
        let h = ops::matmul(x, w, false, false).unwrap(); // [4, 3]
        let h = ops::add(&h, &ops::reduce_sum(w, Some(&[0]), false).unwrap()).unwrap();
        let h = ops::relu(&ops::mul(&h, &h.scalar_like(1.5)).unwrap()).unwrap();
        let e = ops::elu(&ops::sub(&h, &h.scalar_like(0.5)).unwrap()).unwrap();
        let t = ops::transpose(&e, &[1, 0]).unwrap(); // [3, 4]
        let p = ops::matmul(&t, x, false, false).unwrap(); // [3, 2]
        let q = ops::matmul(&p, w, true, true).unwrap(); // pᵀ·wᵀ: [2, 2]
        let r = ops::reshape(&ops::tanh(&q).unwrap(), &[4]).unwrap();
        let m = ops::reduce_max(&ops::broadcast_to(&r, &[3, 4]).unwrap(), Some(&[0]), true);
        let s = ops::div(&m.unwrap(), &ops::add(&r, &r.scalar_like(3.0)).unwrap()).unwrap();
        ops::mul(
            &s,
            &ops::reduce_mean(&ops::square(x).unwrap(), None, false).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn a_vectorized_jacobian_takes_one_batched_sweep_and_equals_one_sweep_per_row() {
        let (x, w) = (matrix(4, 2, 1), matrix(2, 3, 2));
        let tape = Tape::new(true, true);
        tape.push();
        tape.watch_tensor(&x);
        tape.watch_tensor(&w);
        let y = composite(&x, &w); // [1, 4]
        tape.pop();
        let sources = [Source::of_tensor(&x), Source::of_tensor(&w)];
        assert!(
            vectorizes(&tape, &y, &sources),
            "every entry here is vectorizable"
        );
        let looped = tape.jacobian(&y, &sources, Rows::OneSweepEach).unwrap();
        for chunk in [None, Some(3), Some(1)] {
            let vectorized = tape
                .jacobian(&y, &sources, Rows::Vectorized(chunk))
                .unwrap();
            for (v, l) in vectorized.iter().zip(&looped) {
                assert_same(v.as_ref().unwrap(), l.as_ref().unwrap());
            }
        }
    }

    #[test]
    fn the_jacobian_of_a_gradient_vectorizes_through_the_recorded_backward_pass() {
        let (x, w) = (matrix(4, 2, 3), matrix(2, 3, 4));
        let outer = Tape::new(true, true);
        outer.push();
        outer.watch_tensor(&w);
        let (inner, y) = taped(false, &w, |w| {
            ops::reduce_sum(&composite(&x, w), None, false).unwrap()
        });
        let g = inner
            .gradient(&[y], &[Source::of_tensor(&w)], None)
            .unwrap()[0]
            .clone()
            .unwrap();
        outer.pop();
        let src = [Source::of_tensor(&w)];
        assert!(vectorizes(&outer, &g, &src));
        let hessian = outer.jacobian(&g, &src, Rows::Vectorized(None)).unwrap();
        let looped = outer.jacobian(&g, &src, Rows::OneSweepEach).unwrap();
        assert_eq!(hessian[0].as_ref().unwrap().shape(), [2, 3, 2, 3]);
        assert_same(hessian[0].as_ref().unwrap(), looped[0].as_ref().unwrap());
    }

    #[test]
    fn an_entry_that_cannot_take_batched_gradients_falls_back_to_one_sweep_per_row() {
        let x = matrix(3, 2, 5);
        // Softmax's backward reduces over a fixed axis: not marked vectorizable.
        let (tape, y) = taped(true, &x, |x| {
            ops::softmax(&ops::exp(x).unwrap(), -1).unwrap()
        });
        let src = [Source::of_tensor(&x)];
        assert!(!vectorizes(&tape, &y, &src));
        let vectorized = tape.jacobian(&y, &src, Rows::Vectorized(None)).unwrap();
        let looped = tape.jacobian(&y, &src, Rows::OneSweepEach).unwrap();
        assert_same(vectorized[0].as_ref().unwrap(), looped[0].as_ref().unwrap());
    }

    #[test]
    fn a_vectorized_batch_jacobian_equals_one_sweep_per_column() {
        let (x, w) = (matrix(4, 2, 6), matrix(2, 3, 7));
        let (tape, y) = taped(true, &x, |x| {
            let h = ops::elu(&ops::matmul(x, &w, false, false).unwrap()).unwrap();
            ops::mul(&h, &ops::reduce_sum(&h, Some(&[1]), true).unwrap()).unwrap()
        });
        let src = Source::of_tensor(&x);
        let looped = tape.batch_jacobian(&y, &src, Rows::OneSweepEach).unwrap();
        assert_eq!(looped.shape(), [4, 3, 2]);
        for chunk in [None, Some(2)] {
            let vectorized = tape
                .batch_jacobian(&y, &src, Rows::Vectorized(chunk))
                .unwrap();
            assert_same(&vectorized, &looped);
        }
    }

    /// `exp(x)` recorded with a backward that notes the thread it runs on.
    fn exp_noting_thread(
        x: &Tensor,
        seen: &Arc<parking_lot::Mutex<Option<std::thread::ThreadId>>>,
    ) -> Tensor {
        // The value of exp(x), recorded only by the entry below.
        let y = Tensor::new(ops::exp(x).unwrap().value().clone());
        let seen = seen.clone();
        let saved = y.clone();
        super::super::record(OP_NOTING_THREAD, &[x], &[&y], move || {
            move |gs: &[Tensor], _: &[bool]| {
                *seen.lock() = Some(std::thread::current().id());
                Ok(vec![Some(ops::mul(&gs[0], &saved)?)])
            }
        });
        y
    }

    const OP_NOTING_THREAD: &str = "ExpNotingThread";

    #[test]
    fn a_large_sweep_nothing_records_runs_on_the_compute_pool_and_others_stay() {
        let me = std::thread::current().id();
        let seen = Arc::new(parking_lot::Mutex::new(None));
        let backward_thread = |x: &Tensor| {
            let (tape, y) = taped(false, x, |x| exp_noting_thread(x, &seen));
            let g = tape.gradient(&[y], &[Source::of_tensor(x)], None).unwrap();
            let g = g[0].as_ref().unwrap().value().to_vec::<f64>();
            assert!(g.iter().all(|v| (v - 0.5f64.exp()).abs() < 1e-12));
            seen.lock().take().expect("the backward ran")
        };
        // Large enough for parallel kernels: on a pool thread.
        let big = Tensor::new(Array::from_vec(vec![0.5f64; 1 << 16], &[1 << 16]).unwrap());
        assert_ne!(backward_thread(&big), me);
        // Too small to gain from the move: here.
        assert_eq!(backward_thread(&scalar(0.5)), me);
        let x = scalar(0.5);
        // Under an outer tape (it records the backward ops): on this thread, and the second
        // derivative still comes out.
        let outer = Tape::new(false, true);
        outer.push();
        outer.watch_tensor(&x);
        let (inner, y) = taped(false, &x, |x| exp_noting_thread(x, &seen));
        let dy = inner
            .gradient(&[y], &[Source::of_tensor(&x)], None)
            .unwrap()[0]
            .clone()
            .unwrap();
        outer.pop();
        assert_eq!(seen.lock().take(), Some(me));
        let d2y = outer
            .gradient(&[dy], &[Source::of_tensor(&x)], None)
            .unwrap();
        assert!(d2y[0].is_some());
    }

    #[test]
    fn batch_jacobian_needs_rank_two_on_both_sides_and_leaves_the_tape_unused() {
        let x = Tensor::new(Array::from_vec(vec![1.0, 2.0], &[2]).unwrap());
        let (tape, y) = taped(false, &x, |x| ops::mul(x, x).unwrap());
        let err = tape
            .batch_jacobian(&y, &Source::of_tensor(&x), Rows::Vectorized(None))
            .unwrap_err();
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
