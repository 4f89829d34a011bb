//! `copapy._core.grad`: reverse-mode differentiation of a traced value (see
//! `copapy_compiler::autodiff`). The Python layer (`copapy/_autograd.py`) flattens
//! containers into the list of values this takes and rebuilds the result's structure.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use copapy_compiler::autodiff;
use copapy_compiler::Value;

use crate::array_ops::PyArrayNode;
use crate::convert::type_name;
use crate::value::PyValue;

/// `grad(x, y)`: the derivative of the float value `x` with respect to each value in
/// the list `y`, as a list of values (a constant 0.0 value where `x` does not depend on
/// it). Copapy's names: `x` is differentiated, `y` are the variables.
#[pyfunction]
#[pyo3(signature = (x, y))]
pub fn grad(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<Vec<Py<PyAny>>> {
    let (y, xs) = (x, y);
    let y = y.cast::<PyValue>().map_err(|_| {
        PyTypeError::new_err(format!(
            "cp.grad needs a copapy value to differentiate, got {}",
            type_name(y)
        ))
    })?;
    let mut wrt: Vec<Value> = Vec::new();
    for item in xs.try_iter()? {
        let item = item?;
        if let Ok(a) = item.cast::<PyArrayNode>() {
            wrt.push(a.get().value().clone());
            continue;
        }
        let v = item.cast::<PyValue>().map_err(|_| {
            PyTypeError::new_err(format!(
                "cp.grad differentiates with respect to copapy values, got {}",
                type_name(&item)
            ))
        })?;
        wrt.push(v.get().value().clone());
    }
    let y = y.get().value().clone();
    let grads = autodiff::grad(&y, &wrt).map_err(|e| PyTypeError::new_err(e.message))?;
    grads
        .into_iter()
        .map(|v| match copapy_compiler::array::len_of(&v) {
            Some(_) => Ok(Py::new(py, PyArrayNode::new(v))?.into_any()),
            None => Ok(Py::new(py, PyValue::from_graph(v))?.into_any()),
        })
        .collect()
}
