//! `cp.cast` of one element and `astype` over both storage modes (docs/math.md, "Casts"):
//! float to int truncates toward 0 (NaN 0, saturating), to bool is `x != 0`, to byte
//! clamps to 0..255. An array (or a container that packs) converts with one loop stencil;
//! leaves one by one, plain numbers in Python.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

use copapy_compiler::{array, trace, Op};

use super::leaves::is_traced;
use super::pack::nd_pack;
use super::storage::{built, scalar, Contents, Nd};
use crate::array_ops::PyArrayNode;
use crate::convert::parse_dtype;
use crate::value::{self, PyValue};

/// The element types a cast converts to.
pub const CAST_NAMES: [&str; 4] = ["float", "int", "bool", "byte"];

/// `cp.cast` of one element (a value or a Python number) to `dtype` ('float', 'int',
/// 'bool', 'byte'): a value by one stencil (itself if it has the type), a number as Python's
/// `float()`, `int()`, `bool()` convert it, or clamped to 0..255 for a byte (truncated, NaN 0).
#[pyfunction]
pub fn nd_cast_leaf<'py>(x: &Bound<'py, PyAny>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    if !CAST_NAMES.contains(&dtype) {
        return Err(PyValueError::new_err(format!(
            "cannot cast to '{dtype}': use 'float', 'int', 'bool' or 'byte'"
        )));
    }
    cast_leaf(x.clone(), dtype)
}

/// One leaf converted to `dtype` (one of `CAST_NAMES`).
fn cast_leaf<'py>(x: Bound<'py, PyAny>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = x.py();
    if is_traced(&x) {
        let v = x.cast::<PyValue>()?;
        if v.get().value().ty().name() == dtype {
            return Ok(x);
        }
        if dtype == "byte" {
            return Ok(value::math_unary(py, v, Op::ToByte)?.into_bound(py));
        }
        return scalar(
            py,
            built(trace::cast(v.get().value(), parse_dtype(dtype)?))?,
        );
    }
    match dtype {
        "float" => py.get_type::<PyFloat>().call1((x,)),
        "int" => py.get_type::<PyInt>().call1((x,)),
        "bool" => py.get_type::<PyBool>().call1((x,)),
        _ => {
            // as `to_bytes`: truncation, clamped, NaN 0
            if x.ne(&x)? || x.le(0)? {
                return Ok(PyInt::new(py, 0).into_any());
            }
            if x.ge(255)? {
                return Ok(PyInt::new(py, 255).into_any());
            }
            py.get_type::<PyInt>().call1((x,))
        }
    }
}

/// `nd` converted to `dtype` ('float', 'int', 'bool', 'byte'): itself if it has that dtype
/// already (an array, or the array of a packed container).
pub fn astype<'py>(nd: &Nd<'py>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    if !CAST_NAMES.contains(&dtype) {
        return Err(PyValueError::new_err(format!(
            "unknown dtype '{dtype}': use one of 'float', 'int', 'bool', 'byte'"
        )));
    }
    match &nd.contents {
        Contents::Array { node, dtype: own } => {
            if own == dtype {
                return Ok(nd.con.clone());
            }
            let out = if dtype == "byte" {
                array::to_bytes(node)
            } else {
                array::cast(node, parse_dtype(dtype)?)
            };
            nd.node(built(out)?, &nd.shape, Some(dtype))
        }
        Contents::Leaves(t) => {
            let Some(packed) = nd_pack(&nd.con, false)? else {
                let out = t
                    .iter()
                    .map(|x| cast_leaf(x, dtype))
                    .collect::<PyResult<_>>()?;
                return nd.leaves(out, &nd.shape);
            };
            let node = packed.cast::<PyArrayNode>()?.get().value().clone();
            let out = if dtype == "byte" {
                array::unary(Op::ToByte, &node)
            } else if node.ty().name() == dtype {
                return Ok(nd.con.clone());
            } else {
                array::cast(&node, parse_dtype(dtype)?)
            };
            nd.node(built(out)?, &nd.shape, None)
        }
    }
}

/// `astype(dtype)`: the elements converted to `dtype` by the rules of `cp.cast`.
#[pyfunction]
pub fn nd_astype<'py>(con: &Bound<'py, PyAny>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    astype(&Nd::of(con)?, dtype)
}
