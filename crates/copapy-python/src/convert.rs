//! Python numbers ↔ 32-bit patterns of copapy scalars.
//!
//! A Python (or NumPy) number is first read *exactly* into a [`Number`]: a Python int keeps
//! all its digits (up to 128 bits, beyond that only its correctly rounded float32 matters),
//! a float keeps its 64 bits. Only then is it converted to the type of the variable or
//! constant, once, so no value is rounded twice (`cp.value(123456789.0, 'int')` is
//! 123456789, not the float32 neighbour 123456792). Exceptions raised by a user object's
//! `__index__` or `__float__` propagate unchanged.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use copapy_compiler::ScalarType;

/// A Python number, read without rounding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Bool(bool),
    /// An integer that fits in 128 bits.
    Int(i128),
    /// An integer beyond 128 bits: only its float32 rounding (±inf) is ever needed.
    WideInt(f32),
    Float(f64),
}

impl Number {
    /// The copapy type a number of this kind gets on its own: bool, int (int32) or float.
    pub fn natural_type(self) -> ScalarType {
        match self {
            Number::Bool(_) => ScalarType::Bool,
            Number::Int(_) | Number::WideInt(_) => ScalarType::Int,
            Number::Float(_) => ScalarType::Float,
        }
    }

    /// Bits of the number as its natural type; ints must fit in int32.
    pub fn natural_bits(self) -> PyResult<(ScalarType, u32)> {
        let ty = self.natural_type();
        let bits = match self {
            Number::Bool(b) => u32::from(b),
            Number::Int(_) | Number::WideInt(_) => self.int32_bits()?,
            Number::Float(x) => (x as f32).to_bits(),
        };
        Ok((ty, bits))
    }

    /// The float32 nearest to the number (round to nearest, ties to even; ±inf beyond range).
    pub fn float_bits(self) -> u32 {
        let x = match self {
            Number::Bool(b) => f32::from(u8::from(b)),
            // i128 → f32 is a single correct rounding (f64 in between would round twice)
            Number::Int(i) => i as f32,
            Number::WideInt(f) => f,
            Number::Float(x) => x as f32,
        };
        x.to_bits()
    }

    /// Bits of an integer that must fit in int32 (bools are 0 and 1).
    pub fn int32_bits(self) -> PyResult<u32> {
        match self {
            Number::Bool(b) => Ok(u32::from(b)),
            Number::Int(i) => i32::try_from(i).map(|n| n as u32).map_err(|_| {
                PyOverflowError::new_err(format!(
                    "integer {i} does not fit in int32 (copapy ints are 32-bit, from -2147483648 to 2147483647)"
                ))
            }),
            Number::WideInt(_) => Err(PyOverflowError::new_err(
                "integer is far outside the int32 range (copapy ints are 32-bit, from -2147483648 to 2147483647)",
            )),
            Number::Float(x) => Err(PyTypeError::new_err(format!(
                "expected an integer, got the float {x}"
            ))),
        }
    }
}

/// Reads a Python int (or anything `operator.index` accepts) exactly.
fn read_int(obj: &Bound<'_, PyAny>) -> PyResult<Number> {
    let py = obj.py();
    // operator.index: a user's __index__ may raise, and that exception must reach the caller
    let int = if obj.is_instance_of::<PyInt>() {
        obj.clone()
    } else {
        // through Python's operator.index: the module forbids unsafe code outside numpy_buffer.rs
        py.import(pyo3::intern!(py, "operator"))?
            .getattr(pyo3::intern!(py, "index"))?
            .call1((obj,))?
    };
    if let Ok(i) = int.extract::<i128>() {
        return Ok(Number::Int(i));
    }
    let negative = int.lt(0)?;
    let magnitude = if negative { int.neg()? } else { int };
    let f = magnitude
        .extract::<u128>()
        .map(|m| m as f32)
        .unwrap_or(f32::INFINITY);
    Ok(Number::WideInt(if negative { -f } else { f }))
}

