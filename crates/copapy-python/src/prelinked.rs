//! `Target.save(path, code_base=…, data_base=…)`: the program file as a pre-linked image
//! (format version 10 with its pre-linked flag, `copapy_program::placement`), patched on the host for the load
//! addresses of one firmware's buffers.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use copapy_program::{Placement, Program};

/// The placement `code_base=`/`data_base=` ask for: both or neither.
pub fn requested(code_base: Option<u64>, data_base: Option<u64>) -> PyResult<Option<Placement>> {
    match (code_base, data_base) {
        (None, None) => Ok(None),
        (Some(code), Some(data)) => Ok(Some(Placement { code, data })),
        _ => Err(PyValueError::new_err(
            "a pre-linked image needs both code_base= (where the firmware's code buffer is, in \
             executable memory) and data_base= (its data buffer, writable); give both, or \
             neither for a relocatable file",
        )),
    }
}

/// The program file `bytes` pre-linked for `placement` (unchanged without one).
pub fn link(bytes: Vec<u8>, placement: Option<Placement>) -> PyResult<Vec<u8>> {
    let Some(placement) = placement else {
        return Ok(bytes);
    };
    // the file was just encoded from a valid program: decoding it cannot fail
    let program = Program::decode(&bytes)
        .map_err(|e| PyValueError::new_err(format!("internal error: {e}")))?;
    let linked = copapy_runner::prelink::prelink(&program, placement).map_err(|e| {
        PyValueError::new_err(format!(
            "cannot pre-link the program for code at {:#x} and data at {:#x}: {e}",
            placement.code, placement.data
        ))
    })?;
    Ok(linked.encode())
}

/// `program_placement(program) -> (code_base, data_base) | None`: the addresses a
/// pre-linked image must be loaded at (None for a relocatable file), for devices that
/// place programs themselves (the emulator maps memory there).
#[pyfunction]
pub fn program_placement(program: &[u8]) -> PyResult<Option<(u64, u64)>> {
    let view = copapy_program::ProgramView::parse(program)
        .map_err(|e| PyValueError::new_err(format!("invalid program file: {e}")))?;
    Ok(view.placement().map(|p| (p.code, p.data)))
}
