//! An array's data from numbers: `cp.array(data, dtype)` and `Target.write_value(array,
//! data)` take nested sequences or a NumPy array (read through its buffer,
//! `numpy_buffer.rs`) and store 4-byte elements of the array's dtype, with one set of
//! checks and errors (a float in an int array, a number outside the dtype).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use copapy_compiler::{array, ScalarType, Value};

use super::errors::{element_error, tuple};
use super::leaves::{is_traced, nd_dtype, nd_flatten};
use super::shapes::nd_check_shape;
use super::storage::built;
use crate::array_ops::{operand, PyArrayNode};
use crate::convert::{check_dtype, number, parse_dtype, type_name, Number};
use crate::numpy_buffer;
use crate::shape::show;

const DTYPES: [&str; 4] = ["float", "int", "bool", "byte"];

/// The range of an int, bool or byte array's elements.
fn limits(dtype: &str) -> (i128, i128) {
    match dtype {
        "bool" => (0, 1),
        "byte" => (0, 255),
        _ => (i128::from(i32::MIN), i128::from(i32::MAX)),
    }
}

/// The 4-byte element of number `n` in an array of `dtype`. `leaf` is the Python number
/// `n` came from (its errors name it), None for NumPy data (its errors name the data).
fn element(
    py: Python<'_>,
    dtype: &str,
    n: Number,
    leaf: Option<&Bound<'_, PyAny>>,
) -> PyResult<u32> {
    if dtype == "float" {
        return Ok(n.float_bits());
    }
    let (lo, hi) = limits(dtype);
    let i = match n {
        Number::Bool(b) => i128::from(b),
        Number::Int(i) => i,
        Number::WideInt(_) => i128::MAX,
        Number::Float(_) => {
            let msg = match leaf {
                Some(l) => format!(
                    "a {dtype} array cannot hold the float {}: use dtype='float'",
                    l.repr()?
                ),
                None => {
                    format!("cannot store float data in a {dtype} array: convert it explicitly")
                }
            };
            return Err(PyErr::from_type(element_error(py)?.clone(), msg));
        }
    };
    if !(lo..=hi).contains(&i) {
        return Err(PyValueError::new_err(match leaf {
            Some(l) => format!(
                "{} does not fit a {dtype} array (from {lo} to {hi})",
                l.str()?
            ),
            None => format!("the data does not fit a {dtype} array (from {lo} to {hi})"),
        }));
    }
    Ok(i as i32 as u32)
}

/// The elements of a NumPy array (C order) in an array of `dtype`.
fn numpy_elements(py: Python<'_>, data: &numpy_buffer::Array, dtype: &str) -> PyResult<Vec<u32>> {
    data.numbers
        .iter()
        .map(|&n| element(py, dtype, n, None))
        .collect()
}

/// The numbers of a NumPy array (after the dtype check). A float wider than 64 bits
/// (long double), which the buffer reader refuses, is rounded to float32 by NumPy first.
fn numpy_numbers(data: &Bound<'_, PyAny>) -> PyResult<numpy_buffer::Array> {
    check_dtype(data)?;
    match numpy_buffer::read(data, true) {
        Err(e)
            if data
                .getattr("dtype")?
                .getattr("kind")?
                .extract::<String>()?
                == "f" =>
        {
            let narrow = data.call_method1("astype", ("float32",)).map_err(|_| e)?;
            numpy_buffer::read(&narrow, true)
        }
        read => read,
    }
}

/// The elements of plain numbers (leaves) in an array of `dtype`.
fn leaf_elements(py: Python<'_>, leaves: &[Bound<'_, PyAny>], dtype: &str) -> PyResult<Vec<u32>> {
    leaves
        .iter()
        .map(|x| match number(x)? {
            Some(n) => element(py, dtype, n, Some(x)),
            None => Err(PyTypeError::new_err(format!(
                "an array holds numbers, not {}",
                type_name(x)
            ))),
        })
        .collect()
}

/// An input array of `dtype` holding `elements` (a byte array one byte of each: they were
/// checked to be 0..255).
fn data_node(dtype: &str, elements: Vec<u32>) -> PyResult<Value> {
    if dtype == "byte" {
        let bytes: Vec<u8> = elements.iter().map(|&e| e as u8).collect();
        return built(array::data_bytes(&bytes));
    }
    built(array::data(parse_dtype(dtype)?, elements))
}

