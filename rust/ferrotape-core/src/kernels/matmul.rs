//! Batched matrix multiplication through the `gemm` crate (run-time AVX-512/AVX2 dispatch,
//! strided operands, so transposed inputs are read in place without a copy).

use gemm::Parallelism;

use super::cast;
use crate::{
    broadcast_shapes, for_each_offset, Array, Buffer, DType, Element, Error, Result, Shape,
};

/// Work (m·n·k) above which gemm may use rayon's threads.
const GEMM_PARALLEL_WORK: usize = 64 * 64 * 64;

fn swap_last_two(a: &Array) -> Array {
    let r = a.rank();
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    a.transpose(&perm).expect("a valid permutation")
}

struct Plan {
    out_shape: Shape,
    batch: Shape,
    m: usize,
    n: usize,
    k: usize,
    a: Array,
    b: Array,
}

fn plan(a: &Array, b: &Array, transpose_a: bool, transpose_b: bool) -> Result<Plan> {
    const OP: &str = "MatMul";
    if a.rank() < 2 || b.rank() < 2 {
        return Err(Error::invalid(
            OP,
            format!(
                "inputs must have rank >= 2, received shapes {:?} and {:?}",
                a.shape(),
                b.shape()
            ),
        ));
    }
    let a = if transpose_a {
        swap_last_two(a)
    } else {
        a.clone()
    };
    let b = if transpose_b {
        swap_last_two(b)
    } else {
        b.clone()
    };
    let (ra, rb) = (a.rank(), b.rank());
    let (m, k) = (a.shape()[ra - 2], a.shape()[ra - 1]);
    let (k2, n) = (b.shape()[rb - 2], b.shape()[rb - 1]);
    if k != k2 {
        return Err(Error::invalid(
            OP,
            format!(
                "matrix size-incompatible: In[0]: {:?}, In[1]: {:?} (inner dimensions {k} and {k2} differ)",
                a.shape(), b.shape()
            ),
        ));
    }
    let batch = broadcast_shapes(OP, &a.shape()[..ra - 2], &b.shape()[..rb - 2])?;
    let mut out_shape = batch.clone();
    out_shape.extend([m, n]);
    // The output can be far larger than both inputs ([m, 0] @ [0, n]).
    crate::check_alloc(OP, a.dtype(), &out_shape)?;
    let mut a_full = batch.clone();
    a_full.extend([m, k]);
    let mut b_full = batch.clone();
    b_full.extend([k, n]);
    Ok(Plan {
        out_shape,
        m,
        n,
        k,
        a: a.broadcast_to(&a_full)?,
        b: b.broadcast_to(&b_full)?,
        batch,
    })
}

fn batch_offsets(p: &Plan) -> Vec<(usize, usize)> {
    let nb = p.batch.len();
    let mut offs = Vec::new();
    for_each_offset(
        &p.batch,
        [&p.a.strides()[..nb], &p.b.strides()[..nb]],
        [p.a.offset(), p.b.offset()],
        |[i, j]| offs.push((i, j)),
    );
    offs
}

/// The products to run, as (offset in `a`, offset in `b`), and the rows of each. When every
/// batch multiplies the same `b` and each batch's rows of `a` continue where the previous
/// batch's ended (a batched Jacobian's `[40, 7, 6] @ [6, 8]`, whose `b` is a layer's kernel),
/// the batches are one product of all their rows: gemm's fixed cost per call was most of such
/// tiny products' time (107 ns for each 7×6 by 6×8 product), and the output is laid out the
/// same either way.
fn folded_batches(p: &Plan) -> (Vec<(usize, usize)>, usize) {
    let offsets = batch_offsets(p);
    let ra = p.a.rank();
    let a_rows = p.m as isize * p.a.strides()[ra - 2];
    let foldable = offsets.len() > 1
        && offsets.windows(2).all(|w| {
            let ((a0, b0), (a1, b1)) = (w[0], w[1]);
            b1 == b0 && a1 as isize - a0 as isize == a_rows
        });
    if foldable {
        (vec![offsets[0]], p.m * offsets.len())
    } else {
        (offsets, p.m)
    }
}

