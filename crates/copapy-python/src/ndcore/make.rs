//! The shape rules of the constructors of leaf containers (`zeros ones arange eye identity
//! diagonal concat`): shape arguments as NumPy takes them, and the constants they hold. Their
//! elements are plain Python numbers (constants: no code, no memory), computed with Python's
//! own arithmetic so that ints stay exact and floats are Python's.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyTuple};

use super::elements::{nd_tensor_leaves, nd_vector_leaves};
use super::errors::{axis_error, tuple};
use super::leaves::nd_scalar;
use super::shapes::{nd_check_shape, nd_dim, nd_plain_int};
use crate::container;
use crate::shape::show;
use crate::value::PyValue;

/// Most elements `arange` makes: each one is a constant held in Python, so far longer ranges
/// are a mistake (a wrong step or bound) rather than a program.
pub const ARANGE_MAX: i64 = 1 << 24;

/// A shape argument as NumPy takes it (an int or a sequence of ints, no bools, none
/// negative), with `cp.array`'s size limit: the constants are Python numbers, one reference
/// (8 bytes) each, so a shape beyond it is refused before anything is built.
#[pyfunction]
pub fn nd_shape_arg(shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let dims: Vec<i64> = if shape.is_instance_of::<PyBool>() || !shape.hasattr("__iter__")? {
        vec![nd_dim(shape)?]
    } else {
        shape
            .try_iter()?
            .map(|d| nd_dim(&d?))
            .collect::<PyResult<_>>()?
    };
    if dims.iter().any(|&d| d < 0) {
        return Err(PyValueError::new_err(format!(
            "negative dimensions are not allowed: {}",
            crate::shape::show(&dims)
        )));
    }
    let dims: Vec<usize> = dims.into_iter().map(|d| d as usize).collect();
    nd_check_shape(dims.clone())?;
    Ok(dims)
}

/// The leaves and shape of a container of `shape` holding the constant `fill` everywhere
/// (`zeros`, `ones`).
#[pyfunction]
pub fn nd_filled<'py>(
    shape: &Bound<'py, PyAny>,
    fill: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
    let py = shape.py();
    let dims = nd_shape_arg(shape)?;
    let n: usize = dims.iter().product();
    Ok((PyTuple::new(py, vec![fill; n])?, tuple(py, &dims)?))
}

/// The leaves and shape of the `rows` x `cols` matrix with the constant 1 on its diagonal and
/// 0 elsewhere (`eye`, `identity`; `cols` None is square).
#[pyfunction]
#[pyo3(signature = (rows, cols=None))]
pub fn nd_eye<'py>(
    rows: &Bound<'py, PyAny>,
    cols: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
    let py = rows.py();
    let r = nd_dim(rows)?;
    let c = cols.map_or(Ok(r), nd_dim)?;
    let dims = nd_shape_arg(PyTuple::new(py, [r, c])?.as_any())?;
    let (r, c) = (dims[0], dims[1]);
    let vals: Vec<u8> = (0..r * c).map(|k| u8::from(k % c == k / c)).collect();
    Ok((PyTuple::new(py, vals)?, tuple(py, &dims)?))
}

/// The leaves and shape of the square matrix with `leaves` on its diagonal and the constant 0
/// elsewhere (`diagonal`).
#[pyfunction]
pub fn nd_diagonal<'py>(
    leaves: &Bound<'py, PyTuple>,
) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
    let py = leaves.py();
    let n = leaves.len();
    let zero = PyInt::new(py, 0).into_any();
    let mut vals = vec![zero; n * n];
    for (i, x) in leaves.iter().enumerate() {
        vals[i * n + i] = x;
    }
    Ok((PyTuple::new(py, vals)?, tuple(py, &[n, n])?))
}

/// One bound or step of `arange`: a Python number (NumPy scalars as the numbers they stand
/// for), not a traced value.
fn plain_number<'py>(x: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    match nd_scalar(x)? {
        Some(s) if !s.is_instance_of::<PyValue>() => Ok(s),
        _ => Err(PyTypeError::new_err(format!(
            "arange: {name} must be a number, not {}",
            x.get_type().name()?
        ))),
    }
}

/// The constants `start, start + step, …` below `stop` (each the previous plus `step`, as in
/// Copapy; `stop` None counts `0 … start-1`). The count is computed first, as NumPy does:
/// `ceil((stop - start) / step)` (exact for ints), at least 0, at most `ARANGE_MAX`; a loop
/// adding `step` until `stop` could run forever (`2.0**53 + 1.0 == 2.0**53`, an infinite stop).
#[pyfunction]
#[pyo3(signature = (start, stop=None, step=None))]
pub fn nd_arange<'py>(
    start: &Bound<'py, PyAny>,
    stop: Option<&Bound<'py, PyAny>>,
    step: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = start.py();
    let one = PyInt::new(py, 1).into_any();
    let mut start = plain_number(start, "start")?;
    let step = plain_number(step.unwrap_or(&one), "step")?;
    let stop = match stop {
        Some(s) => plain_number(s, "stop")?,
        None => std::mem::replace(&mut start, PyInt::new(py, 0).into_any()),
    };
    if step.eq(0)? {
        return Err(PyValueError::new_err("arange: step must not be zero"));
    }
    let exact = [&start, &stop, &step]
        .iter()
        .all(|x| x.is_instance_of::<PyInt>());
    let n = if exact {
        start.sub(&stop)?.floor_div(&step)?.neg()?
    } else {
        let q: f64 = stop.sub(&start)?.div(&step)?.extract()?;
        if !q.is_finite() {
            return Err(PyValueError::new_err(format!(
                "arange({}, {}, {}) has no finite length: use finite bounds and a non-zero \
                 finite step",
                start.repr()?,
                stop.repr()?,
                step.repr()?
            )));
        }
        py.import("math")?
            .getattr("ceil")?
            .call1((PyFloat::new(py, q),))?
    };
    if n.gt(ARANGE_MAX)? {
        return Err(PyValueError::new_err(format!(
            "arange({}, {}, {}) would have {n} elements; copapy makes at most {ARANGE_MAX} \
             (check the step and the bounds)",
            start.repr()?,
            stop.repr()?,
            step.repr()?
        )));
    }
    let n = n.extract::<i64>()?.max(0);
    let mut vals = Vec::with_capacity(n as usize);
    let mut cur = start;
    for _ in 0..n {
        let next = cur.add(&step)?;
        vals.push(std::mem::replace(&mut cur, next));
    }
    PyTuple::new(py, vals)
}

