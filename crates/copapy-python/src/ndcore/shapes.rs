//! Shapes, axes, reshapes, transposes, broadcasts and static indices as NumPy takes them,
//! with NumPy's errors; the arithmetic is `shape.rs`'.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyTuple};

use copapy_compiler::array::MAX_LEN;

use super::errors::{axis_error, tuple};
use crate::convert::type_name;
use crate::shape::{self, show};
use crate::walk;

/// `x` as an index, axis or count, as NumPy takes one: an int or an object with
/// `__index__` (NumPy's integer scalars), never a bool; `None` for anything else.
#[pyfunction]
pub fn nd_plain_int(x: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if x.is_instance_of::<PyBool>() {
        return Ok(None);
    }
    if x.is_instance_of::<PyInt>() {
        return x.extract().map(Some);
    }
    let py = x.py();
    if walk::attr(x.get_type().as_any(), intern!(py, "__index__"))?.is_none() {
        return Ok(None);
    }
    match py.import("operator")?.getattr("index")?.call1((x,)) {
        Ok(i) => i.extract().map(Some),
        Err(e) if e.is_instance_of::<PyTypeError>(py) => Ok(None), // np.bool_ refuses it
        Err(e) => Err(e),
    }
}

/// One dimension as NumPy takes it: an int or anything with `__index__`, not a bool.
#[pyfunction]
pub fn nd_dim(d: &Bound<'_, PyAny>) -> PyResult<i64> {
    if d.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "an integer is required for a dimension, not a bool",
        ));
    }
    nd_plain_int(d)?.ok_or_else(|| {
        PyTypeError::new_err(format!("dimensions must be integers, not {}", type_name(d)))
    })
}

/// Refuses a shape beyond the most elements of one array (`ARRAY_MAX_LEN`), before
/// anything that large is built; a zero dimension does not excuse the others (NumPy).
#[pyfunction]
pub fn nd_check_shape(dims: Vec<usize>) -> PyResult<()> {
    match shape::check_size(&dims, MAX_LEN) {
        Ok(()) => Ok(()),
        Err(n) if !dims.contains(&0) => Err(PyValueError::new_err(format!(
            "an array of {n} elements is too large (at most {MAX_LEN})"
        ))),
        Err(n) => Err(PyValueError::new_err(format!(
            "a shape of {} is too large: its non-zero dimensions multiply to {n} elements, \
             more than the {MAX_LEN} an array can have",
            show(&dims)
        ))),
    }
}

/// The verb of an operation in shape errors.
fn verb(op: &str) -> &str {
    match op {
        "sub" => "subtract",
        "mul" => "multiply",
        "truediv" | "div" => "divide",
        "floordiv" => "floor-divide",
        "mod" => "take the remainder of",
        "pow" => "raise",
        "lt" | "le" | "gt" | "ge" | "eq" | "ne" => "compare",
        "matmul" => "matrix-multiply",
        "dot" => "take the dot product of",
        "cross" => "take the cross product of",
        other => other,
    }
}

fn shape_error(op: &str, kind: &str, a: &[usize], b: &[usize]) -> PyErr {
    PyValueError::new_err(format!(
        "cannot {} {kind} of shapes {} and {}: they do not broadcast",
        verb(op),
        show(a),
        show(b)
    ))
}

/// The one error for operands whose shapes do not fit (raised by the caller).
#[pyfunction]
#[pyo3(name = "nd_shape_error")]
pub fn nd_shape_error_py(
    py: Python<'_>,
    op: &str,
    kind: &str,
    a: Vec<usize>,
    b: Vec<usize>,
) -> Py<PyAny> {
    shape_error(op, kind, &a, &b).into_value(py).into_any()
}

/// NumPy's broadcast of two shapes; a `ValueError` naming `op`, `kind` and both shapes.
#[pyfunction]
#[pyo3(signature = (a, b, op = "combine", kind = "arrays"))]
pub fn nd_broadcast<'py>(
    py: Python<'py>,
    a: Vec<usize>,
    b: Vec<usize>,
    op: &str,
    kind: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    let out = shape::broadcast(&a, &b).ok_or_else(|| shape_error(op, kind, &a, &b))?;
    tuple(py, &out)
}

