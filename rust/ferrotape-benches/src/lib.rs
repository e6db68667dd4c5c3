//! Benchmarks only: see `benches/kernels.rs` and run `cargo bench -p ferrotape-benches`.
