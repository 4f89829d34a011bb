//! `cp.fori_loop` / `cp.scan` (python/copapy/_loops.py): the two calls around tracing a
//! loop body once, see `copapy_compiler::loops`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use copapy_compiler::graph::ScalarType;
use copapy_compiler::loops;
use copapy_compiler::Value;

use crate::value::{operand, PyValue};

fn wrap(py: Python<'_>, v: Value) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, PyValue::from_graph(v))?.into_any())
}

/// A carried value as a graph value: a `value`, or a Python number as a constant of
/// its own type (`beside` decides how an int next to a float carry is read).
fn carried(obj: &Bound<'_, PyAny>, beside: ScalarType, what: &str) -> PyResult<Value> {
    operand(obj, beside)?.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{what} is a {}: a loop carries values and numbers (and containers of them)",
            obj.get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string())
        ))
    })
}

/// The placeholders to trace a body on, for these initial carried values (values or
/// numbers): `(index, carries)`, the int counter and one value per carry, of its type.
#[pyfunction]
pub fn loop_begin(
    py: Python<'_>,
    inits: Vec<Bound<'_, PyAny>>,
) -> PyResult<(Py<PyAny>, Vec<Py<PyAny>>)> {
    let mut types = Vec::with_capacity(inits.len());
    for (k, i) in inits.iter().enumerate() {
        types.push(carried(i, ScalarType::Int, &format!("carried leaf {k}"))?.ty());
    }
    let (index, carries) = loops::placeholders(&types);
    let carries = carries
        .into_iter()
        .map(|c| wrap(py, c))
        .collect::<PyResult<_>>()?;
    Ok((wrap(py, index)?, carries))
}

/// The values after `trips` runs of the body that turned the placeholders `index`,
/// `carries` (from `loop_begin`) into `nexts`, starting from `inits`, the counter
/// counting from `start`.
#[pyfunction]
pub fn loop_end(
    py: Python<'_>,
    trips: u32,
    start: i32,
    index: &Bound<'_, PyValue>,
    carries: Vec<Bound<'_, PyValue>>,
    inits: Vec<Bound<'_, PyAny>>,
    nexts: Vec<Bound<'_, PyAny>>,
) -> PyResult<Vec<Py<PyAny>>> {
    let carries: Vec<Value> = carries.iter().map(|c| c.get().value().clone()).collect();
    let ty = |k: usize| carries.get(k).map_or(ScalarType::Int, Value::ty);
    let inits = inits
        .iter()
        .enumerate()
        .map(|(k, i)| carried(i, ty(k), &format!("carried leaf {k}")))
        .collect::<PyResult<Vec<_>>>()?;
    let nexts = nexts
        .iter()
        .enumerate()
        .map(|(k, n)| carried(n, ty(k), &format!("returned leaf {k}")))
        .collect::<PyResult<Vec<_>>>()?;
    let outs = loops::make_loop(trips, start, index.get().value(), &carries, &inits, &nexts)
        .map_err(|e| PyValueError::new_err(e.message))?;
    outs.into_iter().map(|v| wrap(py, v)).collect()
}