/// The elements of nested sequences and their shape (an array has at least one).
fn flat_leaves<'py>(data: &Bound<'py, PyAny>) -> PyResult<(Vec<Bound<'py, PyAny>>, Vec<usize>)> {
    let (flat, shape) = nd_flatten(data, "array")?;
    let shape: Vec<usize> = shape.extract()?;
    if shape.contains(&0) {
        return Err(PyValueError::new_err(
            "an array needs at least one element; empty sequences have no dtype",
        ));
    }
    Ok((flat, shape))
}

/// `cp.array(data, dtype)`'s storage: the input array node (or the node gathering traced
/// elements), its shape and dtype (inferred float > int > bool when None).
#[pyfunction]
#[pyo3(signature = (data, dtype = None))]
pub fn nd_array_data<'py>(
    data: &Bound<'py, PyAny>,
    dtype: Option<&str>,
) -> PyResult<(Py<PyArrayNode>, Bound<'py, PyTuple>, String)> {
    let py = data.py();
    if let Some(d) = dtype.filter(|d| !DTYPES.contains(d)) {
        return Err(PyValueError::new_err(format!(
            "unknown dtype {}: use one of 'float', 'int', 'bool', 'byte'",
            d.into_pyobject(py)?.repr()?
        )));
    }
    if numpy_buffer::is_ndarray(data) {
        let a = numpy_numbers(data)?;
        if a.shape.is_empty() || a.numbers.is_empty() {
            return Err(PyValueError::new_err(
                "an array needs at least one dimension and one element",
            ));
        }
        nd_check_shape(vec![a.numbers.len()])?;
        let dtype = dtype.unwrap_or(a.elem.scalar_type().name()).to_string();
        let node = data_node(&dtype, numpy_elements(py, &a, &dtype)?)?;
        return Ok((
            Py::new(py, PyArrayNode::new(node))?,
            tuple(py, &a.shape)?,
            dtype,
        ));
    }
    let (flat, shape) = flat_leaves(data)?;
    if shape.is_empty() {
        return Err(PyValueError::new_err(
            "an array needs at least one dimension: use cp.value for a scalar",
        ));
    }
    nd_check_shape(vec![flat.len()])?;
    let inferred = nd_dtype(flat.clone())?;
    let dtype = dtype.unwrap_or(inferred).to_string();
    let refuse = |msg: &str| {
        Err(PyErr::from_type(
            element_error(py)?.clone(),
            msg.to_string(),
        ))
    };
    if dtype != "float" && inferred == "float" {
        return refuse(&format!(
            "float elements cannot go into a {dtype} array: use dtype='float'"
        ))?;
    }
    if dtype == "bool" && inferred == "int" {
        return refuse("int elements cannot go into a bool array: compare them, e.g. x != 0")?;
    }
    let node = if flat.iter().any(is_traced) {
        let stored = if dtype == "byte" {
            ScalarType::Int
        } else {
            parse_dtype(&dtype)?
        };
        let values = flat.iter().map(operand).collect::<PyResult<Vec<_>>>()?;
        let node = built(array::pack(stored, &values))?;
        if dtype == "byte" {
            built(array::to_bytes(&node))? // saturating: the values are not known yet
        } else {
            node
        }
    } else {
        data_node(&dtype, leaf_elements(py, &flat, &dtype)?)?
    };
    Ok((
        Py::new(py, PyArrayNode::new(node))?,
        tuple(py, &shape)?,
        dtype,
    ))
}

/// `Target.write_value` data for an array of `shape` and `dtype`: nested lists or a NumPy
/// array as little-endian 4-byte elements, with clear shape and range errors.
#[pyfunction]
pub fn nd_encode<'py>(
    data: &Bound<'py, PyAny>,
    shape: Vec<usize>,
    dtype: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let py = data.py();
    let (got, elements) = if numpy_buffer::is_ndarray(data) {
        let a = numpy_numbers(data)?;
        let elements = if a.shape == shape {
            numpy_elements(py, &a, dtype)?
        } else {
            Vec::new()
        };
        (a.shape, elements)
    } else {
        let (flat, got) = flat_leaves(data)?;
        if got == shape && flat.iter().any(is_traced) {
            return Err(PyTypeError::new_err(
                "write_value needs numbers, not copapy values",
            ));
        }
        let elements = if got == shape {
            leaf_elements(py, &flat, dtype)?
        } else {
            Vec::new()
        };
        (got, elements)
    };
    if got != shape {
        return Err(PyValueError::new_err(format!(
            "cannot write data of shape {} to an array of shape {}",
            show(&got),
            show(&shape)
        )));
    }
    let bytes: Vec<u8> = elements.iter().flat_map(|e| e.to_le_bytes()).collect();
    Ok(PyBytes::new(py, &bytes))
}
