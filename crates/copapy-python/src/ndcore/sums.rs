//! The documented summation order over leaves, with Copapy's sparse-constant rules.

use pyo3::prelude::*;
use pyo3::types::PyFloat;
use pyo3::{intern, IntoPyObjectExt};

use super::leaves::is_traced;
use crate::shape;

fn tree_sum<'py>(py: Python<'py>, terms: Vec<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    match shape::tree_fold(terms, |a, b| a.add(b))? {
        Some(s) => Ok(s),
        None => 0i32.into_bound_py_any(py),
    }
}

fn is_float_value(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(x.getattr(intern!(x.py(), "dtype"))?.extract::<String>()? == "float")
}

/// The tree sum of the traced terms plus the Python sum of the constant terms (added once,
/// last; a constant 0 is left out when that keeps the type, as the optimiser would).
fn combine<'py>(
    py: Python<'py>,
    traced: Vec<Bound<'py, PyAny>>,
    consts: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    if consts.is_empty() {
        return tree_sum(py, traced);
    }
    let mut c = 0i32.into_bound_py_any(py)?;
    for k in consts {
        c = c.add(k)?;
    }
    if traced.is_empty() {
        return Ok(c);
    }
    let s = tree_sum(py, traced)?;
    if c.eq(0)? && (!c.is_exact_instance_of::<PyFloat>() || is_float_value(&s)?) {
        return Ok(s);
    }
    s.add(c)
}

/// Sum of values and numbers in the documented order: traced terms by the tree, numbers
/// in Python, their sum added once at the end.
#[pyfunction]
pub fn nd_sum<'py>(py: Python<'py>, terms: Vec<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let (traced, consts): (Vec<_>, Vec<_>) = terms.into_iter().partition(is_traced);
    combine(py, traced, consts)
}

/// Sum of the products `a[i] * b[i]` in the documented order. A constant factor 0 drops
/// its term and a constant 1 keeps the other factor (when that keeps its type), so sparse
/// constant matrices cost only their non-zero entries.
#[pyfunction]
pub fn nd_dot<'py>(
    py: Python<'py>,
    a: Vec<Bound<'py, PyAny>>,
    b: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (mut traced, mut consts) = (Vec::new(), Vec::new());
    for (x, y) in a.into_iter().zip(b) {
        let (x, y) = match (is_traced(&x), is_traced(&y)) {
            (true, true) => {
                traced.push(x.mul(y)?);
                continue;
            }
            (false, false) => {
                consts.push(x.mul(y)?);
                continue;
            }
            (true, false) => (y, x),
            (false, true) => (x, y),
        };
        // x is a number, y a traced value
        let dtype: String = y.getattr(intern!(py, "dtype"))?.extract()?;
        if x.eq(0)? {
            let zero = if dtype == "float" {
                0.0f64.into_bound_py_any(py)?
            } else {
                0i32.into_bound_py_any(py)?
            };
            consts.push(x.mul(zero)?);
        } else if x.eq(1)? && (!x.is_exact_instance_of::<PyFloat>() || dtype == "float") {
            traced.push(if dtype == "bool" { y.mul(1)? } else { y });
        } else {
            traced.push(y.mul(x)?);
        }
    }
    combine(py, traced, consts)
}
