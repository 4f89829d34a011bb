//! `cp.iif(cond, a, b)` with an array among its operands: `a` where `cond` is non-zero,
//! else `b`, element by element, as NumPy's `where` (the three broadcast together; a
//! scalar condition is a one-element array): one select stencil, which never leaks the
//! side not chosen. A float condition is `cond != 0` (NaN is true, as the scalar `iif`).
//! The result is a float array if either side is float, a bool array if both are bool,
//! else an int array.

use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;

use copapy_compiler::{array, ScalarType, Value};

use super::errors::tuple;
use super::leaves::{is_traced, nd_scalar};
use super::shapes::{nd_broadcast, nd_broadcast_strides};
use super::storage::{built, Contents, Nd};
use crate::array_ops::{operand, PyArrayNode};
use crate::container;
use crate::convert::type_name;
use crate::value::PyValue;
use crate::walk;

fn is_array(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(walk::attr(x, intern!(x.py(), "_cp_node"))?.is_some())
}

/// The array node of `nd` broadcast to `shape` (no code when it has that shape).
fn broadcast(nd: &Nd<'_>, shape: &[usize]) -> PyResult<Value> {
    let strides = nd_broadcast_strides(nd.shape.clone(), shape.to_vec(), "an array")?;
    match Nd::of(&nd.view(0, shape, &strides)?)?.contents {
        Contents::Array { node, .. } => Ok(node),
        Contents::Leaves(_) => Err(PyRuntimeError::new_err(
            "internal error: a view of an array is not an array",
        )),
    }
}

/// The condition as an array: itself, or a scalar as one element.
fn condition<'py>(cond: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = cond.py();
    if is_array(cond)? {
        return Ok(cond.clone());
    }
    let Some(c) = nd_scalar(cond)? else {
        return Err(PyTypeError::new_err(format!(
            "the condition of iif must be an array, a value or a number, not {}",
            type_name(cond)
        )));
    };
    let v = if is_traced(&c) {
        c.cast::<PyValue>()?.get().value().clone()
    } else {
        Value::constant(ScalarType::Bool, u32::from(c.is_truthy()?))
    };
    let node = Bound::new(py, PyArrayNode::new(built(array::pack(v.ty(), &[v]))?))?;
    container::registry()?
        .array
        .bind(py)
        .call1((node, tuple(py, &[1])?))
}

/// `cp.iif(cond, a, b)` with an array among the three (see the module documentation).
#[pyfunction]
pub fn nd_select<'py>(
    cond: &Bound<'py, PyAny>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = cond.py();
    let mut cond = condition(cond)?;
    if cond.getattr(intern!(py, "dtype"))?.extract::<String>()? == "float" {
        cond = cond.rich_compare(0, CompareOp::Ne)?;
    }
    let c = Nd::of(&cond)?;
    let mut shape = c.shape.clone();
    for x in [a, b] {
        if is_array(x)? {
            let s: Vec<usize> = x.getattr(intern!(py, "shape"))?.extract()?;
            shape = nd_broadcast(py, shape, s, "select between", "arrays")?.extract()?;
        }
    }
    let mut sides = Vec::with_capacity(2);
    for x in [a, b] {
        if is_array(x)? {
            sides.push(broadcast(&Nd::of(x)?, &shape)?);
        } else {
            let Some(s) = nd_scalar(x)? else {
                return Err(PyTypeError::new_err(format!(
                    "iif operands must be arrays, values or numbers, not {}",
                    type_name(x)
                )));
            };
            sides.push(operand(&s)?);
        }
    }
    let out = built(array::select(&broadcast(&c, &shape)?, &sides[0], &sides[1]))?;
    c.node(out, &shape, None)
}
