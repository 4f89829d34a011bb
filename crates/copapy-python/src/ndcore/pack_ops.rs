//! The element-wise operators a packed container of leaves computes through one array
//! stencil (`_packing`); None when the operands do not pack, and the container computes leaf
//! by leaf.

use pyo3::prelude::*;

use copapy_compiler::Op;

use super::leaves::is_leaf;
use super::pack::nd_pack;
use crate::array_ops::{self, PyArrayNode};

/// The array of `con`'s elements if it packs, as a node.
fn node<'py>(con: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyArrayNode>>> {
    Ok(match nd_pack(con, false)? {
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
        "pow" => return Ok(None), // not among the array operators (_optable.BINARY_OPERATORS)
        n => n,
    };
    if !Op::from_name(op).is_some_and(|o| Op::BINARY.contains(&o)) {
        return Ok(None);
    }
    let Some(a) = node(con)? else {
        return Ok(None);
    };
    let b = if is_leaf(other) {
        other.clone()
    } else {
        match node(other)? {
            Some(b) => b.into_any(),
            None => return Ok(None),
        }
    };
    let a = a.into_any();
    let (x, y) = if rev { (&b, &a) } else { (&a, &b) };
    array_ops::array_binary(con.py(), op, x, y).map(Some)
}

/// Registers the packed operators in `copapy._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(nd_pack_binop, m)?)?;
    Ok(())
}
