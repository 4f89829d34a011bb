//! `sort`/`argsort` of a 1-D container over both storage modes, as NumPy's
//! `kind='stable'`: NaNs last (in input order), -0.0 and +0.0 equal. Traced elements sort
//! with one sorting-network stencil (the elements gathered into an array first unless they
//! are one), plain numbers in Python.

use std::cmp::Ordering;

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyInt;

use super::leaves::{is_traced, nd_dtype};
use super::pack::nd_pack;
use super::storage::{kernel, Contents, Nd};
use crate::array_ops::{array_pack, PyArrayNode};
use crate::shape::show;

/// The stable order of numbers, NaNs last.
fn number_order(items: &[Bound<'_, PyAny>]) -> PyResult<Vec<usize>> {
    let nan = items
        .iter()
        .map(|x| x.ne(x))
        .collect::<PyResult<Vec<bool>>>()?;
    let mut failed = None;
    let mut less = |i: usize, j: usize| match items[i].lt(&items[j]) {
        Ok(b) => b,
        Err(e) => {
            failed.get_or_insert(e);
            false
        }
    };
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&i, &j| match (nan[i], nan[j]) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ if less(i, j) => Ordering::Less,
        _ if less(j, i) => Ordering::Greater,
        _ => Ordering::Equal,
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(order),
    }
}

/// `sort()` (`indices = False`) or `argsort()` (`True`, int indices) of a 1-D container.
#[pyfunction]
pub fn nd_sort<'py>(con: &Bound<'py, PyAny>, indices: bool) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let py = nd.py();
    if nd.shape.len() != 1 {
        return Err(PyValueError::new_err(format!(
            "sort and argsort take a 1-D {}, got shape {}: flatten it or index a row",
            nd.kind(),
            show(&nd.shape)
        )));
    }
    let leaves = match &nd.contents {
        Contents::Array { node, dtype } => {
            let dtype = if indices { "int" } else { dtype.as_str() };
            let name = if indices { "argsort" } else { "sort" };
            return nd.node(
                kernel(name, std::slice::from_ref(node), &[])?,
                &nd.shape,
                Some(dtype),
            );
        }
        Contents::Leaves(t) => t.iter().collect::<Vec<_>>(),
    };
    if !leaves.iter().any(is_traced) {
        let order = number_order(&leaves)?;
        let out = if indices {
            order
                .into_iter()
                .map(|i| PyInt::new(py, i).into_any())
                .collect()
        } else {
            order.into_iter().map(|i| leaves[i].clone()).collect()
        };
        return nd.leaves(out, &nd.shape);
    }
    // the array of the elements (kept on the container, as a runtime index keeps it)
    let node = match nd_pack(con, false)? {
        Some(n) => n,
        None => {
            let n = array_pack(py, nd_dtype(leaves.clone())?, leaves)?
                .into_bound(py)
                .into_any();
            con.setattr(intern!(py, "_arr"), &n)?;
            n
        }
    };
    let node = node.cast::<PyArrayNode>()?.get().value().clone();
    let sorted = kernel(if indices { "argsort" } else { "sort" }, &[node], &[])?;
    nd.node(sorted, &nd.shape, None)
}
