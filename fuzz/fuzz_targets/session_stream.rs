//! A whole network connection never panics and never serves an unauthenticated
//! client: arbitrary bytes go through the incremental frame reader, the AUTH gate, the
//! `--no-load` policy and every handler, against a known-good program
//! (`copapy_run::harness`, which checks the invariants). `cargo test -p copapy-run`
//! runs the same harness over generated streams (tests/session_stream.rs).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn program() -> &'static [u8] {
    static P: OnceLock<Vec<u8>> = OnceLock::new();
    P.get_or_init(|| {
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/seed_program.cpy"))
            .expect("fuzz/seed_program.cpy")
    })
}

fuzz_target!(|input: &[u8]| {
    copapy_run::harness::drive(program(), input);
});
