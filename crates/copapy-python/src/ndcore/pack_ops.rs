//! The operations a packed container of leaves computes through one array stencil
//! (`_packing`): element-wise operators, the dot product, the sum and the matrix product.
//! Each returns None when its operands do not pack, and the container computes leaf by leaf.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyBool;

use copapy_compiler::Op;

use super::leaves::is_leaf;
use super::pack::{nd_pack, nd_pack_threshold};
use crate::array_ops::{self, PyArrayNode};
use crate::value::PyValue;
use crate::walk;

/// The array of `con`'s elements (`force`: at any length), as a node.
fn node<'py>(con: &Bound<'py, PyAny>, force: bool) -> PyResult<Option<Bound<'py, PyArrayNode>>> {
    Ok(match nd_pack(con, force)? {
        Some(n) => Some(n.cast_into::<PyArrayNode>()?),
        None => None,
    })
}

/// Element-wise `con op other` (`other op con` if `rev`) for the operator named as its
/// Python method (`add`, `truediv`, `lshift`, …), `other` a scalar or a container of the same
/// shape; None when it does not pack or the operator has no array stencil.
#[pyfunction]
pub fn nd_pack_binop<'py>(
    con: &Bound<'py, PyAny>,
    other: &Bound<'py, PyAny>,
    name: &str,
    rev: bool,
) -> PyResult<Option<Py<PyArrayNode>>> {
    let op = match name {
        "truediv" => "div",
        "lshift" => "shl",
        "rshift" => "shr",
        "pow" => return Ok(None), // computed element by element (Copapy's pow rules)
        n => n,
    };
    if !Op::from_name(op).is_some_and(|o| Op::BINARY.contains(&o)) {
        return Ok(None);
    }
    let Some(a) = node(con, false)? else {
        return Ok(None);
    };
    let b = if is_leaf(other) {
        other.clone()
    } else {
        match node(other, false)? {
            Some(b) => b.into_any(),
            None => return Ok(None),
        }
    };
    let a = a.into_any();
    let (x, y) = if rev { (&b, &a) } else { (&a, &b) };
    array_ops::array_binary(con.py(), op, x, y).map(Some)
}

/// `sum(a[k] * b[k])` as one array stencil, or None when the operands do not pack.
#[pyfunction]
pub fn nd_pack_dot(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyValue>>> {
    let (Some(x), Some(y)) = (node(a, false)?, node(b, false)?) else {
        return Ok(None);
    };
    array_ops::array_dot(a.py(), &x, &y).map(Some)
}

/// The sum of `con`'s elements as one array stencil, or None when they do not pack.
#[pyfunction]
pub fn nd_pack_sum(con: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyValue>>> {
    match node(con, false)? {
        Some(x) => array_ops::array_sum(con.py(), &x).map(Some),
        None => Ok(None),
    }
}

/// Whether `con` was made with `packed=False` (it never packs, not even beside a packed one).
fn never_packs(con: &Bound<'_, PyAny>) -> PyResult<bool> {
    let flag = walk::attr(con, intern!(con.py(), "_packed"))?;
    let is_false =
        |f: Bound<'_, PyAny>| f.is_instance_of::<PyBool>() && !f.is_truthy().unwrap_or(true);
    Ok(nd_pack_threshold(con)?.is_none() && flag.is_some_and(is_false))
}

/// `a @ b` (`m x k` by `k x p`) as one array stencil when one operand packs (more traced
/// values than its threshold, or `packed=True`) and the other is all traced too;
/// `packed=False` on either keeps the product element-wise.
#[pyfunction]
pub fn nd_pack_matmul(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    m: u32,
    k: u32,
    p: u32,
) -> PyResult<Option<Py<PyArrayNode>>> {
    if never_packs(a)? || never_packs(b)? {
        return Ok(None);
    }
    if node(a, false)?.is_none() && node(b, false)?.is_none() {
        return Ok(None);
    }
    let (Some(x), Some(y)) = (node(a, true)?, node(b, true)?) else {
        return Ok(None);
    };
    array_ops::array_matmul(a.py(), &x, &y, m, k, p).map(Some)
}

/// Registers the packed operations in `copapy._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(nd_pack_binop, m)?)?;
    m.add_function(wrap_pyfunction!(nd_pack_dot, m)?)?;
    m.add_function(wrap_pyfunction!(nd_pack_sum, m)?)?;
    m.add_function(wrap_pyfunction!(nd_pack_matmul, m)?)?;
    Ok(())
}