/// A Python or NumPy number read exactly, or `None` if `obj` is not a number.
///
/// bool and NumPy bool → `Bool`; int and NumPy integers → `Int`; float and NumPy floats →
/// `Float`. Complex numbers are refused rather than silently losing their imaginary part.
pub fn number(obj: &Bound<'_, PyAny>) -> PyResult<Option<Number>> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some(Number::Bool(obj.is_truthy()?)));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Some(Number::Float(f.value())));
    }
    if obj.is_instance_of::<PyInt>() {
        return read_int(obj).map(Some);
    }
    if obj.is_instance_of::<PyString>() && !obj.hasattr("dtype")? {
        return Ok(None);
    }
    // NumPy scalars: a dtype that is not a number is refused here, whatever
    // `__index__`/`__float__` it has (a datetime64 would become a count of days)
    let kind = numpy_kind(obj)?;
    if let Some(kind) = kind {
        check_kind(obj, kind)?;
    }
    // arrays and other containers have a length; a 0-d NumPy array is its one number
    if obj.hasattr("__len__")? {
        if kind.is_some() && obj.getattr("ndim").and_then(|n| n.extract::<usize>()).ok() == Some(0)
        {
            return number(&obj.call_method0("item")?);
        }
        return Ok(None);
    }
    if kind == Some('b') {
        return Ok(Some(Number::Bool(obj.is_truthy()?)));
    }
    if obj.hasattr("__index__")? {
        return read_int(obj).map(Some);
    }
    if obj.hasattr("__float__")? {
        return Ok(Some(Number::Float(obj.extract::<f64>()?)));
    }
    Ok(None)
}

/// The NumPy dtype kind of `obj` (`'f'`, `'i'`, `'M'`, ...), if it has a dtype.
fn numpy_kind(obj: &Bound<'_, PyAny>) -> PyResult<Option<char>> {
    let Ok(dtype) = obj.getattr(pyo3::intern!(obj.py(), "dtype")) else {
        return Ok(None);
    };
    let Ok(kind) = dtype.getattr(pyo3::intern!(obj.py(), "kind")) else {
        return Ok(None);
    };
    Ok(kind.extract::<char>().ok())
}

/// Refuses NumPy data whose dtype kind copapy cannot hold exactly: only bools (`b`),
/// integers (`i`, `u`) and floats (`f`) are numbers here. Complex numbers would lose
/// their imaginary part, datetimes and timedeltas become counts of their unit, strings
/// and bytes would be parsed, objects and void records are not numbers.
fn check_kind(obj: &Bound<'_, PyAny>, kind: char) -> PyResult<()> {
    let why = match kind {
        'b' | 'i' | 'u' | 'f' => return Ok(()),
        'c' => "copapy has no complex numbers; pass .real or abs() explicitly",
        'M' | 'm' => {
            "a datetime or timedelta is not a number; convert it to a count explicitly, \
             e.g. (t - t0) / np.timedelta64(1, 's')"
        }
        'S' | 'U' => "copapy does not parse text; convert it explicitly, e.g. .astype(np.float32)",
        _ => {
            "copapy holds only bools, integers and floats; convert it explicitly, e.g. \
              .astype(np.float32)"
        }
    };
    let dtype = obj
        .getattr("dtype")
        .and_then(|d| d.str())
        .map(|s| s.to_string())
        .unwrap_or_else(|_| kind.to_string());
    Err(PyTypeError::new_err(format!(
        "cannot use NumPy data of dtype {dtype}: {why}"
    )))
}

/// `_core.check_dtype(data)`: raises the `TypeError` of [`check_kind`] if `data` (a
/// NumPy array or scalar) has a dtype copapy cannot hold exactly; anything without a
/// dtype passes. The Python containers call it before reading NumPy data in bulk.
#[pyfunction]
pub fn check_dtype(data: &Bound<'_, PyAny>) -> PyResult<()> {
    match numpy_kind(data)? {
        Some(kind) => check_kind(data, kind),
        None => Ok(()),
    }
}

