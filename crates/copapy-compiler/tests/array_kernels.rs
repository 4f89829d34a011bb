//! `stencils/array_kernels.json` is the table of structural array operations
//! (`copapy_compiler::array_kernels::KERNELS`) written out for the stencil generators,
//! which run before the compiler is built: `stencils/gen_arrays.py` and `gen_windows.py`
//! take each stencil's holes from it. The names Python may build (`_core.array_kernel`)
//! are written as Literal types to `python/copapy/_array_kernels.py` for the stubs. This
//! test keeps both files equal to the table; `COPAPY_BLESS=1 cargo test -p
//! copapy-compiler --test array_kernels` rewrites them.

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

mod common;

/// `file` must be the table written out.
fn check_written(file: &str, want: &str) {
    common::check_written(
        file,
        want,
        "copapy_compiler::array_kernels::KERNELS",
        "array_kernels",
    );
}

#[test]
fn array_kernels_json_is_the_table() {
    let rows: Vec<String> = KERNELS.iter().map(row).collect();
    check_written(
        "stencils/array_kernels.json",
        &format!("[\n{}\n]\n", rows.join(",\n")),
    );
}

fn literal(scalar: bool) -> String {
    let names: Vec<String> = KERNELS
        .iter()
        .filter(|k| k.public && k.scalar == scalar)
        .map(|k| format!("    \"{}\",\n", k.name))
        .collect();
    format!("Literal[\n{}]", names.concat())
}

#[test]
fn python_literals_are_the_table() {
    let text = format!(
        "\"\"\"The structural array operations Python builds with `_core.array_kernel`: \
         written from\ncrates/copapy-compiler/src/array_kernels.rs by its cargo test \
         (tests/array_kernels.rs), do not edit.\n\"\"\"\n\nfrom typing import Literal\n\n\
         # the operations whose result is a scalar value\nScalarKernel = {}\n\
         # the operations whose result is an array\nArrayKernel = {}\n",
        literal(true),
        literal(false)
    );
    check_written("python/copapy/_array_kernels.py", &text);
}
