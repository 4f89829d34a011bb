//! `copapy-run` carried by the extension module, so that every kind of Python install
//! (`pip install .`, `pip install -e .`, a wheel) has the native runner: the `copapy-run`
//! console script and `Target(runner="process")` call [`run_cli`] in a process of their
//! own. maturin cannot put a second binary into a wheel that holds a PyO3 module
//! (docs/copapy-run.md, "Where copapy-run comes from").

use pyo3::prelude::*;

/// Runs the `copapy-run` command line `args` (without the program name) in this process
/// and returns its exit code; the runner's own loop runs with the GIL released. A panic
/// (none is expected) is reported by Rust's hook on stderr and becomes exit code 101, as
/// for the binary, instead of a Python exception.
#[pyfunction]
pub fn run_cli(py: Python<'_>, args: Vec<String>) -> i32 {
    py.detach(|| {
        std::panic::catch_unwind(|| copapy_run::entry::main_with_args(&args)).unwrap_or(101)
    })
}

/// What `copapy-run --version` prints for the runner in this module; a runner found
/// elsewhere is used only if it prints the same line.
#[pyfunction]
pub fn runner_version() -> String {
    copapy_run::entry::version_line()
}