/// Multiply-adds per gemm call when a product is split into row blocks so that Ctrl-C can stop
/// it between blocks (about a tenth of a second on one core; products below it are one call).
/// Not less: each call packs the right operand again, and at 2^30 a 2048² product ran as
/// eight calls, 8-10% slower than one. Tests use tiny blocks so that the split itself is
/// checked.
const BLOCK_WORK: usize = if cfg!(test) { 1 << 12 } else { 1 << 33 };
/// The fewest rows per block, so that each call is still large enough for gemm.
const MIN_BLOCK_ROWS: usize = if cfg!(test) { 2 } else { 256 };

fn matmul_gemm<T: Element + num_traits::Zero + num_traits::One + 'static>(
    p: &Plan,
    da: &[T],
    db: &[T],
) -> Result<Vec<T>> {
    let (m, n, k) = (p.m, p.n, p.k);
    let mut out = crate::alloc_zeros::<T>("MatMul", &p.out_shape)?;
    if m == 0 || n == 0 || k == 0 {
        return Ok(out);
    }
    let (offsets, m) = folded_batches(p);
    let ra = p.a.rank();
    let (a_rs, a_cs) = (p.a.strides()[ra - 2], p.a.strides()[ra - 1]);
    let (b_rs, b_cs) = (p.b.strides()[ra - 2], p.b.strides()[ra - 1]);
    let parallelism = if m.saturating_mul(n).saturating_mul(k) >= GEMM_PARALLEL_WORK {
        Parallelism::Rayon(rayon::current_num_threads())
    } else {
        Parallelism::None
    };
    let rows = (BLOCK_WORK / n.saturating_mul(k).max(1))
        .max(MIN_BLOCK_ROWS)
        .min(m);
    // A transposed `b` (read column by column) with fewer rows than columns in the product,
    // as in a dense layer's input gradient `dy @ kernelᵀ`: gemm ran that layout at a third of
    // its speed (64×256 by 256×576: 127 µs against 45 µs for a row-major `b`), also when
    // told to write the output through transposed strides, but the transposed product
    // `b`ᵀ·`a`ᵀ into a buffer of its own at full speed (50 µs). That product is then
    // transposed into place, which costs less than a transposed copy of `b` while the
    // product has fewer rows than the inner dimension.
    let transposed_product = b_rs == 1 && b_cs != 1 && m < n && m < k;
    let mut product_t: Vec<T> = Vec::new();
    for (bi, (oa, ob)) in offsets.into_iter().enumerate() {
        for r0 in (0..m).step_by(rows) {
            crate::interrupt::check("MatMul")?;
            let block = rows.min(m - r0);
            let dst = out[(bi * m + r0) * n..].as_mut_ptr();
            // SAFETY: `plan` checked the shapes; the offsets and strides describe elements
            // inside `da` and `db` (views of their buffers), row `r0` of this batch's `a` starts
            // `r0 * a_rs` elements after `oa`, and `dst` has room for `block * n` elements.
            let (a_block, b_ptr) = unsafe {
                (
                    da.as_ptr().offset(oa as isize + r0 as isize * a_rs),
                    db.as_ptr().add(ob),
                )
            };
            // SAFETY: the pointers and strides describe the same elements in either order;
            // the transposed product writes `n * block` elements of its own buffer.
            unsafe {
                if transposed_product {
                    // (block × n) = (n × block)ᵀ: `b`ᵀ on the left, `a`ᵀ on the right.
                    product_t.resize(n * block, T::zero());
                    gemm::gemm(
                        n,
                        block,
                        k,
                        product_t.as_mut_ptr(),
                        1,
                        block as isize,
                        false,
                        b_ptr,
                        b_rs,
                        b_cs,
                        a_block,
                        a_rs,
                        a_cs,
                        T::zero(),
                        T::one(),
                        false,
                        false,
                        false,
                        parallelism,
                    );
                    let rows_out = &mut out[(bi * m + r0) * n..][..block * n];
                    transpose_into(&product_t, block, rows_out);
                } else {
                    gemm::gemm(
                        block,
                        n,
                        k,
                        dst,
                        1,
                        n as isize,
                        false,
                        a_block,
                        a_cs,
                        a_rs,
                        b_ptr,
                        b_cs,
                        b_rs,
                        T::zero(),
                        T::one(),
                        false,
                        false,
                        false,
                        parallelism,
                    );
                }
            }
        }
    }
    Ok(out)
}

