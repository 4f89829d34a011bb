//! Reductions of every container over both storage modes (`sum`, `mean`, `min`, `max`,
//! `trace`), in the documented order: leaves fold their terms with Copapy's sparse-constant
//! rules (`sums.rs`; a container that packs reduces its array instead), an array reduces
//! with one stencil (a product with ones for sums, a row-wise fold for `min`/`max`). Each
//! result element reduces its terms in row-major order of the reduced axes.

use pyo3::exceptions::{PyRuntimeWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyFloat;

use copapy_compiler::{array, Op, ScalarType, Value};

use super::cast::astype;
use super::leaves::is_traced;
use super::pack::{nd_pack, nd_wants_pack};
use super::shapes::nd_axes;
use super::storage::{built, kernel, scalar, Contents, Nd};
use super::sums::nd_sum;
use crate::array_ops::PyArrayNode;
use crate::shape::{self, show};
use crate::value;

#[derive(Clone, Copy, PartialEq)]
enum Reduction {
    Sum,
    Min,
    Max,
}

impl Reduction {
    fn op(self) -> Op {
        match self {
            Reduction::Min => Op::Min,
            _ => Op::Max,
        }
    }

    /// The name of its array kernel (`array_kernels.rs`).
    fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Min => "min",
            Reduction::Max => "max",
        }
    }
}

/// NumPy's `minimum`/`maximum` of two leaves: traced ones by one stencil, numbers in
/// Python (a NaN wins, as in NumPy).
fn nan_fold<'py>(
    a: Bound<'py, PyAny>,
    b: Bound<'py, PyAny>,
    r: Reduction,
) -> PyResult<Bound<'py, PyAny>> {
    let py = a.py();
    if is_traced(&a) || is_traced(&b) {
        let name = if r == Reduction::Min { "min" } else { "max" };
        return Ok(value::math_binary(py, &a, &b, r.op(), name)?.into_bound(py));
    }
    if a.ne(&a)? {
        return Ok(a);
    }
    if b.ne(&b)? {
        return Ok(b);
    }
    let b_wins = if r == Reduction::Min {
        b.lt(&a)?
    } else {
        b.gt(&a)?
    };
    Ok(if b_wins { b } else { a })
}

/// The leaves' reduction in the documented order.
fn fold_leaves<'py>(
    py: Python<'py>,
    terms: Vec<Bound<'py, PyAny>>,
    r: Reduction,
) -> PyResult<Bound<'py, PyAny>> {
    if r == Reduction::Sum {
        return nd_sum(py, terms);
    }
    let folded = shape::tree_fold(terms, |a, b| nan_fold(a, b, r))?;
    folded.ok_or_else(|| PyValueError::new_err("a fold needs at least one term"))
}

/// The reduction of an array node to one value.
fn whole_node(node: &Value, r: Reduction) -> PyResult<Value> {
    kernel(r.name(), std::slice::from_ref(node), &[])
}

/// The reduction of every element: one value (or number).
fn whole<'py>(nd: &Nd<'py>, r: Reduction) -> PyResult<Bound<'py, PyAny>> {
    let py = nd.py();
    match &nd.contents {
        Contents::Array { node, .. } => scalar(py, whole_node(node, r)?),
        Contents::Leaves(t) => {
            if nd_wants_pack(&nd.con, None)? {
                if let Some(n) = nd_pack(&nd.con, false)? {
                    return scalar(py, whole_node(n.cast::<PyArrayNode>()?.get().value(), r)?);
                }
            }
            fold_leaves(py, t.iter().collect(), r)
        }
    }
}

/// A constant array of `n` ones of an array's element type (float or int).
fn ones(node: &Value, n: usize) -> PyResult<Value> {
    let (ty, one) = match node.ty() {
        ScalarType::Float => (ScalarType::Float, 1.0f32.to_bits()),
        _ => (ScalarType::Int, 1),
    };
    built(array::data(ty, vec![one; n]))
}

