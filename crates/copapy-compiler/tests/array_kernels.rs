//! `stencils/array_kernels.json` is the table of structural array operations
//! (`copapy_compiler::array_kernels::KERNELS`) written out for the stencil generators,
//! which run before the compiler is built: `stencils/gen_arrays.py` and `gen_windows.py`
//! take each stencil's holes from it. This test keeps the file equal to the table;
//! `COPAPY_BLESS=1 cargo test -p copapy-compiler --test array_kernels` rewrites it.

use copapy_compiler::array_kernels::{Kernel, KERNELS};

fn row(k: &Kernel) -> String {
    let params = k.params.map_or("null".to_owned(), |h| h.to_string());
    let stencils: Vec<String> = k
        .classes
        .suffixes()
        .iter()
        .map(|s| format!("\"st_arr_{}{s}\"", k.name))
        .collect();
    format!(
        "  {{\"name\": \"{}\", \"classes\": \"{}\", \"stencils\": [{}], \"holes\": {}, \
         \"scalar\": {}, \"params\": {}, \"shape\": \"{}\", \"grad\": \"{}\"}}",
        k.name,
        k.classes.name(),
        stencils.join(", "),
        k.holes,
        k.scalar,
        params,
        k.shape,
        k.grad,
    )
}

#[test]
fn array_kernels_json_is_the_table() {
    let rows: Vec<String> = KERNELS.iter().map(row).collect();
    let want = format!("[\n{}\n]\n", rows.join(",\n"));
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../stencils/array_kernels.json"
    );
    if std::env::var_os("COPAPY_BLESS").is_some() {
        std::fs::write(path, &want).expect("stencils/ is writable");
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "stencils/array_kernels.json differs from copapy_compiler::array_kernels::KERNELS: \
         rewrite it with COPAPY_BLESS=1 cargo test -p copapy-compiler --test array_kernels"
    );
}