/// `t` (`n × rows`, row-major) transposed into `out` (`rows × n`), in square tiles so that
/// both sides are read and written a few cache lines at a time.
fn transpose_into<T: Copy>(t: &[T], rows: usize, out: &mut [T]) {
    const TILE: usize = 16;
    let n = out.len() / rows;
    assert_eq!(t.len(), n * rows, "transpose_into: sizes");
    for i0 in (0..rows).step_by(TILE) {
        for j0 in (0..n).step_by(TILE) {
            for i in i0..(i0 + TILE).min(rows) {
                for j in j0..(j0 + TILE).min(n) {
                    // SAFETY: i < rows and j < n, and both slices hold n * rows elements.
                    unsafe { *out.get_unchecked_mut(i * n + j) = *t.get_unchecked(j * rows + i) };
                }
            }
        }
    }
}

fn matmul_int<
    T: Element + num_traits::PrimInt + num_traits::WrappingAdd + num_traits::WrappingMul,
>(
    p: &Plan,
    da: &[T],
    db: &[T],
) -> Result<Vec<T>> {
    let (m, n, k) = (p.m, p.n, p.k);
    let ra = p.a.rank();
    let (a_rs, a_cs) = (p.a.strides()[ra - 2], p.a.strides()[ra - 1]);
    let (b_rs, b_cs) = (p.b.strides()[ra - 2], p.b.strides()[ra - 1]);
    let mut out = crate::alloc::<T>("MatMul", &p.out_shape)?;
    for (oa, ob) in batch_offsets(p) {
        for i in 0..m {
            crate::interrupt::check("MatMul")?;
            for j in 0..n {
                let mut acc = T::zero();
                for l in 0..k {
                    let x = da[(oa as isize + i as isize * a_rs + l as isize * a_cs) as usize];
                    let y = db[(ob as isize + l as isize * b_rs + j as isize * b_cs) as usize];
                    acc = acc.wrapping_add(&x.wrapping_mul(&y));
                }
                out.push(acc);
            }
        }
    }
    Ok(out)
}

