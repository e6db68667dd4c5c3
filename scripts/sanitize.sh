#!/usr/bin/env bash
# Runs ferrotape-core's tests (its unit tests: buffers, the pool, the allocator, the SIMD
# kernels, Winograd and the rest; and its integration tests) under AddressSanitizer, once at each
# SIMD level this CPU has (FERROTAPE_SIMD=baseline, avx2, avx512), so that the unsafe code and
# the AVX2/AVX-512 paths run with every load and store checked. Any ASan report (out-of-bounds,
# use-after-free, leak) or test failure fails the script.
#
# Needs a nightly toolchain (-Zsanitizer is unstable); without one it says so and exits 0.
# Miri is not run: this machine's nightly has no miri or rust-src component and rustup's
# servers cannot be reached; Miri could not run the AVX2/AVX-512 paths either.
#
# FERROTAPE_SANITIZE_BUDGET_S (default 900: a cold build took 285 s on an idle 2-core machine,
# 319 s on a loaded one) bounds the build and the runs together; running
# past it fails. The build goes to target/asan, so the normal builds stay as they are.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

budget=${FERROTAPE_SANITIZE_BUDGET_S:-900}
if ! cargo +nightly -V >/dev/null 2>&1; then
    echo "sanitize.sh: skipped: no nightly toolchain installed (rustup toolchain list)"
    exit 0
fi
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
if ! ls "$(rustc +nightly --print target-libdir)"/librustc-nightly_rt.asan.a >/dev/null 2>&1; then
    echo "sanitize.sh: skipped: the nightly toolchain has no AddressSanitizer runtime for $host"
    exit 0
fi

# The levels this CPU has, as ferrotape's simd::detected() decides them.
levels=(baseline)
if [ -r /proc/cpuinfo ]; then
    flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
    has() { for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done; }
    if has avx2 fma; then levels+=(avx2); fi
    if has avx512f avx512bw avx512dq avx512vl fma; then levels+=(avx512); fi
fi

export CARGO_TARGET_DIR=target/asan
export RUSTFLAGS="-Zsanitizer=address"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1}"
# One known leak, by design: a thread that joined the compute pool (threads::
# join_pool_from_this_thread, rayon's use_current_thread) keeps rayon's per-thread state
# (about 1.9 KB) in a thread-local that nothing frees when the thread exits. In the product the
# joining thread is Python's main thread, which lives as long as the process; in the test it is
# a test thread that ends first. Only allocations made inside that call are left out.
suppressions=$(mktemp)
trap 'rm -f "$suppressions"' EXIT
echo "leak:ferrotape_core::threads::join_pool_from_this_thread" >"$suppressions"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$suppressions:print_suppressions=0}"
# --target keeps the sanitizer off build scripts and proc macros (they cannot load the runtime).
cargo_test=(cargo +nightly test --quiet -p ferrotape-core --lib --tests --target "$host")

start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
run_within_budget() {
    local rc=0
    if [ "$(left)" -le 0 ]; then
        echo "sanitize.sh: over the ${budget}s budget (FERROTAPE_SANITIZE_BUDGET_S)" >&2
        return 1
    fi
    timeout "$(left)" "$@" || rc=$?
    if [ "$rc" -eq 124 ]; then
        echo "sanitize.sh: over the ${budget}s budget (FERROTAPE_SANITIZE_BUDGET_S)" >&2
    fi
    return "$rc"
}

echo "sanitize.sh: building ferrotape-core's tests with -Zsanitizer=address (budget ${budget}s)"
run_within_budget "${cargo_test[@]}" --no-run
echo "sanitize.sh: built in $((SECONDS - start))s; levels this CPU has: ${levels[*]}"
for level in "${levels[@]}"; do
    t0=$SECONDS
    log=$(mktemp)
    rc=0
    run_within_budget env FERROTAPE_SIMD="$level" "${cargo_test[@]}" >"$log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] || grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer" "$log"; then
        cat "$log"
        echo
        rm -f "$log"
        echo "sanitize.sh: FERROTAPE_SIMD=$level failed (exit $rc)" >&2
        exit 1
    fi
    summary=$(grep -o '[0-9]* passed; [0-9]* failed; [0-9]* ignored' "$log" | awk \
        '{p += $1; f += $3; i += $5} END {print p " passed, " f " failed, " i " ignored"}')
    rm -f "$log"
    echo "sanitize.sh: FERROTAPE_SIMD=$level: ferrotape-core lib + integration tests:" \
        "$summary, no ASan report ($((SECONDS - t0))s)"
done
echo "sanitize.sh: clean at ${levels[*]} in $((SECONDS - start))s"
