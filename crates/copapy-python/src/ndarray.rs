//! Reading NumPy arrays (any numeric dtype, byte order and memory layout) through the
//! buffer protocol.
//!
//! The buffer gives the element format, shape and strides, so strided, non-contiguous,
//! read-only and byte-swapped arrays are read element by element in C order without a
//! copy on the Python side. Every element becomes an exact [`Number`]; converting it to
//! the variable's type is the job of [`crate::convert`], as for any other number. Formats
//! copapy has no exact meaning for (complex, long double, objects, records) are refused
//! with an error that names the dtype.

use std::ffi::CStr;

use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use copapy_compiler::ScalarType;

use crate::convert::{type_name, Number};

/// What one element of an array is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Kind {
    Bool,
    Signed,
    Unsigned,
    Float,
}

/// Element format: kind, size in bytes and byte order. Two arrays share a jit
/// specialisation only if their formats are equal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Elem {
    pub kind: Kind,
    pub size: u8,
    pub big_endian: bool,
}

impl Elem {
    /// The copapy type the elements become: floats → float, integers → int, bools → bool.
    pub fn scalar_type(self) -> ScalarType {
        match self.kind {
            Kind::Bool => ScalarType::Bool,
            Kind::Signed | Kind::Unsigned => ScalarType::Int,
            Kind::Float => ScalarType::Float,
        }
    }

    /// A compact code for signatures (kind, size and byte order in one number).
    pub fn code(self) -> u32 {
        let kind = match self.kind {
            Kind::Bool => 0,
            Kind::Signed => 1,
            Kind::Unsigned => 2,
            Kind::Float => 3,
        };
        (kind << 16) | (u32::from(self.size) << 1) | u32::from(self.big_endian)
    }

    fn decode(self, raw: &[u8]) -> Number {
        let mut b = [0u8; 8];
        let n = usize::from(self.size);
        // normalise to little-endian
        if self.big_endian {
            for (d, s) in b[..n].iter_mut().zip(raw[..n].iter().rev()) {
                *d = *s;
            }
        } else {
            b[..n].copy_from_slice(&raw[..n]);
        }
        let unsigned = u64::from_le_bytes(b);
        match self.kind {
            Kind::Bool => Number::Bool(unsigned != 0),
            Kind::Unsigned => Number::Int(i128::from(unsigned)),
            Kind::Signed => {
                let shift = 64 - 8 * n as u32;
                Number::Int(i128::from(((unsigned << shift) as i64) >> shift))
            }
            Kind::Float => Number::Float(match n {
                2 => f64::from(half_to_f32(unsigned as u16)),
                4 => f64::from(f32::from_bits(unsigned as u32)),
                _ => f64::from_bits(unsigned),
            }),
        }
    }
}

/// IEEE binary16 → binary32 (exact: every half is a float).
fn half_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // subnormal half: m * 2^-24, exact in f32
            let f = m as f32 * f32::from_bits(0x3380_0000); // 2^-24
            return if sign != 0 { -f } else { f };
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Parses a buffer format string (struct module syntax, one element).
fn parse_format(format: &str, itemsize: usize) -> Option<Elem> {
    let native_big = cfg!(target_endian = "big");
    let (big_endian, code) = match format.as_bytes() {
        [b'<', c] => (false, *c),
        [b'>' | b'!', c] => (true, *c),
        [b'=' | b'@', c] | [c] => (native_big, *c),
        _ => return None,
    };
    let kind = match code {
        b'?' => Kind::Bool,
        b'b' | b'h' | b'i' | b'l' | b'q' | b'n' => Kind::Signed,
        b'B' | b'H' | b'I' | b'L' | b'Q' | b'N' => Kind::Unsigned,
        b'e' | b'f' | b'd' => Kind::Float,
        _ => return None,
    };
    let size_ok = match kind {
        Kind::Bool => itemsize == 1,
        Kind::Signed | Kind::Unsigned => matches!(itemsize, 1 | 2 | 4 | 8),
        Kind::Float => matches!(itemsize, 2 | 4 | 8),
    };
    size_ok.then_some(Elem {
        kind,
        size: itemsize as u8,
        big_endian,
    })
}

/// A NumPy array's element format, shape and numbers (C order).
pub struct Array {
    pub elem: Elem,
    pub shape: Vec<usize>,
    pub numbers: Vec<Number>,
}