/// `a @ b` over the last two axes, batch axes broadcast; `transpose_*` flips an operand's last
/// two axes first (read in place).
pub fn matmul(a: &Array, b: &Array, transpose_a: bool, transpose_b: bool) -> Result<Array> {
    if let Some(r) =
        crate::device::dispatch([a, b], |d, [a, b]| d.matmul(a, b, transpose_a, transpose_b))
    {
        return r;
    }
    if a.dtype() != b.dtype() {
        return Err(Error::mismatch("MatMul", a.dtype(), b.dtype()));
    }
    let p = plan(a, b, transpose_a, transpose_b)?;
    let buf = match (p.a.buffer(), p.b.buffer()) {
        (Buffer::F32(x), Buffer::F32(y)) => Buffer::F32(matmul_gemm(&p, x, y)?.into()),
        (Buffer::F64(x), Buffer::F64(y)) => Buffer::F64(matmul_gemm(&p, x, y)?.into()),
        (Buffer::I32(x), Buffer::I32(y)) => Buffer::I32(matmul_int(&p, x, y)?.into()),
        (Buffer::I64(x), Buffer::I64(y)) => Buffer::I64(matmul_int(&p, x, y)?.into()),
        (Buffer::F16(_), _) | (Buffer::BF16(_), _) => {
            let r = matmul(
                &cast(a, DType::F32)?,
                &cast(b, DType::F32)?,
                transpose_a,
                transpose_b,
            )?;
            return cast(&r, a.dtype());
        }
        _ => return Err(Error::unsupported("MatMul", a.dtype(), "a numeric dtype")),
    };
    Array::from_buffer(buf, &p.out_shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_matches_by_hand_with_transposes_and_batches() {
        let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
        let b = Array::from_vec(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]).unwrap();
        assert_eq!(
            matmul(&a, &b, false, false).unwrap().to_vec::<f32>(),
            vec![4.0, 5.0, 10.0, 11.0]
        );
        // a^T a, read through strides.
        let ata = matmul(&a, &a, true, false).unwrap();
        assert_eq!(ata.shape(), &[3, 3]);
        assert_eq!(ata.to_vec::<f32>()[0], 17.0);
        let batched = Array::from_vec(vec![1.0f64; 2 * 2 * 3], &[2, 2, 3]).unwrap();
        let w = Array::from_vec(vec![1.0f64; 3 * 4], &[3, 4]).unwrap();
        let r = matmul(&batched, &w, false, false).unwrap();
        assert_eq!(r.shape(), &[2, 2, 4]);
        assert!(r.to_vec::<f64>().iter().all(|&x| x == 3.0));
        let ai = Array::from_vec(vec![1i32, 2, 3, 4], &[2, 2]).unwrap();
        assert_eq!(
            matmul(&ai, &ai, false, false).unwrap().to_vec::<i32>(),
            vec![7, 10, 15, 22]
        );
    }

    #[test]
    fn products_split_into_row_blocks_match_the_naive_sum() {
        // 10 rows of k = n = 32: blocks of 4, 4 and 2 rows (BLOCK_WORK is tiny in tests), in
        // two batches, with `a` transposed so that the row stride is not the row length.
        let (batches, m, k, n) = (2, 10, 32, 32);
        let a_vals: Vec<f64> = (0..batches * k * m).map(|i| (i % 7) as f64 - 3.0).collect();
        let b_vals: Vec<f64> = (0..k * n).map(|i| (i % 5) as f64 * 0.5).collect();
        let a = Array::from_vec(a_vals.clone(), &[batches, k, m]).unwrap();
        let b = Array::from_vec(b_vals.clone(), &[k, n]).unwrap();
        let got = matmul(&a, &b, true, false).unwrap().to_vec::<f64>();
        for bi in 0..batches {
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k)
                        .map(|l| a_vals[(bi * k + l) * m + i] * b_vals[l * n + j])
                        .sum();
                    assert_eq!(
                        got[(bi * m + i) * n + j],
                        want,
                        "batch {bi} row {i} col {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_operand_layout_matches_the_naive_sum() {
        // Each of a and b stored as is or transposed, with fewer rows than columns in the
        // product (a transposed b then goes through the transposed product) and more, in two
        // batches split into row blocks.
        let (batches, k) = (2, 32);
        for (m, n) in [(10, 40), (40, 10), (9, 9)] {
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let a_vals: Vec<f64> = (0..batches * m * k).map(|i| (i % 7) as f64 - 3.0).collect();
                let b_vals: Vec<f64> = (0..k * n).map(|i| (i % 5) as f64 * 0.5 - 1.0).collect();
                let a_shape = if ta { [batches, k, m] } else { [batches, m, k] };
                let b_shape = if tb { [n, k] } else { [k, n] };
                let a = Array::from_vec(a_vals.clone(), &a_shape).unwrap();
                let b = Array::from_vec(b_vals.clone(), &b_shape).unwrap();
                let got = matmul(&a, &b, ta, tb).unwrap();
                assert_eq!(got.shape(), &[batches, m, n]);
                let got = got.to_vec::<f64>();
                let a_at = |bi: usize, i: usize, l: usize| {
                    a_vals[bi * m * k + if ta { l * m + i } else { i * k + l }]
                };
                let b_at = |l: usize, j: usize| b_vals[if tb { j * k + l } else { l * n + j }];
                for bi in 0..batches {
                    for i in 0..m {
                        for j in 0..n {
                            let want: f64 = (0..k).map(|l| a_at(bi, i, l) * b_at(l, j)).sum();
                            assert_eq!(
                                got[(bi * m + i) * n + j],
                                want,
                                "{m}x{n} ta {ta} tb {tb}: batch {bi} row {i} col {j}"
                            );
                        }
                    }
                }
            }
        }
    }
}
