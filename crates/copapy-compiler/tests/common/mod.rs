//! What the integration tests share: running programs on the host, and checking a Rust
//! table written out for the scripts. Not every test uses every helper.
#![allow(dead_code)]

use copapy_compiler::compile::read_bits;
use copapy_compiler::select::StencilTable;
use copapy_compiler::stencil_db::StencilDb;
use copapy_compiler::{compile, Value};
use copapy_runner::LoadedProgram;

static OBJECT: &[u8] = include_bytes!("../../../../stencils/x86_64.o");

/// Compiles `outputs` for x86_64 and runs the program once on the host: the outputs'
/// data offsets, the data after the run and the stencil names of the steps.
pub fn run_program(outputs: &[Value]) -> (Vec<u32>, Vec<u8>, Vec<String>) {
    let db = StencilDb::parse(OBJECT).expect("stencils/x86_64.o parses");
    let table = StencilTable::new(&db);
    let compiled = compile(&db, &table, outputs).expect("compiles");
    let mut loaded = LoadedProgram::load(&compiled.program).expect("loads");
    loaded.run();
    let names = compiled
        .stencils
        .iter()
        .map(|&(id, _)| db.get(id).expect("known stencil").name.clone())
        .collect();
    (compiled.outputs, loaded.data().to_vec(), names)
}

/// The scalar outputs' bits after one run and the stencil names of the steps.
pub fn run(outputs: &[Value]) -> (Vec<u32>, Vec<String>) {
    let (at, data, names) = run_program(outputs);
    (at.iter().map(|&o| read_bits(&data, o)).collect(), names)
}

/// How many of the steps `names` start with `prefix`.
pub fn count(names: &[String], prefix: &str) -> usize {
    names.iter().filter(|n| n.starts_with(prefix)).count()
}

/// The file `file` (a path from the repository root) must read `want`, the Rust table
/// `table` written out; with `COPAPY_BLESS=1` it is written first.
pub fn check_written(file: &str, want: &str, table: &str, test: &str) {
    let path = format!("{}/../../{file}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("COPAPY_BLESS").is_some() {
        std::fs::write(&path, want).expect("the checkout is writable");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{file} differs from {table}: rewrite it with \
         COPAPY_BLESS=1 cargo test -p copapy-compiler --test {test}"
    );
}
