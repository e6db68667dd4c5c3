//! One vector register of f32 lanes, as the hand-blocked kernels use it (the direct
//! convolution's microkernel, Winograd's transforms): the same code is written once over these
//! traits and compiled for AVX-512 (`__m512`, 16 lanes), AVX2 (`__m256`, 8 lanes) and, for the
//! code that needs no fused multiply-add ([`Lanes`] without [`FmaLanes`]), x86-64's baseline
//! SSE2 (`__m128`, 4 lanes), inside `#[target_feature]` functions where the level needs them.
//!
//! Why intrinsics rather than arrays of floats left to the auto-vectoriser: a kernel that keeps
//! a whole tile of values live (Winograd's 6×6 points, a block of accumulators) needs them in
//! registers, and arrays of `[f32; 16]` inside arrays were split into scalars and rebuilt, or
//! spilled a lane group at a time, where a vector type stays one register.
//!
//! Every method is `unsafe`: the CPU must have the type's instructions (the callers check
//! `simd::level()` before entering a function compiled for them).

use std::arch::x86_64::*;

/// A vector of f32 lanes: loads, stores, sums and constant multiples.
///
/// # Safety
/// Every method needs the CPU to have the type's instructions (AVX-512 F for `__m512`, AVX for
/// `__m256`; SSE2, always there on x86-64, for `__m128`). `load` and `store` also need `p`
/// valid for reading, or writing, `WIDTH` consecutive f32s; they need no alignment.
pub(super) trait Lanes: Copy {
    const WIDTH: usize;
    unsafe fn zero() -> Self;
    unsafe fn load(p: *const f32) -> Self;
    unsafe fn add(self, o: Self) -> Self;
    unsafe fn sub(self, o: Self) -> Self;
    /// Every lane times `k`.
    unsafe fn scale(self, k: f32) -> Self;
    unsafe fn store(self, p: *mut f32);
}

/// The lanes of an instruction set with fused multiply-add (AVX2 and AVX-512).
///
/// # Safety
/// As for [`Lanes`], with FMA as well; `splat` needs `p` valid for reading one aligned f32.
pub(super) trait FmaLanes: Lanes {
    /// Every lane `*p`.
    unsafe fn splat(p: *const f32) -> Self;
    /// `a · b + c`, rounded once.
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self;
}

impl Lanes for __m512 {
    const WIDTH: usize = 16;
    #[inline(always)]
    unsafe fn zero() -> Self {
        _mm512_setzero_ps()
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        _mm512_loadu_ps(p)
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        _mm512_add_ps(self, o)
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        _mm512_sub_ps(self, o)
    }
    #[inline(always)]
    unsafe fn scale(self, k: f32) -> Self {
        _mm512_mul_ps(self, _mm512_set1_ps(k))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        _mm512_storeu_ps(p, self)
    }
}

impl Lanes for __m256 {
    const WIDTH: usize = 8;
    #[inline(always)]
    unsafe fn zero() -> Self {
        _mm256_setzero_ps()
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        _mm256_loadu_ps(p)
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        _mm256_add_ps(self, o)
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        _mm256_sub_ps(self, o)
    }
    #[inline(always)]
    unsafe fn scale(self, k: f32) -> Self {
        _mm256_mul_ps(self, _mm256_set1_ps(k))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        _mm256_storeu_ps(p, self)
    }
}

impl FmaLanes for __m512 {
    #[inline(always)]
    unsafe fn splat(p: *const f32) -> Self {
        _mm512_set1_ps(*p)
    }
    #[inline(always)]
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
        _mm512_fmadd_ps(a, b, c)
    }
}

impl FmaLanes for __m256 {
    #[inline(always)]
    unsafe fn splat(p: *const f32) -> Self {
        _mm256_broadcast_ss(&*p)
    }
    #[inline(always)]
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
        _mm256_fmadd_ps(a, b, c)
    }
}

impl Lanes for __m128 {
    const WIDTH: usize = 4;
    #[inline(always)]
    unsafe fn zero() -> Self {
        _mm_setzero_ps()
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        _mm_loadu_ps(p)
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        _mm_add_ps(self, o)
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        _mm_sub_ps(self, o)
    }
    #[inline(always)]
    unsafe fn scale(self, k: f32) -> Self {
        _mm_mul_ps(self, _mm_set1_ps(k))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        _mm_storeu_ps(p, self)
    }
}
