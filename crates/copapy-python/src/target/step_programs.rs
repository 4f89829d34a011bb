//! One-step programs for the instruction bounds of array steps.
//!
//! An array step's loops run as often as its shape (fixed when the program is compiled)
//! says, never by its element values (`stencils/branch_allowlist.py`), so one run of
//! the step alone, with the program's data (its shape words), takes the step's
//! instruction count. `copapy._bounds` runs these programs in the emulator.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use copapy_compiler::link::link;
use copapy_compiler::targets::Target as TargetSpec;

use super::{backend, Loaded};

/// Per step of `loaded` (loop marks not counted): the program file of that step alone
/// followed by `st_return` for an array step (`st_arr_*`), None for every other step.
pub(super) fn array_steps<'py>(
    py: Python<'py>,
    spec: &'static TargetSpec,
    loaded: &Loaded,
) -> PyResult<Bound<'py, PyList>> {
    let db = &backend(spec)?.db;
    let out = PyList::empty(py);
    for step in &loaded.linked {
        let is_array = db
            .get(step.stencil)
            .is_some_and(|st| st.name.starts_with("st_arr_"));
        if !is_array {
            out.append(py.None())?;
            continue;
        }
        let program =
            link(db, std::slice::from_ref(step), loaded.program.data.clone()).map_err(|e| {
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "linking one array step alone for its instruction count failed: {e:?}"
                ))
            })?;
        out.append(PyBytes::new(py, &program.encode()))?;
    }
    Ok(out)
}
