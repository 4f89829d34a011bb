//! The packing switch: when a container of leaves computes through one array node.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::array_ops;
use crate::value::PyValue;
use crate::walk;

/// The default `pack_threshold`: vectors and tensors with more traced elements than this
/// compute through array stencils.
pub const PACK_THRESHOLD: i64 = 64;

/// How many traced elements `con` may have before it packs: 0 for `packed=True`, never
/// (None) for `packed=False`, else its class's `pack_threshold` (Copapy's class attribute;
/// None never packs).
#[pyfunction]
pub fn nd_pack_threshold(con: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    let py = con.py();
    if let Some(p) = walk::attr(con, intern!(py, "_packed"))?.filter(|p| !p.is_none()) {
        return Ok(p.is_truthy()?.then_some(0));
    }
    match walk::attr(con.get_type().as_any(), intern!(py, "pack_threshold"))? {
        None => Ok(Some(PACK_THRESHOLD)),
        Some(limit) => limit.extract(),
    }
}

/// The array already holding `con`'s elements (`con._arr`), if any.
fn packed_node<'py>(con: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(walk::attr(con, intern!(con.py(), "_arr"))?.filter(|n| !n.is_none()))
}

/// Whether an operation on `con` (`n` elements, default all) should take the array path:
/// it already is an array's elements, or it has more elements than its threshold.
#[pyfunction]
#[pyo3(signature = (con, n = None))]
pub fn nd_wants_pack(con: &Bound<'_, PyAny>, n: Option<usize>) -> PyResult<bool> {
    if packed_node(con)?.is_some() {
        return Ok(true);
    }
    let Some(limit) = nd_pack_threshold(con)? else {
        return Ok(false);
    };
    let n = match n {
        Some(n) => n,
        None => con.getattr(intern!(con.py(), "values"))?.len()?,
    };
    Ok(n as i64 > limit)
}

/// The packing switch: the array holding `con`'s elements (kept on `con._arr` once
/// gathered; input values are placed inside it, so gathering costs no code) if they are
/// more than its threshold (`force`: any number) of traced values of one dtype, not bool;
/// else None.
#[pyfunction]
#[pyo3(signature = (con, force = false))]
pub fn nd_pack<'py>(con: &Bound<'py, PyAny>, force: bool) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = con.py();
    if let Some(node) = packed_node(con)? {
        return Ok(Some(node));
    }
    let values = con.getattr(intern!(py, "values"))?.cast_into::<PyTuple>()?;
    let limit = if force && !values.is_empty() {
        Some(0)
    } else {
        nd_pack_threshold(con)?
    };
    let Some(limit) = limit else { return Ok(None) };
    if values.len() as i64 <= limit {
        return Ok(None);
    }
    let mut elements = Vec::with_capacity(values.len());
    let mut dtype = None;
    for x in values.iter() {
        let Ok(v) = x.cast_into_exact::<PyValue>() else {
            return Ok(None);
        };
        let ty = v.get().value().ty();
        if ty == copapy_compiler::ScalarType::Bool || dtype.is_some_and(|d| d != ty) {
            return Ok(None);
        }
        dtype = Some(ty);
        elements.push(v);
    }
    let Some(ty) = dtype else { return Ok(None) };
    let node = match array_ops::array_of_elements(py, elements.clone())? {
        Some(node) => node,
        None => array_ops::array_pack(
            py,
            ty.name(),
            elements.into_iter().map(|v| v.into_any()).collect(),
        )?,
    };
    let node = node.into_bound(py).into_any();
    con.setattr(intern!(py, "_arr"), &node)?;
    Ok(Some(node))
}
