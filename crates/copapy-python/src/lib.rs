//! `copapy._core`: the Rust side of the Python package.
//!
//! [`value::PyValue`] traces operations into the compiler's graph; [`target::Target`]
//! compiles, loads and runs programs. The Python package (`python/copapy`) re-exports
//! these and adds the functions that also accept plain numbers.

use pyo3::prelude::*;

use copapy_compiler::Op;

mod convert;
mod target;
mod value;

use value::PyValue;

/// `sqrt(x)` for a value (IEEE square root, exact).
#[pyfunction]
fn sqrt(py: Python<'_>, x: &Bound<'_, PyValue>) -> PyResult<Py<PyAny>> {
    value::math_unary(py, x, Op::Sqrt)
}

/// `sin(x)` for a value (copapy's own float32 sine, see docs/math.md).
#[pyfunction]
fn sin(py: Python<'_>, x: &Bound<'_, PyValue>) -> PyResult<Py<PyAny>> {
    value::math_unary(py, x, Op::Sin)
}

/// `cos(x)` for a value (copapy's own float32 cosine, see docs/math.md).
#[pyfunction]
fn cos(py: Python<'_>, x: &Bound<'_, PyValue>) -> PyResult<Py<PyAny>> {
    value::math_unary(py, x, Op::Cos)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyValue>()?;
    m.add_class::<target::Target>()?;
    m.add_function(wrap_pyfunction!(sqrt, m)?)?;
    m.add_function(wrap_pyfunction!(sin, m)?)?;
    m.add_function(wrap_pyfunction!(cos, m)?)?;
    Ok(())
}