/// `concat(tensors, *more, axis=0)`: the pieces as a list or tuple (Copapy's form, where one
/// int after it is the axis, as Copapy's `concat(tensors, axis)`) or as separate arguments.
/// Vectors and scalars (one element each) join into a vector; with a tensor among them,
/// every piece is a tensor (nested data made one), joined along `axis` as NumPy's
/// `concatenate`. The leaves, the shape, and whether the result is a vector.
#[pyfunction]
pub fn nd_concat<'py>(
    tensors: &Bound<'py, PyAny>,
    more: &Bound<'py, PyTuple>,
    axis: i64,
) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>, bool)> {
    let py = tensors.py();
    let listed = tensors.is_instance_of::<PyList>() || tensors.is_instance_of::<PyTuple>();
    let positional_axis = match more.len() {
        1 => nd_plain_int(&more.get_item(0)?)?,
        _ => None,
    };
    let (items, axis) = if listed && (more.is_empty() || positional_axis.is_some()) {
        let items = tensors.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        (items, positional_axis.unwrap_or(axis))
    } else {
        (std::iter::once(tensors.clone()).chain(more).collect(), axis)
    };
    let tensor = container::registry()?.matrix.clone_ref(py).into_bound(py);
    let vectors = !items.iter().any(|p| p.get_type().is(&tensor));
    let pieces = items
        .iter()
        .map(|p| {
            if vectors {
                if let Some(s) = nd_scalar(p)? {
                    return Ok((PyTuple::new(py, [s])?, vec![1]));
                }
                let leaves = nd_vector_leaves(p)?;
                let n = leaves.len();
                return Ok((leaves, vec![n]));
            }
            let (leaves, shape) = nd_tensor_leaves(p, None)?;
            Ok((leaves, shape.extract()?))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let (leaves, shape) = join(py, pieces, axis)?;
    Ok((leaves, shape, vectors))
}

/// Leaves of `pieces` (each its leaves and shape, of one rank) joined along `axis`
/// (negative from the end), NumPy's `concatenate`: the leaves and shape of the result.
fn join<'py>(
    py: Python<'py>,
    pieces: Vec<(Bound<'py, PyTuple>, Vec<usize>)>,
    axis: i64,
) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
    let Some((_, base)) = pieces.first() else {
        return Err(PyValueError::new_err("concat needs at least one piece"));
    };
    let nd = base.len() as i64;
    if nd == 0 {
        return Err(PyValueError::new_err(
            "concat: 0-d tensors cannot be joined; use vectors or 1-D tensors",
        ));
    }
    if !(-nd..nd).contains(&axis) {
        let msg = format!(
            "axis {axis} is out of bounds for pieces of shape {}",
            show(base)
        );
        return Err(PyErr::from_type(axis_error(py)?.clone(), msg));
    }
    let ax = axis.rem_euclid(nd) as usize;
    let mut joined = 0;
    for (_, s) in &pieces {
        if s.len() != base.len() || s[..ax] != base[..ax] || s[ax + 1..] != base[ax + 1..] {
            return Err(PyValueError::new_err(format!(
                "cannot concatenate tensors of shapes {} and {} along axis {ax}",
                show(base),
                show(s)
            )));
        }
        joined += s[ax];
    }
    let outer: usize = base[..ax].iter().product();
    let mut out = Vec::new();
    for o in 0..outer {
        for (leaves, s) in &pieces {
            let n: usize = s[ax..].iter().product();
            for i in o * n..(o + 1) * n {
                out.push(leaves.get_item(i)?);
            }
        }
    }
    let mut shape = base.clone();
    shape[ax] = joined;
    Ok((PyTuple::new(py, out)?, tuple(py, &shape)?))
}

/// Registers the constructors' functions in `copapy._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ARANGE_MAX", ARANGE_MAX)?;
    m.add_function(wrap_pyfunction!(nd_shape_arg, m)?)?;
    m.add_function(wrap_pyfunction!(nd_filled, m)?)?;
    m.add_function(wrap_pyfunction!(nd_eye, m)?)?;
    m.add_function(wrap_pyfunction!(nd_diagonal, m)?)?;
    m.add_function(wrap_pyfunction!(nd_arange, m)?)?;
    m.add_function(wrap_pyfunction!(nd_concat, m)?)?;
    Ok(())
}