/// True for NumPy arrays and scalars (the objects this module reads).
///
/// An isinstance check against `numpy.ndarray` and `numpy.generic`, looked up once:
/// probing `__array_interface__` instead builds a dict on every call (about 1.7 µs,
/// most of a jit call's time).
pub fn is_numpy(obj: &Bound<'_, PyAny>) -> bool {
    static TYPES: PyOnceLock<Option<(Py<PyAny>, Py<PyAny>)>> = PyOnceLock::new();
    let py = obj.py();
    let types = TYPES.get_or_init(py, || {
        // NumPy not installed: no object can be a NumPy array
        let np = py.import("numpy").ok()?;
        Some((
            np.getattr("ndarray").ok()?.unbind(),
            np.getattr("generic").ok()?.unbind(),
        ))
    });
    match types {
        Some((array, scalar)) => {
            obj.is_instance(array.bind(py)).unwrap_or(false)
                || obj.is_instance(scalar.bind(py)).unwrap_or(false)
        }
        None => false,
    }
}

/// A buffer view released on drop.
struct View(ffi::Py_buffer);

impl Drop for View {
    fn drop(&mut self) {
        // SAFETY: the view was filled by a successful PyObject_GetBuffer and is released once.
        unsafe { ffi::PyBuffer_Release(&mut self.0) };
    }
}

fn unsupported(obj: &Bound<'_, PyAny>, why: &str) -> PyErr {
    let dtype = obj
        .getattr("dtype")
        .and_then(|d| d.str())
        .map(|s| s.to_string())
        .unwrap_or_else(|_| type_name(obj));
    PyTypeError::new_err(format!(
        "cannot pass a NumPy array of dtype {dtype} to copapy: {why}; convert it first, \
         e.g. with .astype(np.float32) or .astype(np.int32)"
    ))
}

/// A NumPy array's buffer: format, shape, strides, with the view kept until drop.
struct Buffer {
    view: View,
    elem: Elem,
    shape: Vec<usize>,
    strides: Vec<isize>,
}

impl Buffer {
    fn get(obj: &Bound<'_, PyAny>) -> PyResult<Buffer> {
        let py = obj.py();
        let mut raw = std::mem::MaybeUninit::<ffi::Py_buffer>::zeroed();
        // SAFETY: PyObject_GetBuffer fills the view or sets an exception and returns -1.
        let rc = unsafe {
            ffi::PyObject_GetBuffer(obj.as_ptr(), raw.as_mut_ptr(), ffi::PyBUF_RECORDS_RO)
        };
        if rc != 0 {
            let err = PyErr::take(py)
                .unwrap_or_else(|| PyBufferError::new_err("the array has no readable buffer"));
            return Err(
                if err.is_instance_of::<PyBufferError>(py)
                    || err.is_instance_of::<pyo3::exceptions::PyValueError>(py)
                {
                    unsupported(obj, "its memory cannot be read as numbers")
                } else {
                    err
                },
            );
        }
        // SAFETY: initialised by the successful call above.
        let view = View(unsafe { raw.assume_init() });
        let b = &view.0;
        let format = if b.format.is_null() {
            "B".to_string()
        } else {
            // SAFETY: a non-null format is a NUL-terminated string owned by the view.
            unsafe { CStr::from_ptr(b.format) }
                .to_string_lossy()
                .into_owned()
        };
        let itemsize = usize::try_from(b.itemsize).unwrap_or(0);
        let elem = parse_format(&format, itemsize).ok_or_else(|| {
            unsupported(
                obj,
                "copapy computes with bools, integers and floats of up to 64 bits only",
            )
        })?;
        let ndim = usize::try_from(b.ndim).unwrap_or(0);
        let (shape, strides): (Vec<usize>, Vec<isize>) = if ndim == 0 {
            (Vec::new(), Vec::new())
        } else {
            // SAFETY: with PyBUF_RECORDS_RO, shape and strides hold ndim entries each.
            unsafe {
                (
                    std::slice::from_raw_parts(b.shape, ndim)
                        .iter()
                        .map(|&d| d as usize)
                        .collect(),
                    std::slice::from_raw_parts(b.strides, ndim).to_vec(),
                )
            }
        };
        if !b.suboffsets.is_null() {
            return Err(unsupported(
                obj,
                "indirect (PIL-style) buffers are not supported",
            ));
        }
        Ok(Buffer {
            view,
            elem,
            shape,
            strides,
        })
    }

    fn count(&self) -> usize {
        self.shape.iter().product()
    }

