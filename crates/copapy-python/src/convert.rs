//! Python numbers ↔ 32-bit patterns of copapy scalars.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use copapy_compiler::ScalarType;

/// A Python number as a typed copapy constant, or `None` if `obj` is not a number.
///
/// bool → bool, int → int (must fit in int32), float → float (rounded to float32).
/// NumPy scalars work through `__index__` / `__float__`.
pub fn number_bits(obj: &Bound<'_, PyAny>) -> PyResult<Option<(ScalarType, u32)>> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some((ScalarType::Bool, obj.is_truthy()? as u32)));
    }
    if obj.is_instance_of::<PyFloat>() {
        let x: f64 = obj.extract()?;
        return Ok(Some((ScalarType::Float, (x as f32).to_bits())));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Some((ScalarType::Int, int32_bits(obj)?)));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(None);
    }
    // NumPy and other numeric scalars (arrays and other containers have a length)
    if obj.hasattr("__len__")? {
        return Ok(None);
    }
    if let Ok(kind) = obj.getattr("dtype").and_then(|d| d.getattr("kind")) {
        if kind.extract::<String>().is_ok_and(|k| k == "b") {
            return Ok(Some((ScalarType::Bool, obj.is_truthy()? as u32)));
        }
    }
    if obj.hasattr("__index__")? {
        return Ok(Some((ScalarType::Int, int32_bits(obj)?)));
    }
    if obj.hasattr("__float__")? {
        let x: f64 = obj.extract()?;
        return Ok(Some((ScalarType::Float, (x as f32).to_bits())));
    }
    Ok(None)
}

fn int32_bits(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    let wide: i128 = obj.extract().map_err(|_| {
        PyOverflowError::new_err(format!("integer {obj} is far outside the int32 range"))
    })?;
    let narrow = i32::try_from(wide).map_err(|_| {
        PyOverflowError::new_err(format!(
            "integer {wide} does not fit in int32 (copapy ints are 32-bit, from -2147483648 to 2147483647)"
        ))
    })?;
    Ok(narrow as u32)
}

/// Bits for writing `obj` into a variable of type `ty`, with a clear error for a wrong type.
pub fn bits_for(ty: ScalarType, obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    // any Python int fits a float variable once rounded, also beyond the int32 range
    if ty == ScalarType::Float && obj.is_exact_instance_of::<PyInt>() {
        let x: f64 = obj.extract()?;
        return Ok((x as f32).to_bits());
    }
    let Some((given, bits)) = number_bits(obj)? else {
        return Err(PyTypeError::new_err(format!(
            "cannot write {} to a {} value: expected a number",
            type_name(obj),
            ty.name()
        )));
    };
    match (ty, given) {
        (ScalarType::Float, ScalarType::Float) => Ok(bits),
        (ScalarType::Float, _) => Ok((bits as i32 as f32).to_bits()),
        (ScalarType::Int, ScalarType::Int | ScalarType::Bool) => Ok(bits),
        (ScalarType::Bool, ScalarType::Bool) => Ok(bits),
        (ScalarType::Bool, ScalarType::Int) if bits <= 1 => Ok(bits),
        (ScalarType::Bool, ScalarType::Int) => Err(PyValueError::new_err(format!(
            "cannot write {} to a bool value: expected True, False, 0 or 1",
            bits as i32
        ))),
        (_, ScalarType::Float) => Err(PyTypeError::new_err(format!(
            "cannot write float {} to {} value: convert it explicitly, e.g. int(x)",
            f32::from_bits(bits),
            if ty == ScalarType::Int {
                "an int"
            } else {
                "a bool"
            }
        ))),
    }
}

/// Python object for the bits of a scalar of type `ty`.
pub fn to_python(py: Python<'_>, ty: ScalarType, bits: u32) -> Py<PyAny> {
    match ty {
        ScalarType::Float => PyFloat::new(py, f64::from(f32::from_bits(bits)))
            .into_any()
            .unbind(),
        ScalarType::Int => (bits as i32)
            .into_pyobject(py)
            .expect("int")
            .into_any()
            .unbind(),
        ScalarType::Bool => PyBool::new(py, bits != 0).to_owned().into_any().unbind(),
    }
}

pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_string())
}

/// Parses a `dtype` argument.
pub fn parse_dtype(dtype: &str) -> PyResult<ScalarType> {
    match dtype {
        "float" => Ok(ScalarType::Float),
        "int" => Ok(ScalarType::Int),
        "bool" => Ok(ScalarType::Bool),
        other => Err(PyValueError::new_err(format!(
            "unknown dtype '{other}': use 'float', 'int' or 'bool'"
        ))),
    }
}
