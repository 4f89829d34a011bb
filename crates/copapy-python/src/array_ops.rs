//! The Rust half of `cp.array`: an opaque handle to an array node and the functions
//! that build array operations. `python/copapy/_array.py` holds the shape, dtype
//! and NumPy rules and calls these with flat arrays only.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use copapy_compiler::array;
use copapy_compiler::trace::TraceError;
use copapy_compiler::{Op, Value};

use crate::convert::{number_bits, parse_dtype, type_name};
use crate::value::PyValue;

/// A flat array node of the traced graph (what `cp.array` holds).
#[pyclass(module = "copapy._core", name = "ArrayNode", frozen)]
pub struct PyArrayNode {
    v: Value,
}

impl PyArrayNode {
    pub(crate) fn new(v: Value) -> PyArrayNode {
        v.expose();
        PyArrayNode { v }
    }

    /// The graph node.
    pub fn value(&self) -> &Value {
        &self.v
    }
}

impl Drop for PyArrayNode {
    fn drop(&mut self) {
        self.v.unexpose();
    }
}

#[pymethods]
impl PyArrayNode {
    /// Number of elements.
    fn __len__(&self) -> usize {
        array::len_of(&self.v).unwrap_or(0) as usize
    }

    /// Element type as stored: 'float', 'int' or 'bool'.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.v.ty().name()
    }

    /// Bytes per element in data memory: 1 for a byte array, else 4.
    #[getter]
    fn itemsize(&self) -> usize {
        if array::is_bytes(&self.v) {
            1
        } else {
            4
        }
    }
}

fn trace_err(e: TraceError) -> PyErr {
    PyTypeError::new_err(e.message)
}

fn wrap_array(py: Python<'_>, r: Result<Value, TraceError>) -> PyResult<Py<PyArrayNode>> {
    Py::new(py, PyArrayNode::new(r.map_err(trace_err)?))
}

fn wrap_value(py: Python<'_>, r: Result<Value, TraceError>) -> PyResult<Py<PyValue>> {
    Py::new(py, PyValue::from_graph(r.map_err(trace_err)?))
}

/// An operand: an array handle, a `value`, or a Python number (a constant).
pub(crate) fn operand(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(a) = obj.cast::<PyArrayNode>() {
        return Ok(a.get().v.clone());
    }
    if let Ok(v) = obj.cast::<PyValue>() {
        return Ok(v.get().value().clone());
    }
    match number_bits(obj)? {
        Some((ty, bits)) => Ok(Value::constant(ty, bits)),
        None => Err(PyTypeError::new_err(format!(
            "array operands must be arrays, copapy values or numbers, not {}",
            type_name(obj)
        ))),
    }
}

fn binary_op(name: &str) -> PyResult<Op> {
    Op::from_name(name)
        .filter(|o| Op::BINARY.contains(o))
        .ok_or_else(|| PyValueError::new_err(format!("unknown array operation '{name}'")))
}

fn unary_op(name: &str) -> PyResult<Op> {
    Op::from_name(name)
        .filter(|o| Op::UNARY.contains(o))
        .ok_or_else(|| PyValueError::new_err(format!("unknown array function '{name}'")))
}

/// A new input array of `dtype` from little-endian 4-byte elements (float32 bits, or
/// int32; bools 0/1), one bulk copy.
#[pyfunction]
pub fn array_data(
    py: Python<'_>,
    dtype: &str,
    data: &Bound<'_, PyBytes>,
) -> PyResult<Py<PyArrayNode>> {
    let ty = parse_dtype(dtype)?;
    let bytes = data.as_bytes();
    if bytes.len() % 4 != 0 {
        return Err(PyValueError::new_err(
            "array data must be 4 bytes per element",
        ));
    }
    let init = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    wrap_array(py, array::data(ty, init))
}

/// A new input byte array (one byte per element in data memory), one bulk copy.
#[pyfunction]
pub fn array_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<Py<PyArrayNode>> {
    wrap_array(py, array::data_bytes(data.as_bytes()))
}

/// An array of `dtype` gathering values and numbers (one store per traced element).
#[pyfunction]
pub fn array_pack(
    py: Python<'_>,
    dtype: &str,
    elements: Vec<Bound<'_, PyAny>>,
) -> PyResult<Py<PyArrayNode>> {
    let ty = parse_dtype(dtype)?;
    let values = elements.iter().map(operand).collect::<PyResult<Vec<_>>>()?;
    wrap_array(py, array::pack(ty, &values))
}

