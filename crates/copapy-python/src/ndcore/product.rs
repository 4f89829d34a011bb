//! Products of every container over both storage modes (`@`, `matmul`, `dot`): NumPy's
//! `matmul` of 1-D and 2-D operands and its `dot` (the inner product of 1-D operands, the
//! matrix product, a product with a scalar). Two containers of the same size whose shapes
//! do not multiply are taken in row-major order by `dot` (Copapy's `array.dot`, NumPy's
//! `vdot`). Arrays, and containers that pack with an all-traced other operand, compute
//! with one stencil (`dot`, `matmul`); leaves add their products in the documented order
//! with Copapy's sparse-constant rules (`sums.rs`). Either way the bits are the same.

use pyo3::exceptions::{PyNotImplementedError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};

use copapy_compiler::Value;

use super::errors::tuple;
use super::leaves::nd_scalar;
use super::pack::{nd_pack, nd_pack_threshold, nd_wants_pack};
use super::storage::{kernel, scalar, Contents, Nd};
use super::sums::nd_dot;
use crate::array_ops::PyArrayNode;
use crate::container;
use crate::shape::show;
use crate::walk;

/// Whether `x` is a container (an array node or leaves with a shape).
fn is_container(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = x.py();
    Ok(walk::attr(x, intern!(py, "_cp_node"))?.is_some()
        || (walk::attr(x, intern!(py, "values"))?.is_some()
            && walk::attr(x, intern!(py, "shape"))?.is_some()))
}

/// The other operand as a container: itself, or data (nested sequences, NumPy arrays) in
/// `con`'s storage mode (an array, else a tensor); None for what is not data.
fn operand<'py>(con: &Nd<'py>, other: &Bound<'py, PyAny>) -> PyResult<Option<Nd<'py>>> {
    if is_container(other)? {
        return Nd::of(other).map(Some);
    }
    if other.is_instance_of::<PyString>() || other.is_instance_of::<PyBytes>() {
        return Ok(None);
    }
    if other.try_iter().is_err() {
        return Ok(None);
    }
    let made = match con.contents {
        Contents::Array { .. } => con.con.get_type().call1((other,))?,
        Contents::Leaves(_) => container::registry()?
            .matrix
            .bind(con.py())
            .call1((other,))?,
    };
    Nd::of(&made).map(Some)
}

/// "tensors", "vectors", "arrays": the operands in messages, by the left one's class.
fn kind(nd: &Nd<'_>) -> PyResult<String> {
    Ok(format!("{}s", nd.con.get_type().name()?))
}

/// The array node of a container's elements when its product should take the array path:
/// an array's own, or the packed array of leaves (`force`: at any length).
fn node_of(nd: &Nd<'_>, force: bool) -> PyResult<Option<Value>> {
    match &nd.contents {
        Contents::Array { node, .. } => Ok(Some(node.clone())),
        Contents::Leaves(_) => {
            if !force && !nd_wants_pack(&nd.con, None)? {
                return Ok(None);
            }
            match nd_pack(&nd.con, force)? {
                Some(n) => Ok(Some(n.cast::<PyArrayNode>()?.get().value().clone())),
                None => Ok(None),
            }
        }
    }
}

/// Whether a container of leaves was made with `packed=False` (its products stay
/// element by element).
fn never_packs(nd: &Nd<'_>) -> PyResult<bool> {
    Ok(matches!(nd.contents, Contents::Leaves(_)) && nd_pack_threshold(&nd.con)?.is_none())
}

/// The sum of the products of corresponding elements (row-major), a scalar.
fn inner<'py>(a: &Nd<'py>, b: &Nd<'py>) -> PyResult<Bound<'py, PyAny>> {
    let py = a.py();
    if a.size() != b.size() {
        return Err(PyValueError::new_err(format!(
            "cannot take the dot product of {} of shapes {} and {}: dot takes two of the same \
             length (number of elements); for a matrix product use @",
            kind(a)?,
            show(&a.shape),
            show(&b.shape)
        )));
    }
    if let (Some(x), Some(y)) = (node_of(a, false)?, node_of(b, false)?) {
        return scalar(py, kernel("dot", &[x, y], &[])?);
    }
    nd_dot(py, a.elements()?, b.elements()?)
}