/// The reduction over the sorted `axes` (not all, not none), a container of `out` shape.
fn over_axes<'py>(
    nd: &Nd<'py>,
    r: Reduction,
    axes: &[usize],
    out: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    let py = nd.py();
    let s = &nd.shape;
    let Contents::Array { node, dtype } = &nd.contents else {
        let (groups, _) = shape::reduction_groups(s, axes);
        let results = groups
            .into_iter()
            .map(|g| {
                fold_leaves(
                    py,
                    g.into_iter()
                        .map(|k| nd.element(k))
                        .collect::<PyResult<_>>()?,
                    r,
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        return nd.leaves(results, out);
    };
    let n: usize = axes.iter().map(|&a| s[a]).product();
    let m = nd.size() / n;
    let contiguous = axes.windows(2).all(|w| w[1] == w[0] + 1);
    let before: usize = s[..axes[0]].iter().product();
    if r == Reduction::Sum && contiguous && before == 1 {
        // leading axes: ones (1 x n) @ the elements (n x m), no copy; x * 1 is x exactly,
        // so each entry is the documented sum of its terms
        let sum = kernel(
            "matmul",
            &[ones(node, n)?, node.clone()],
            &[1, n as i64, m as i64],
        )?;
        return nd.node(sum, out, None);
    }
    // rows of terms: the kept axes first (a transposed copy unless they are already)
    let kept: Vec<usize> = (0..s.len()).filter(|d| !axes.contains(d)).collect();
    let rows = if kept.iter().enumerate().all(|(i, &d)| i == d) {
        node.clone()
    } else {
        let perm: Vec<usize> = kept.iter().chain(axes).copied().collect();
        let t = nd.permuted(&perm)?;
        t.getattr("_cp_node")?
            .cast::<PyArrayNode>()?
            .get()
            .value()
            .clone()
    };
    if r == Reduction::Sum {
        let sum = kernel("matmul", &[rows, ones(node, n)?], &[m as i64, n as i64, 1])?;
        return nd.node(sum, out, None);
    }
    let folded = kernel(
        &format!("rows_{}", r.name()),
        &[rows],
        &[m as i64, n as i64],
    )?;
    nd.node(folded, out, Some(dtype))
}

/// The reduction `r` of `nd` over `axes` (None: all), with the reduced axes kept as 1.
fn reduce<'py>(
    nd: &Nd<'py>,
    r: Reduction,
    axes: Option<Vec<usize>>,
    keepdims: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let ndim = nd.shape.len();
    let axes = axes.filter(|a| a.len() != ndim);
    let keep: Vec<usize> = (0..ndim)
        .map(|d| {
            if axes.as_ref().is_none_or(|a| a.contains(&d)) {
                1
            } else {
                nd.shape[d]
            }
        })
        .collect();
    let reduced: usize = (0..ndim)
        .filter(|&d| keep[d] == 1)
        .map(|d| nd.shape[d])
        .product();
    if r != Reduction::Sum && reduced == 0 {
        let which = if r == Reduction::Min {
            "minimum"
        } else {
            "maximum"
        };
        return Err(PyValueError::new_err(format!(
            "zero-size {} of shape {} has no {which}: reduce over axes with elements",
            nd.kind(),
            show(&nd.shape)
        )));
    }
    match axes {
        Some(a) if a.is_empty() => Ok(nd.con.clone()),
        Some(a) => {
            let plain: Vec<usize> = (0..ndim)
                .filter(|d| !a.contains(d))
                .map(|d| nd.shape[d])
                .collect();
            over_axes(nd, r, &a, if keepdims { &keep } else { &plain })
        }
        None if keepdims => {
            let s = whole(nd, r)?;
            match &nd.contents {
                Contents::Leaves(_) => nd.leaves(vec![s], &keep),
                Contents::Array { dtype, .. } => {
                    let v = s.cast::<crate::value::PyValue>()?.get().value().clone();
                    let one = built(array::pack(v.ty(), &[v]))?;
                    let dtype = if r == Reduction::Sum {
                        None
                    } else {
                        Some(dtype.as_str())
                    };
                    nd.node(one, &keep, dtype)
                }
            }
        }
        None => whole(nd, r),
    }
}

/// `sum`, `mean`, `min` or `max` (`which`) of a container over `axis` (None, an int or a
/// tuple of ints), NumPy's `keepdims`: a scalar for every axis, else a container of the
/// same storage mode. `min`/`max` fold NumPy's `minimum`/`maximum` in the order of the sums
/// (a NaN gives NaN); `mean` is the sum of the terms converted to float divided by their
/// count (NaN with NumPy's warning for none).
#[pyfunction]
pub fn nd_reduce<'py>(
    con: &Bound<'py, PyAny>,
    which: &str,
    axis: &Bound<'py, PyAny>,
    keepdims: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let axes: Option<Vec<usize>> = match nd_axes(axis, nd.shape.len(), &nd.what())? {
        Some(t) => Some(t.extract()?),
        None => None,
    };
    let r = match which {
        "sum" => Reduction::Sum,
        "min" => Reduction::Min,
        "max" => Reduction::Max,
        "mean" => return mean(&nd, axes, keepdims),
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown reduction '{which}'"
            )))
        }
    };
    reduce(&nd, r, axes, keepdims)
}

