//! Element-wise fusion in a planned trace: a chain of unary and binary kernels in which each
//! result feeds only the next kernel runs as one node, block by block.
//!
//! Unfused, each kernel of a chain reads its whole input and writes a whole new tensor; past
//! the size of the caches every intermediate goes out to memory and comes back. Fused, the
//! chain runs on one block of [`BLOCK`] elements at a time (the blocks across the compute
//! pool), so that each intermediate is a block that stays in the core's cache, and only the
//! chain's result is written out. Each step still calls the element-wise kernel of its op, on
//! the block, so a fused chain computes exactly the bits the kernels compute one by one: the
//! ops are element by element, and a block of a tensor holds the same elements in the same
//! order.
//!
//! What fuses (see [`fuse`]): a float32 or float64 kernel whose result is used only by the
//! next kernel of the chain (not by any other node, nor returned), with nothing but
//! element-wise work of the same shape: every operand of every step is either a tensor of
//! the chain's shape or a single element, broadcast. No effect (a variable write) may come
//! between two fused kernels, so a fused chain reads the values the unfused one would.

use ferrotape_core::kernels::{self, BinaryOp, UnaryOp};
use ferrotape_core::{Array, DType, Error, Result, Shape};
use rayon::prelude::*;
use smallvec::SmallVec;

use crate::tensor::Tensor;

/// An element-wise kernel, recorded by what it computes (not as a closure) so that a plan can
/// fuse it with its neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elementwise {
    Unary(UnaryOp),
    Binary(BinaryOp),
}

impl Elementwise {
    pub(super) fn name(self) -> &'static str {
        match self {
            Elementwise::Unary(_) => "Unary",
            Elementwise::Binary(_) => "Binary",
        }
    }

    fn apply(self, operands: &[&Array]) -> Result<Array> {
        match self {
            Elementwise::Unary(op) => kernels::unary(op, operands[0]),
            Elementwise::Binary(op) => kernels::binary(op, operands[0], operands[1]),
        }
    }

    fn arity(self) -> usize {
        match self {
            Elementwise::Unary(_) => 1,
            Elementwise::Binary(_) => 2,
        }
    }

    /// The kernel on whole tensors (an unfused node's replay).
    pub(super) fn run(self, args: &[Tensor]) -> Result<Tensor> {
        let operands: SmallVec<[&Array; 2]> = args.iter().map(Tensor::value).collect();
        Ok(Tensor::new(self.apply(&operands)?))
    }
}

/// Where a step of a fused chain takes an operand from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Operand {
    /// The fused node's input of this index.
    Input(usize),
    /// The previous step's result.
    Previous,
}

/// A chain of element-wise steps run as one node: the first step's operands are all inputs,
/// each later step takes the previous step's result and inputs.
#[derive(Clone, Debug)]
pub(super) struct Chain {
    pub(super) steps: Vec<(Elementwise, SmallVec<[Operand; 2]>)>,
}

/// Elements per block of a fused chain: each intermediate block (32 KiB of float32) stays in
/// the core's cache, and each step's kernel call is long enough that its fixed cost (a few
/// hundred nanoseconds) stays small beside its work.
const BLOCK: usize = 8 * 1024;

impl Chain {
    /// A one-step chain for an element-wise node whose `arity` operands are its inputs.
    pub(super) fn single(op: Elementwise) -> Chain {
        let operands = (0..op.arity()).map(Operand::Input).collect();
        Chain {
            steps: vec![(op, operands)],
        }
    }

    /// Appends `op`, whose operands are this chain's result (at the positions in `previous`)
    /// and new inputs numbered from `first_new` on.
    pub(super) fn then(&mut self, op: Elementwise, previous: &[bool], first_new: usize) {
        let mut next = first_new;
        let operands = previous
            .iter()
            .map(|&p| {
                if p {
                    Operand::Previous
                } else {
                    next += 1;
                    Operand::Input(next - 1)
                }
            })
            .collect();
        self.steps.push((op, operands));
    }