/// The matrix product of 1-D and 2-D operands (not both 1-D) whose inner sizes agree.
fn matrix<'py>(a: &Nd<'py>, b: &Nd<'py>) -> PyResult<Bound<'py, PyAny>> {
    let py = a.py();
    let (sa, sb) = (&a.shape, &b.shape);
    let (m, k) = if sa.len() == 2 {
        (sa[0], sa[1])
    } else {
        (1, sa[0])
    };
    let p = if sb.len() == 2 { sb[1] } else { 1 };
    let out: Vec<usize> = [(m, sa.len() == 2), (p, sb.len() == 2)]
        .into_iter()
        .filter_map(|(d, keep)| keep.then_some(d))
        .collect();
    let params = [m as i64, k as i64, p as i64];
    if let (Contents::Array { node: x, .. }, Contents::Array { node: y, .. }) =
        (&a.contents, &b.contents)
    {
        return a.node(
            kernel("matmul", &[x.clone(), y.clone()], &params)?,
            &out,
            None,
        );
    }
    // a result of leaves is a tensor (aliasing the product's array when it packs)
    let tensor = container::registry()?.matrix.bind(py).clone();
    let packs = node_of(a, false)?.is_some() || node_of(b, false)?.is_some();
    if packs && !never_packs(a)? && !never_packs(b)? {
        if let (Some(x), Some(y)) = (node_of(a, true)?, node_of(b, true)?) {
            let n = Bound::new(py, PyArrayNode::new(kernel("matmul", &[x, y], &params)?))?;
            return tensor.call_method1(intern!(py, "_from_node"), (n, tuple(py, &out)?));
        }
    }
    let (av, bv) = (a.elements()?, b.elements()?);
    let mut items = Vec::with_capacity(m * p);
    for i in 0..m {
        for j in 0..p {
            let row = av[i * k..(i + 1) * k].to_vec();
            let col = (0..k).map(|r| bv[r * p + j].clone()).collect();
            items.push(nd_dot(py, row, col)?);
        }
    }
    let like = tensor.getattr(intern!(py, "_like"))?;
    like.call1((&a.con, PyTuple::new(py, items)?, tuple(py, &out)?))
}

/// `con @ other` (`reflected`: `other @ con`) with `op` "matmul", or `con.dot(other)` with
/// `op` "dot"; `NotImplemented` for an operand that is no data.
#[pyfunction]
#[pyo3(signature = (con, other, op, reflected = false))]
pub fn nd_product<'py>(
    con: &Bound<'py, PyAny>,
    other: &Bound<'py, PyAny>,
    op: &str,
    reflected: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = con.py();
    let dot = op == "dot";
    if let Some(s) = nd_scalar(other)? {
        if !dot {
            return Err(PyValueError::new_err(
                "matmul: an operand is a scalar; use * to scale",
            ));
        }
        return if reflected { s.mul(con) } else { con.mul(s) };
    }
    let me = Nd::of(con)?;
    let Some(them) = operand(&me, other)? else {
        return Ok(py.NotImplemented().into_bound(py));
    };
    let (a, b) = if reflected { (them, me) } else { (me, them) };
    let (sa, sb) = (a.shape.clone(), b.shape.clone());
    if sa.is_empty() || sb.is_empty() {
        if dot {
            return a.con.mul(&b.con);
        }
        return Err(PyValueError::new_err(format!(
            "matmul: an operand is 0-d (shapes {} and {}); use * to scale",
            show(&sa),
            show(&sb)
        )));
    }
    let fits = sa.len() <= 2 && sb.len() <= 2 && sa[sa.len() - 1] == sb[0];
    if (sa.len() == 1 && sb.len() == 1) || (dot && !fits) {
        return inner(&a, &b);
    }
    if sa.len() > 2 || sb.len() > 2 {
        return Err(PyNotImplementedError::new_err(format!(
            "matmul of {}s with more than 2 dimensions (shapes {} and {})",
            a.kind(),
            show(&sa),
            show(&sb)
        )));
    }
    if !fits {
        return Err(PyValueError::new_err(format!(
            "cannot matrix-multiply {}s of shapes {} and {}: {} columns against {} rows",
            a.kind(),
            show(&sa),
            show(&sb),
            sa[sa.len() - 1],
            sb[0]
        )));
    }
    matrix(&a, &b)
}