/// The mean: int, bool and byte terms are converted to float32 first (one stencil per
/// traced leaf or one loop for an array), so the sum cannot wrap; NumPy too accumulates
/// int means in floating point. Plain numbers need nothing: Python sums them exactly.
fn mean<'py>(
    nd: &Nd<'py>,
    axes: Option<Vec<usize>>,
    keepdims: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = nd.py();
    let count: usize = match &axes {
        None => nd.size(),
        Some(a) => a.iter().map(|&d| nd.shape[d]).product(),
    };
    let ints = match &nd.contents {
        Contents::Array { dtype, .. } => dtype != "float",
        Contents::Leaves(t) => t.iter().any(|x| {
            is_traced(&x)
                && x.cast::<crate::value::PyValue>()
                    .is_ok_and(|v| v.get().value().ty() != ScalarType::Float)
        }),
    };
    let floats = if ints {
        Nd::of(&astype(nd, "float")?)?
    } else {
        Nd::of(&nd.con)?
    };
    let total = reduce(&floats, Reduction::Sum, axes, keepdims)?;
    if count > 0 {
        return total.div(count as f64);
    }
    PyErr::warn(
        py,
        &py.get_type::<PyRuntimeWarning>(),
        c"Mean of empty slice",
        2,
    )?;
    let nan = PyFloat::new(py, f64::NAN).into_any();
    if !total.hasattr(pyo3::intern!(py, "values"))? {
        return Ok(nan); // a scalar mean
    }
    let t = Nd::of(&total)?;
    t.leaves(vec![nan; t.size()], &t.shape)
}

/// `trace()`: the sum of the diagonal of a square matrix, in the documented order.
#[pyfunction]
pub fn nd_trace<'py>(con: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let n = match nd.shape[..] {
        [n, m] if n == m => n,
        _ => {
            let shape = show(&nd.shape);
            return Err(PyValueError::new_err(format!(
                "trace needs a square matrix, got shape {shape}"
            )));
        }
    };
    match &nd.contents {
        Contents::Leaves(_) => {
            let diagonal = (0..n)
                .map(|k| nd.element(k * (n + 1)))
                .collect::<PyResult<_>>()?;
            nd_sum(nd.py(), diagonal)
        }
        Contents::Array { .. } => whole(
            &Nd::of(&nd.view(0, &[n], &[n as isize + 1])?)?,
            Reduction::Sum,
        ),
    }
}
