//! What the leaf containers (`tensor`, `vector`, `quaternion`) ask of their elements: the
//! names `cp.cast` takes (the cast itself is `cast.rs`'), the leaves of a `vector(...)`
//! argument, and the numbers of `write_value` data checked against a shape; with the
//! container protocol's `describe`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PySet, PyString, PyTuple};

use super::cast::CAST_NAMES;
use super::leaves::{nd_check_leaves, nd_flatten};
use super::shapes::nd_plain_int;
use crate::container::{self, PyContainer};
use crate::convert::{check_dtype, type_name};
use crate::shape::show;

/// The names `cp.cast` takes: a dtype name or one of the Python types float, int, bool.
#[pyfunction]
pub fn nd_cast_dtype(dtype: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    let py = dtype.py();
    let name = if dtype.is(py.get_type::<PyFloat>()) {
        Some("float")
    } else if dtype.is(py.get_type::<PyBool>()) {
        Some("bool")
    } else if dtype.is(py.get_type::<PyInt>()) {
        Some("int")
    } else if let Ok(s) = dtype.cast::<PyString>() {
        CAST_NAMES.into_iter().find(|n| s == *n)
    } else {
        None
    };
    name.ok_or_else(|| {
        let shown = dtype
            .repr()
            .map_or_else(|_| type_name(dtype), |r| r.to_string());
        PyValueError::new_err(format!(
            "cannot cast to {shown}: use 'float', 'int', 'bool' or 'byte' (or the Python types \
             float, int, bool)"
        ))
    })
}

/// The NumPy array among sources: an object with `tolist` and `shape`.
fn numpy_like(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = x.py();
    Ok(x.hasattr(intern!(py, "tolist"))? && x.hasattr(intern!(py, "shape"))?)
}

fn iterable(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    x.get_type().hasattr(intern!(x.py(), "__iter__"))
}

/// The leaves of a `vector(...)` argument: a 1-D tensor's, a 1-D NumPy array's numbers, or
/// an iterable's elements (values and numbers, NumPy scalars as numbers).
#[pyfunction]
pub fn nd_vector_leaves<'py>(values: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let py = values.py();
    if values.is_instance(container::registry()?.matrix.bind(py))? {
        let shape: Vec<usize> = values.getattr(intern!(py, "shape"))?.extract()?;
        if shape.len() != 1 {
            return Err(PyValueError::new_err(format!(
                "a vector is 1-D; got a {} of shape {}",
                type_name(values),
                show(&shape)
            )));
        }
        return Ok(values
            .getattr(intern!(py, "values"))?
            .cast_into::<PyTuple>()?);
    }
    if values.is_instance_of::<PyString>()
        || values.is_instance_of::<PyBytes>()
        || !iterable(values)?
    {
        return Err(PyTypeError::new_err(format!(
            "vector() takes an iterable of values or numbers, not a {}",
            type_name(values)
        )));
    }
    let items = if numpy_like(values)? {
        check_dtype(values)?;
        let shape: Vec<usize> = values.getattr(intern!(py, "shape"))?.extract()?;
        if shape.len() != 1 {
            return Err(PyValueError::new_err(format!(
                "a vector is 1-D; got an array of shape {}",
                show(&shape)
            )));
        }
        values.call_method0(intern!(py, "tolist"))?
    } else {
        values.clone()
    };
    let leaves = PyTuple::new(py, items.try_iter()?.collect::<PyResult<Vec<_>>>()?)?;
    nd_check_leaves(&leaves, "vector")
}

/// Numbers of `write_value` data (nested lists or tuples, a NumPy array, a container of
/// numbers) in row-major order, checked against the `shape` of `what` they are written to.
#[pyfunction]
pub fn nd_flatten_data<'py>(
    data: &Bound<'py, PyAny>,
    shape: Vec<usize>,
    what: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let py = data.py();
    let unordered = data.is_instance_of::<PyString>()
        || data.is_instance_of::<PyBytes>()
        || data.is_instance_of::<PyDict>()
        || data.is_instance_of::<PySet>()
        || data.is_instance_of::<PyFrozenSet>();
    let is_data = container::describe(data)?.is_some()
        || data.hasattr(intern!(py, "shape"))?
        || iterable(data)?;
    if unordered || !is_data {
        return Err(PyTypeError::new_err(format!(
            "writing to {what} of shape {} needs a list or array of numbers, got a {}",
            show(&shape),
            type_name(data)
        )));
    }
    let (flat, dshape): (Vec<Bound<'py, PyAny>>, Vec<usize>) = if numpy_like(data)? {
        check_dtype(data)?; // before tolist(): complex, datetime, text, objects
        let dshape: Vec<usize> = data.getattr(intern!(py, "shape"))?.extract()?;
        let flat = if dshape.is_empty() {
            vec![data.call_method0(intern!(py, "item"))?]
        } else {
            let list = data
                .call_method1(intern!(py, "reshape"), (-1,))?
                .call_method0("tolist")?;
            list.try_iter()?.collect::<PyResult<_>>()?
        };
        (flat, dshape)
    } else {
        let (flat, dshape) = nd_flatten(data, "data")?;
        (flat, dshape.extract()?)
    };
    if dshape != shape {
        return Err(PyValueError::new_err(format!(
            "cannot write data of shape {} to {what} of shape {}: it takes {} numbers in that shape",
            show(&dshape),
            show(&shape),
            shape.iter().product::<usize>()
        )));
    }
    Ok(flat)
}

/// `x`'s descriptor if its class takes part in the container protocol, else None.
#[pyfunction]
pub fn nd_describe<'py>(x: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyContainer>>> {
    container::describe(x)
}

/// The leaves and shape of a `tensor(values, shape)` argument: nested data's, or with
/// `shape` (ints whose product is the number of leaves) the leaves in that shape.
#[pyfunction]
#[pyo3(signature = (values, shape = None))]
pub fn nd_tensor_leaves<'py>(
    values: &Bound<'py, PyAny>,
    shape: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
    let py = values.py();
    let (flat, dims) = nd_flatten(values, "tensor")?;
    let Some(shape) = shape else {
        return Ok((PyTuple::new(py, flat)?, dims));
    };
    let mut want = Vec::new();
    for d in shape.try_iter()? {
        let d = d?;
        match nd_plain_int(&d)? {
            Some(n) => want.push(n),
            None => {
                return Err(PyTypeError::new_err(format!(
                    "a tensor's shape holds ints, not {}",
                    type_name(&d)
                )))
            }
        }
    }
    let fits = want.iter().all(|&d| d >= 0)
        && want.iter().try_fold(1i64, |p, &d| p.checked_mul(d)) == Some(flat.len() as i64);
    if !fits {
        return Err(PyValueError::new_err(format!(
            "cannot make a tensor of shape {} from {} elements",
            show(&want),
            flat.len()
        )));
    }
    Ok((PyTuple::new(py, flat)?, PyTuple::new(py, want)?))
}

/// Registers the elements' functions in `copapy._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(nd_cast_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(nd_vector_leaves, m)?)?;
    m.add_function(wrap_pyfunction!(nd_tensor_leaves, m)?)?;
    m.add_function(wrap_pyfunction!(nd_flatten_data, m)?)?;
    m.add_function(wrap_pyfunction!(nd_describe, m)?)?;
    Ok(())
}
