//! `cp.fori_loop` / `cp.scan` (python/copapy/_loops.py): the two calls around tracing a
//! loop body once, see `copapy_compiler::loops`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use copapy_compiler::graph::ScalarType;
use copapy_compiler::loops;
use copapy_compiler::Value;

use crate::array_ops::PyArrayNode;
use crate::value::{operand, PyValue};

/// A graph value for Python: a `value`, or an `ArrayNode` for an array.
fn wrap(py: Python<'_>, v: Value) -> PyResult<Py<PyAny>> {
    if copapy_compiler::array::len_of(&v).is_some() {
        return Ok(Py::new(py, PyArrayNode::new(v))?.into_any());
    }
    Ok(Py::new(py, PyValue::from_graph(v))?.into_any())
}

/// A carried leaf as a graph value: a `value`, an `ArrayNode`, or a Python number as a
/// constant of its own type (`beside` decides how an int next to a float carry is read).
fn carried(obj: &Bound<'_, PyAny>, beside: ScalarType, what: &str) -> PyResult<Value> {
    if let Ok(a) = obj.cast::<PyArrayNode>() {
        return Ok(a.get().value().clone());
    }
    operand(obj, beside)?.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{what} is a {}: a loop carries values, numbers and arrays (and containers of them)",
            obj.get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string())
        ))
    })
}

fn leaves(
    objs: &[Bound<'_, PyAny>],
    types: impl Fn(usize) -> ScalarType,
    what: &str,
) -> PyResult<Vec<Value>> {
    objs.iter()
        .enumerate()
        .map(|(k, o)| carried(o, types(k), &format!("{what} {k}")))
        .collect()
}

/// The placeholders to trace a body on, for these initial carried leaves (values,
/// numbers, `ArrayNode`s): `(index, carries)`, the int counter and one per leaf, of its
/// type and length.
#[pyfunction]
pub fn loop_begin(
    py: Python<'_>,
    inits: Vec<Bound<'_, PyAny>>,
) -> PyResult<(Py<PyAny>, Vec<Py<PyAny>>)> {
    let inits = leaves(&inits, |_| ScalarType::Int, "carried leaf")?;
    let (index, carries) = loops::placeholders(&inits);
    let carries = carries
        .into_iter()
        .map(|c| wrap(py, c))
        .collect::<PyResult<_>>()?;
    Ok((wrap(py, index)?, carries))
}

/// The leaves after `trips` runs of the body that turned the placeholders `index`,
/// `carries` (from `loop_begin`) into `nexts`, starting from `inits`, the counter
/// counting from `start`.
#[pyfunction]
pub fn loop_end(
    py: Python<'_>,
    trips: u32,
    start: i32,
    index: &Bound<'_, PyValue>,
    carries: Vec<Bound<'_, PyAny>>,
    inits: Vec<Bound<'_, PyAny>>,
    nexts: Vec<Bound<'_, PyAny>>,
) -> PyResult<Vec<Py<PyAny>>> {
    let carries = leaves(&carries, |_| ScalarType::Int, "placeholder")?;
    let ty = |k: usize| carries.get(k).map_or(ScalarType::Int, Value::ty);
    let inits = leaves(&inits, ty, "carried leaf")?;
    let nexts = leaves(&nexts, ty, "returned leaf")?;
    let outs = loops::make_loop(trips, start, index.get().value(), &carries, &inits, &nexts)
        .map_err(|e| PyValueError::new_err(e.message))?;
    outs.into_iter().map(|v| wrap(py, v)).collect()
}