    /// The whole memory as one slice, if the elements lie one after another in C order.
    fn contiguous(&self) -> Option<&[u8]> {
        let size = usize::from(self.elem.size);
        let mut expected = size as isize;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d > 1 && s != expected {
                return None;
            }
            expected *= d as isize;
        }
        let len = self.count() * size;
        if len == 0 {
            return Some(&[]);
        }
        // SAFETY: C-contiguous: the exporter's memory holds `count * itemsize` bytes from buf.
        Some(unsafe { std::slice::from_raw_parts(self.view.0.buf.cast::<u8>(), len) })
    }

    /// Every element in C order, exactly.
    fn numbers(&self) -> Vec<Number> {
        let count = self.count();
        let itemsize = usize::from(self.elem.size);
        let ndim = self.shape.len();
        let mut numbers = Vec::with_capacity(count);
        let base = self.view.0.buf.cast::<u8>().cast_const();
        let mut index = vec![0usize; ndim];
        for _ in 0..count {
            let offset: isize = index
                .iter()
                .zip(&self.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum();
            // SAFETY: the index is inside the shape, so base + offset .. + itemsize lies in
            // the exporter's memory as described by its strides.
            let bytes = unsafe { std::slice::from_raw_parts(base.offset(offset), itemsize) };
            numbers.push(self.elem.decode(bytes));
            for k in (0..ndim).rev() {
                index[k] += 1;
                if index[k] < self.shape[k] {
                    break;
                }
                index[k] = 0;
            }
        }
        numbers
    }
}

/// Reads every element of a NumPy array (or NumPy scalar) exactly; with `numbers` false
/// only its format and shape (`numbers` is then empty).
pub fn read(obj: &Bound<'_, PyAny>, numbers: bool) -> PyResult<Array> {
    let buffer = Buffer::get(obj)?;
    let numbers = if numbers {
        buffer.numbers()
    } else {
        Vec::new()
    };
    let Buffer { elem, shape, .. } = buffer;
    Ok(Array {
        elem,
        shape,
        numbers,
    })
}

/// Writes a NumPy array's elements into `out` as 4-byte copapy values (`convert` turns
/// one exact element into its bits), if its format is `elem` and its shape `shape`;
/// `Ok(false)` if not.
///
/// This is `@cp.jit`'s bulk copy: a C-contiguous array in the machine's byte order of
/// float32 or int32 is one copy, of float64 one rounding per element (`as f32` is the
/// correctly rounded conversion `convert` also does), in a tight loop; anything else
/// goes element by element through `convert`.
pub fn read_into(
    obj: &Bound<'_, PyAny>,
    elem: Elem,
    shape: &[usize],
    out: &mut [u8],
    convert: impl Fn(Number) -> PyResult<u32>,
) -> PyResult<bool> {
    let buffer = Buffer::get(obj)?;
    if buffer.elem != elem || buffer.shape != shape {
        return Ok(false);
    }
    let count = buffer.count();
    let Some(out) = out.get_mut(..4 * count) else {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "internal error: an array argument does not fit its data slots",
        ));
    };
    let native = elem.big_endian == cfg!(target_endian = "big");
    if let (true, Some(src)) = (native, buffer.contiguous()) {
        match (elem.kind, elem.size) {
            (Kind::Float, 4) | (Kind::Signed, 4) => {
                out.copy_from_slice(src);
                return Ok(true);
            }
            (Kind::Float, 8) => {
                for (dst, x) in out.chunks_exact_mut(4).zip(src.chunks_exact(8)) {
                    let x = f64::from_ne_bytes(x.try_into().unwrap_or([0; 8]));
                    dst.copy_from_slice(&(x as f32).to_le_bytes());
                }
                return Ok(true);
            }
            _ => {}
        }
    }
    for (dst, n) in out.chunks_exact_mut(4).zip(buffer.numbers()) {
        dst.copy_from_slice(&convert(n)?.to_le_bytes());
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_convert_exactly() {
        assert_eq!(half_to_f32(0x3c00), 1.0);
        assert_eq!(half_to_f32(0xc000), -2.0);
        assert_eq!(half_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(half_to_f32(0x7bff), 65504.0);
        assert!(half_to_f32(0x7c00).is_infinite());
        assert!(half_to_f32(0x7e00).is_nan());
        assert!(half_to_f32(0x8000).is_sign_negative());
    }

    #[test]
    fn formats_keep_byte_order() {
        let le = parse_format("<d", 8).unwrap();
        let be = parse_format(">d", 8).unwrap();
        assert_ne!(le.code(), be.code());
        assert_eq!(be.decode(&1.5f64.to_be_bytes()), Number::Float(1.5));
        let i = parse_format("<h", 2).unwrap();
        assert_eq!(i.decode(&(-3i16).to_le_bytes()), Number::Int(-3));
        assert!(parse_format("Zf", 8).is_none());
        assert!(parse_format("g", 16).is_none());
    }
}