/// A Python number as a typed copapy constant, or `None` if `obj` is not a number.
///
/// bool → bool, int → int (must fit in int32), float → float (rounded to float32).
pub fn number_bits(obj: &Bound<'_, PyAny>) -> PyResult<Option<(ScalarType, u32)>> {
    number(obj)?.map(Number::natural_bits).transpose()
}

/// Bits for writing `obj` into a variable of type `ty`, with a clear error for a wrong type.
///
/// A float variable takes any number (rounded once to float32); an int variable takes ints
/// and bools in the int32 range; a bool variable takes bools and the ints 0 and 1.
pub fn bits_for(ty: ScalarType, obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    let Some(n) = number(obj)? else {
        return Err(PyTypeError::new_err(format!(
            "cannot write {} to a {} value: expected a number",
            type_name(obj),
            ty.name()
        )));
    };
    match (ty, n) {
        (ScalarType::Float, n) => Ok(n.float_bits()),
        (_, Number::Float(x)) => Err(PyTypeError::new_err(format!(
            "cannot write float {x} to {} value: convert it explicitly, e.g. int(x)",
            if ty == ScalarType::Int {
                "an int"
            } else {
                "a bool"
            }
        ))),
        (ScalarType::Int, n) => n.int32_bits(),
        (ScalarType::Bool, Number::Bool(b)) => Ok(u32::from(b)),
        (ScalarType::Bool, Number::Int(i)) if i == 0 || i == 1 => Ok(i as u32),
        (ScalarType::Bool, _) => Err(PyValueError::new_err(
            "cannot write this integer to a bool value: expected True, False, 0 or 1",
        )),
    }
}

/// Bits of `cp.value(n, dtype=ty)`: an explicit conversion, as Python's `float()`,
/// `int()` (truncation toward zero) and `bool()` would do it, then to 32 bits.
pub fn convert_bits(ty: ScalarType, n: Number) -> PyResult<u32> {
    match (ty, n) {
        (ScalarType::Float, n) => Ok(n.float_bits()),
        (ScalarType::Int, Number::Float(x)) => {
            // truncation of the exact double, never of a float32 rounding of it
            let t = x.trunc();
            if !(t >= f64::from(i32::MIN) && t <= f64::from(i32::MAX)) {
                return Err(PyValueError::new_err(format!(
                    "cannot make an int value from {x}: it is not a number in the int32 range"
                )));
            }
            Ok(t as i32 as u32)
        }
        (ScalarType::Int, n) => n.int32_bits(),
        (ScalarType::Bool, Number::Bool(b)) => Ok(u32::from(b)),
        (ScalarType::Bool, Number::Int(i)) => Ok(u32::from(i != 0)),
        (ScalarType::Bool, Number::WideInt(_)) => Ok(1),
        (ScalarType::Bool, Number::Float(x)) => Ok(u32::from(x != 0.0)),
    }
}

/// Python object for the bits of a scalar of type `ty`.
pub fn to_python(py: Python<'_>, ty: ScalarType, bits: u32) -> Py<PyAny> {
    match ty {
        ScalarType::Float => PyFloat::new(py, f64::from(f32::from_bits(bits)))
            .into_any()
            .unbind(),
        ScalarType::Int => PyInt::new(py, bits as i32).into_any().unbind(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_round_to_float32_once() {
        // 2^53 + 2^29 + 1: through f64 it would round to 2^53 + 2^29, a float32 tie that goes
        // down to even (2^53); rounded once it is above the tie and goes up.
        let n = (1i128 << 53) + (1 << 29) + 1;
        assert_eq!(
            f32::from_bits(Number::Int(n).float_bits()),
            ((1u64 << 53) + (1 << 30)) as f32
        );
        assert_eq!(
            f32::from_bits(Number::Int(16_777_217).float_bits()),
            16_777_216.0
        );
    }

    #[test]
    fn float_to_int_truncates_the_exact_double() {
        let bits = convert_bits(ScalarType::Int, Number::Float(123_456_789.0)).unwrap();
        assert_eq!(bits as i32, 123_456_789);
        let bits = convert_bits(ScalarType::Int, Number::Float(-2.9)).unwrap();
        assert_eq!(bits as i32, -2);
    }
}