    /// Runs the chain on `args`, producing a tensor of `shape` and `dtype` (as traced).
    pub(super) fn run(&self, args: &[Tensor], shape: &Shape, dtype: DType) -> Result<Tensor> {
        let on_host = args.iter().all(|t| t.value().device_memory().is_none());
        let n: usize = shape.iter().product();
        if !on_host || !matches!(dtype, DType::F32 | DType::F64) || n <= 1 {
            return self.run_whole(args);
        }
        // Each input as a flat vector of the chain's length, or a single element: one element
        // broadcast to the chain's shape (a gradient's `BroadcastTo`) is read once, not copied
        // out to every position.
        let flat: Vec<Array> = args
            .iter()
            .map(|t| {
                let v = t.value();
                if v.len() == 1 {
                    v.reshape(&[])
                } else if v.strides().iter().all(|&s| s == 0) {
                    let ones = vec![1; v.rank()];
                    let first = v.slice_view(&vec![0; v.rank()], &ones, &vec![1; v.rank()]);
                    first.contiguous().reshape(&[])
                } else {
                    v.contiguous().reshape(&[n])
                }
            })
            .collect::<Result<_>>()?;
        let block = |start: usize, len: usize| -> Result<Array> {
            let mut previous: Option<Array> = None;
            for (op, operands) in &self.steps {
                let views: SmallVec<[Array; 2]> = operands
                    .iter()
                    .map(|o| match *o {
                        Operand::Previous => previous.clone().expect("a chain's first step"),
                        Operand::Input(k) if flat[k].rank() == 0 => flat[k].clone(),
                        Operand::Input(k) => flat[k].slice_view(&[start], &[len], &[1]),
                    })
                    .collect();
                let refs: SmallVec<[&Array; 2]> = views.iter().collect();
                previous = Some(op.apply(&refs)?);
            }
            Ok(previous.expect("a chain has a step"))
        };
        let value = match dtype {
            DType::F32 => Array::from_vec(run_blocks::<f32>(n, &block)?, shape)?,
            _ => Array::from_vec(run_blocks::<f64>(n, &block)?, shape)?,
        };
        Ok(Tensor::new(value))
    }

    /// The steps one after the other on whole tensors, as the unfused kernels run (on a
    /// device, where blocks would be transfers).
    fn run_whole(&self, args: &[Tensor]) -> Result<Tensor> {
        let mut previous: Option<Array> = None;
        for (op, operands) in &self.steps {
            let result = {
                let refs: SmallVec<[&Array; 2]> = operands
                    .iter()
                    .map(|o| match *o {
                        Operand::Previous => previous.as_ref().expect("a chain's first step"),
                        Operand::Input(k) => args[k].value(),
                    })
                    .collect();
                op.apply(&refs)?
            };
            previous = Some(result);
        }
        Ok(Tensor::new(previous.expect("a chain has a step")))
    }
}

/// A vector of `n` elements, block `i` written from `block(i * BLOCK, len)`, the blocks in
/// parallel when there are several.
fn run_blocks<T: ferrotape_core::Element>(
    n: usize,
    block: &(dyn Fn(usize, usize) -> Result<Array> + Sync),
) -> Result<Vec<T>> {
    // Every element is written by its block (or the call fails and the vector is dropped).
    let mut out: Vec<T> = ferrotape_core::pool::overwritten(n);
    let fill = |(i, chunk): (usize, &mut [T])| -> Result<()> {
        let result = block(i * BLOCK, chunk.len())?;
        let values = result.contiguous_slice::<T>().ok_or_else(|| {
            Error::invalid("FusedElementwise", "a step changed the chain's dtype")
        })?;
        if values.len() != chunk.len() {
            return Err(Error::invalid(
                "FusedElementwise",
                "a step changed the chain's shape",
            ));
        }
        chunk.copy_from_slice(values);
        Ok(())
    };
    if n > BLOCK {
        out.par_chunks_mut(BLOCK).enumerate().try_for_each(fill)?;
    } else {
        fill((0, &mut out[..]))?;
    }
    Ok(out)
}

/// Whether `dtype` is one a chain fuses: float32 or float64.
pub(super) fn fusible_dtype(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}