/// `shape` broadcast to `target` (a `ValueError` naming `what` if it is not), and the
/// strides that read it so: 0 along the repeated dimensions.
#[pyfunction]
pub fn nd_broadcast_strides(
    shape: Vec<usize>,
    target: Vec<usize>,
    what: &str,
) -> PyResult<Vec<isize>> {
    if target.len() < shape.len()
        || shape::broadcast(&shape, &target).as_deref() != Some(&target[..])
    {
        return Err(PyValueError::new_err(format!(
            "cannot broadcast {what} of shape {} to shape {}",
            show(&shape),
            show(&target)
        )));
    }
    Ok(shape::signed(&shape::broadcast_strides(&shape, &target)))
}

/// `axis` (None, an int, or a tuple or list of ints; negatives from the end) as sorted
/// axes, None for all of them; NumPy's errors (`what` names the container).
#[pyfunction]
pub fn nd_axes<'py>(
    axis: &Bound<'py, PyAny>,
    ndim: usize,
    what: &str,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let py = axis.py();
    if axis.is_none() {
        return Ok(None);
    }
    let items: Vec<Bound<'py, PyAny>> =
        if axis.is_instance_of::<PyTuple>() || axis.is_instance_of::<PyList>() {
            axis.try_iter()?.collect::<PyResult<_>>()?
        } else {
            vec![axis.clone()]
        };
    let n = ndim as i64;
    let mut out: Vec<usize> = Vec::new();
    for item in &items {
        let a = nd_plain_int(item)?.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "axis must be None, an int or a tuple of ints, not {}",
                type_name(item)
            ))
        })?;
        if !(-n..n).contains(&a) {
            return Err(PyErr::from_type(
                axis_error(py)?.clone(),
                format!(
                    "axis {a} is out of bounds for {what}: out of range -{n} .. {}",
                    n - 1
                ),
            ));
        }
        let a0 = a.rem_euclid(n) as usize;
        if out.contains(&a0) {
            return Err(PyValueError::new_err(format!(
                "axis {a} is given twice: each axis can be reduced once"
            )));
        }
        out.push(a0);
    }
    out.sort_unstable();
    tuple(py, &out).map(Some)
}

/// The arguments of `reshape`/`transpose`: ints, or one sequence of them.
fn one_or_many<'py>(spec: &Bound<'py, PyTuple>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if spec.len() == 1 {
        let first = spec.get_item(0)?;
        if !first.is_instance_of::<PyInt>() && first.hasattr("__iter__")? {
            return first.try_iter()?.collect();
        }
    }
    Ok(spec.iter().collect())
}

/// `transpose`'s axes (ints, or one sequence of them; none reverses) as a permutation of
/// `range(ndim)`, negatives from the end.
#[pyfunction]
pub fn nd_permutation(axes: &Bound<'_, PyTuple>, ndim: usize, what: &str) -> PyResult<Vec<usize>> {
    let items = one_or_many(axes)?;
    if items.is_empty() {
        return Ok((0..ndim).rev().collect());
    }
    let mut perm = Vec::with_capacity(items.len());
    for a in &items {
        let d = nd_dim(a)?;
        perm.push(if d < 0 { d + ndim as i64 } else { d });
    }
    let mut sorted = perm.clone();
    sorted.sort_unstable();
    if sorted != (0..ndim as i64).collect::<Vec<_>>() {
        let given = PyTuple::new(axes.py(), &items)?.repr()?;
        return Err(PyValueError::new_err(format!(
            "axes {given} do not permute the axes of {what}"
        )));
    }
    Ok(perm.into_iter().map(|d| d as usize).collect())
}

/// NumPy's reshape of `size` elements to `spec` (ints or one sequence of ints; one may be
/// negative, inferred), within the size limit; `what` names the container in errors.
#[pyfunction]
pub fn nd_reshape<'py>(
    spec: &Bound<'py, PyTuple>,
    size: usize,
    what: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    if spec.is_empty() {
        return Err(PyTypeError::new_err(
            "reshape() needs the new shape: ints or one sequence of ints",
        ));
    }
    let dims = one_or_many(spec)?
        .iter()
        .map(nd_dim)
        .collect::<PyResult<Vec<i64>>>()?;
    let out = shape::reshape(&dims, size).map_err(|e| match e {
        shape::ReshapeError::TwoUnknown => PyValueError::new_err(
            "can only specify one unknown dimension (a negative number) in a reshape",
        ),
        shape::ReshapeError::Mismatch => {
            PyValueError::new_err(format!("cannot reshape {what} into shape {}", show(&dims)))
        }
    })?;
    nd_check_shape(out.clone())?;
    tuple(spec.py(), &out)
}