/// Element-wise binary operation `op` (a scalar operation name such as 'add', 'lt').
#[pyfunction]
pub fn array_binary(
    py: Python<'_>,
    op: &str,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyArrayNode>> {
    wrap_array(
        py,
        array::binary(binary_op(op)?, &operand(a)?, &operand(b)?),
    )
}

/// Element-wise unary operation `op` ('neg', 'abs', 'sqrt', 'sin', … 'itof').
#[pyfunction]
pub fn array_unary(
    py: Python<'_>,
    op: &str,
    a: &Bound<'_, PyArrayNode>,
) -> PyResult<Py<PyArrayNode>> {
    wrap_array(py, array::unary(unary_op(op)?, &a.get().v))
}

/// The array converted element-wise to `dtype` ('float', 'int', 'bool'): `cp.cast`.
#[pyfunction]
pub fn array_cast(
    py: Python<'_>,
    a: &Bound<'_, PyArrayNode>,
    dtype: &str,
) -> PyResult<Py<PyArrayNode>> {
    wrap_array(py, array::cast(&a.get().v, parse_dtype(dtype)?))
}

/// Element-wise `cond ? x : y`.
#[pyfunction]
pub fn array_select(
    py: Python<'_>,
    cond: &Bound<'_, PyArrayNode>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<Py<PyArrayNode>> {
    wrap_array(py, array::select(&cond.get().v, &operand(x)?, &operand(y)?))
}

#[pyfunction]
pub fn array_elements(py: Python<'_>, a: &Bound<'_, PyArrayNode>) -> PyResult<Vec<Py<PyValue>>> {
    let v = &a.get().v;
    let len = array::len_of(v).unwrap_or(0);
    (0..len)
        .map(|k| wrap_value(py, array::element(v, k)))
        .collect()
}

/// The array whose elements `values` are, in order (all of them, aliases made by
/// [`array_elements`]), or `None`.
#[pyfunction]
pub fn array_of_elements(
    py: Python<'_>,
    values: Vec<Bound<'_, PyValue>>,
) -> PyResult<Option<Py<PyArrayNode>>> {
    use copapy_compiler::array::ArrayOp;
    use copapy_compiler::graph::NodeKind;
    let mut owner: Option<Value> = None;
    for (k, item) in values.iter().enumerate() {
        let NodeKind::Array(n) = item.get().value().kind() else {
            return Ok(None);
        };
        if n.op != ArrayOp::Element(k as u32) {
            return Ok(None);
        }
        match &owner {
            None => owner = Some(n.args[0].clone()),
            Some(o) if o.ptr_eq(&n.args[0]) => {}
            Some(_) => return Ok(None),
        }
    }
    match owner {
        Some(o) if array::len_of(&o) == Some(values.len() as u32) => {
            Ok(Some(Py::new(py, PyArrayNode::new(o))?))
        }
        _ => Ok(None),
    }
}

/// Element `k` of a flat array: a value read from the array's memory, no code.
#[pyfunction]
pub fn array_element(py: Python<'_>, a: &Bound<'_, PyArrayNode>, k: u32) -> PyResult<Py<PyValue>> {
    wrap_value(py, array::element(&a.get().v, k))
}

/// Structural array operation `name` (a public row of
/// `copapy_compiler::array_kernels::KERNELS`: `"solve"`, `"conv2d"`, `"narrow"`, ...) of
/// `operands` (arrays, values or numbers) with the integer `params` its rule takes: an
/// array, or a value for the rows with a scalar result.
#[pyfunction]
pub fn array_kernel(
    py: Python<'_>,
    name: &str,
    operands: Vec<Bound<'_, PyAny>>,
    params: Vec<i64>,
) -> PyResult<Py<PyAny>> {
    let values = operands.iter().map(operand).collect::<PyResult<Vec<_>>>()?;
    let scalar = copapy_compiler::array_kernels::named(name).is_some_and(|k| k.scalar);
    let r = copapy_compiler::array_build::build(name, &values, &params);
    Ok(if scalar {
        wrap_value(py, r)?.into_any()
    } else {
        wrap_array(py, r)?.into_any()
    })
}
