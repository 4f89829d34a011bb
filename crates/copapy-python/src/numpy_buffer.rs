//! Reading NumPy arrays (any numeric dtype, byte order and memory layout) through the
//! buffer protocol.
//!
//! The buffer gives the element format, shape and strides, so strided, non-contiguous,
//! read-only and byte-swapped arrays are read element by element in C order without a
//! copy on the Python side; C-contiguous float32/int32/float64 arrays in the machine's
//! byte order are copied in bulk. Acquiring a buffer allocates nothing on our side (the
//! shape and strides are read from the view), as `@cp.jit` does it on every call; for its
//! packed arguments [`direct`] skips even that when the array's dtype is already known. Every element becomes an exact [`Number`]; converting it to
//! the variable's type is the job of [`crate::convert`], as for any other number. Formats
//! copapy has no exact meaning for (complex, long double, objects, records) are refused
//! with an error that names the dtype.

use std::ffi::CStr;

use pyo3::exceptions::{PyBufferError, PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

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

    /// Whether the elements are in this machine's byte order.
    pub fn is_native(self) -> bool {
        self.big_endian == cfg!(target_endian = "big")
    }

    /// Whether an element's bytes are already a copapy data word (float32 or int32, in
    /// little-endian order, which data memory uses): a copy converts it.
    pub fn is_data_word(self) -> bool {
        matches!((self.kind, self.size), (Kind::Float, 4) | (Kind::Signed, 4)) && !self.big_endian
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

    /// The element whose bytes (in this format) are `raw`, exactly.
    pub fn decode(self, raw: &[u8]) -> Number {
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
fn parse_format(format: &[u8], itemsize: usize) -> Option<Elem> {
    let native_big = cfg!(target_endian = "big");
    let (big_endian, code) = match format {
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

/// NumPy's `ndarray` and `generic` types, looked up once (`None` without NumPy).
fn numpy_types(py: Python<'_>) -> Option<&(Py<PyAny>, Py<PyAny>)> {
    static TYPES: PyOnceLock<Option<(Py<PyAny>, Py<PyAny>)>> = PyOnceLock::new();
    TYPES
        .get_or_init(py, || {
            let np = py.import("numpy").ok()?;
            Some((
                np.getattr("ndarray").ok()?.unbind(),
                np.getattr("generic").ok()?.unbind(),
            ))
        })
        .as_ref()
}

/// True for NumPy arrays and scalars (the objects this module reads).
///
/// An isinstance check against `numpy.ndarray` and `numpy.generic`, looked up once:
/// probing `__array_interface__` instead builds a dict on every call (about 1.7 µs,
/// most of a jit call's time).
pub fn is_numpy(obj: &Bound<'_, PyAny>) -> bool {
    match numpy_types(obj.py()) {
        Some((array, scalar)) => {
            let py = obj.py();
            obj.is_instance(array.bind(py)).unwrap_or(false)
                || obj.is_instance(scalar.bind(py)).unwrap_or(false)
        }
        None => false,
    }
}

/// True for objects whose type is exactly `numpy.ndarray` (not a subclass).
pub fn is_exact_ndarray(obj: &Bound<'_, PyAny>) -> bool {
    numpy_types(obj.py()).is_some_and(|(array, _)| obj.get_type().is(array.bind(obj.py())))
}

/// True for NumPy arrays (not NumPy scalars), of any number of dimensions.
pub fn is_ndarray(obj: &Bound<'_, PyAny>) -> bool {
    numpy_types(obj.py())
        .is_some_and(|(array, _)| obj.is_instance(array.bind(obj.py())).unwrap_or(false))
}

/// A buffer view released on drop.
struct View(ffi::Py_buffer);

impl Drop for View {
    fn drop(&mut self) {
        // SAFETY: the view was filled by a successful PyObject_GetBuffer and is released once.
        unsafe { ffi::PyBuffer_Release(&mut self.0) };
    }
}

impl View {
    /// `PyObject_GetBuffer` with `flags`; the exporter's error (if any) on failure.
    fn get(obj: &Bound<'_, PyAny>, flags: std::os::raw::c_int) -> PyResult<View> {
        let mut raw = std::mem::MaybeUninit::<ffi::Py_buffer>::zeroed();
        // SAFETY: PyObject_GetBuffer fills the view or sets an exception and returns -1.
        let rc = unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), raw.as_mut_ptr(), flags) };
        if rc != 0 {
            return Err(PyErr::take(obj.py())
                .unwrap_or_else(|| PyBufferError::new_err("the object has no buffer")));
        }
        // SAFETY: initialised by the successful call above.
        Ok(View(unsafe { raw.assume_init() }))
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

/// A NumPy array's buffer, held until drop: its element format, shape and strides are
/// read from the view itself, so acquiring one allocates nothing on our side.
pub struct Buffer {
    view: View,
    elem: Elem,
}

impl Buffer {
    /// Acquires the buffer of a NumPy array or scalar (read-only access suffices).
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<Buffer> {
        let py = obj.py();
        let view = View::get(obj, ffi::PyBUF_RECORDS_RO).map_err(|err| {
            // TypeError: an object that passes isinstance(ndarray) without being one
            if err.is_instance_of::<PyBufferError>(py)
                || err.is_instance_of::<pyo3::exceptions::PyValueError>(py)
                || err.is_instance_of::<PyTypeError>(py)
            {
                unsupported(obj, "its memory cannot be read as numbers")
            } else {
                err
            }
        })?;
        let b = &view.0;
        let format: &[u8] = if b.format.is_null() {
            b"B"
        } else {
            // SAFETY: a non-null format is a NUL-terminated string owned by the view,
            // which outlives this borrow.
            unsafe { CStr::from_ptr(b.format) }.to_bytes()
        };
        let itemsize = usize::try_from(b.itemsize).unwrap_or(0);
        let elem = parse_format(format, itemsize).ok_or_else(|| {
            unsupported(
                obj,
                "copapy computes with bools, integers and floats of up to 64 bits only",
            )
        })?;
        if !b.suboffsets.is_null() {
            return Err(unsupported(
                obj,
                "indirect (PIL-style) buffers are not supported",
            ));
        }
        if b.ndim > 0 && (b.shape.is_null() || b.strides.is_null()) {
            return Err(unsupported(obj, "its buffer describes no shape or strides"));
        }
        Ok(Buffer { view, elem })
    }

    /// Whether this is the buffer of `obj` (the exporter the view refers to).
    pub fn is_of(&self, obj: &Bound<'_, PyAny>) -> bool {
        std::ptr::eq(self.view.0.obj, obj.as_ptr())
    }

    /// The element format.
    pub fn elem(&self) -> Elem {
        self.elem
    }

    fn dims(&self, ptr: *mut ffi::Py_ssize_t) -> &[isize] {
        let ndim = usize::try_from(self.view.0.ndim).unwrap_or(0);
        if ndim == 0 {
            return &[];
        }
        // SAFETY: with PyBUF_RECORDS_RO, shape and strides are non-null (checked in `get`)
        // and hold ndim entries each, owned by the view for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(ptr.cast_const(), ndim) }
    }

    /// The shape, as the exporter reports it (never negative).
    fn raw_shape(&self) -> &[isize] {
        self.dims(self.view.0.shape)
    }

    fn strides(&self) -> &[isize] {
        self.dims(self.view.0.strides)
    }

    /// Number of dimensions (0 for NumPy scalars and 0-d arrays).
    pub fn ndim(&self) -> usize {
        self.raw_shape().len()
    }

    /// The shape as a vector (allocates; for tracing, not for calls).
    pub fn shape(&self) -> Vec<usize> {
        self.raw_shape().iter().map(|&d| d as usize).collect()
    }

    /// Whether the shape is `shape`, compared without allocating.
    pub fn shape_is(&self, shape: &[usize]) -> bool {
        let own = self.raw_shape();
        own.len() == shape.len() && own.iter().zip(shape).all(|(&a, &b)| a as usize == b)
    }

    /// Each dimension in turn, for signatures.
    pub fn dims_u64(&self) -> impl Iterator<Item = u64> + '_ {
        self.raw_shape().iter().map(|&d| d as u64)
    }

    /// Number of elements.
    pub fn count(&self) -> usize {
        self.raw_shape().iter().map(|&d| d as usize).product()
    }

    /// The whole memory as one slice, if the elements lie one after another in C order.
    fn contiguous(&self) -> Option<&[u8]> {
        let size = usize::from(self.elem.size);
        let mut expected = size as isize;
        for (&d, &s) in self.raw_shape().iter().zip(self.strides()).rev() {
            if d > 1 && s != expected {
                return None;
            }
            expected *= d;
        }
        let len = self.count() * size;
        if len == 0 {
            return Some(&[]);
        }
        // SAFETY: C-contiguous: the exporter's memory holds `count * itemsize` bytes from
        // buf, alive while the view is held.
        Some(unsafe { std::slice::from_raw_parts(self.view.0.buf.cast::<u8>(), len) })
    }

    /// Calls `f` with every element in C order, exactly, without collecting them.
    pub fn for_each(&self, mut f: impl FnMut(Number) -> PyResult<()>) -> PyResult<()> {
        let count = self.count();
        let itemsize = usize::from(self.elem.size);
        if let Some(src) = self.contiguous() {
            for raw in src.chunks_exact(itemsize) {
                f(self.elem.decode(raw))?;
            }
            return Ok(());
        }
        let shape = self.raw_shape();
        let strides = self.strides();
        let ndim = shape.len();
        let base = self.view.0.buf.cast::<u8>().cast_const();
        // an odometer over the indices; at most 64 dimensions (NumPy allows 64)
        let mut index = [0isize; 64];
        if ndim > index.len() {
            return Err(PyBufferError::new_err(
                "an array of more than 64 dimensions",
            ));
        }
        for _ in 0..count {
            let offset: isize = index[..ndim]
                .iter()
                .zip(strides)
                .map(|(&i, &s)| i * s)
                .sum();
            // SAFETY: the index is inside the shape, so base + offset .. + itemsize lies in
            // the exporter's memory as described by its strides.
            let bytes = unsafe { std::slice::from_raw_parts(base.offset(offset), itemsize) };
            f(self.elem.decode(bytes))?;
            for k in (0..ndim).rev() {
                index[k] += 1;
                if index[k] < shape[k] {
                    break;
                }
                index[k] = 0;
            }
        }
        Ok(())
    }

    /// Every element in C order, exactly.
    pub fn numbers(&self) -> Vec<Number> {
        let mut numbers = Vec::with_capacity(self.count());
        // decoding itself cannot fail
        let _ = self.for_each(|n| {
            numbers.push(n);
            Ok(())
        });
        numbers
    }

    /// Writes the elements into `out` as consecutive 4-byte copapy values (little-endian);
    /// `convert` turns one exact element into its bits.
    ///
    /// This is `@cp.jit`'s bulk copy: a C-contiguous array in the machine's byte order of
    /// float32 or int32 is one `memcpy`, of float64 one rounding per element (`as f32`
    /// is the correctly rounded conversion `convert` also does) in a tight loop; anything
    /// else goes element by element through `convert`, still without Python.
    pub fn write_bits(
        &self,
        out: &mut [u8],
        convert: impl Fn(Number) -> PyResult<u32>,
    ) -> PyResult<()> {
        if let Some(src) = self.contiguous() {
            return write_contiguous(self.elem, src, out, convert);
        }
        let out = slots_for(self.count(), out)?;
        let mut chunks = out.chunks_exact_mut(4);
        self.for_each(|n| {
            if let Some(dst) = chunks.next() {
                dst.copy_from_slice(&convert(n)?.to_le_bytes());
            }
            Ok(())
        })
    }
}

/// The first `count` 4-byte slots of `out`.
fn slots_for(count: usize, out: &mut [u8]) -> PyResult<&mut [u8]> {
    out.get_mut(..4 * count).ok_or_else(|| {
        PyRuntimeError::new_err("internal error: an array argument does not fit its data slots")
    })
}

/// [`Buffer::write_bits`] for elements of format `elem` lying one after another in `src`.
pub fn write_contiguous(
    elem: Elem,
    src: &[u8],
    out: &mut [u8],
    convert: impl Fn(Number) -> PyResult<u32>,
) -> PyResult<()> {
    let size = usize::from(elem.size);
    let out = slots_for(src.len() / size, out)?;
    if elem.is_data_word() {
        out.copy_from_slice(src);
        return Ok(());
    }
    if elem.kind == Kind::Float && elem.size == 8 && elem.is_native() {
        for (dst, x) in out.chunks_exact_mut(4).zip(src.chunks_exact(8)) {
            let x = f64::from_ne_bytes(x.try_into().unwrap_or([0; 8]));
            dst.copy_from_slice(&(x as f32).to_le_bytes());
        }
        return Ok(());
    }
    for (dst, raw) in out.chunks_exact_mut(4).zip(src.chunks_exact(size)) {
        dst.copy_from_slice(&convert(elem.decode(raw))?.to_le_bytes());
    }
    Ok(())
}

/// The leading fields of NumPy's `PyArrayObject_fields` (`numpy/ndarraytypes.h`): the
/// same from NumPy 1.7 through 2.x, as every compiled NumPy extension reads them through
/// `PyArray_DATA` and friends. [`fields_usable`] checks them once per process anyway.
#[repr(C)]
struct ArrayFields {
    _ob_base: ffi::PyObject,
    data: *mut u8,
    nd: std::os::raw::c_int,
    dimensions: *const ffi::Py_ssize_t,
    strides: *const ffi::Py_ssize_t,
    _base: *mut ffi::PyObject,
    descr: *mut ffi::PyObject,
}

/// The fields of `obj`, if its type is `numpy.ndarray` or a subclass.
///
/// The type itself is checked, not `isinstance`, which also believes an object whose
/// `__class__` claims to be an ndarray (a mock, a proxy) without having its struct.
fn fields<'a>(obj: &'a Bound<'_, PyAny>) -> Option<&'a ArrayFields> {
    let (array, _) = numpy_types(obj.py())?;
    if !obj
        .get_type()
        .is_subclass(array.bind(obj.py()))
        .unwrap_or(false)
    {
        return None;
    }
    // SAFETY: every object of type ndarray or a subclass starts with
    // PyArrayObject_fields, whose leading part ArrayFields mirrors; the object outlives
    // the borrow.
    Some(unsafe { &*obj.as_ptr().cast::<ArrayFields>() })
}

/// Shape and strides of an array from its fields.
fn fields_dims(f: &ArrayFields) -> (&[isize], &[isize]) {
    let nd = usize::try_from(f.nd).unwrap_or(0);
    if nd == 0 || f.dimensions.is_null() || f.strides.is_null() {
        return (&[], &[]);
    }
    // SAFETY: a NumPy array's dimensions and strides arrays hold nd entries each and
    // live as long as the array.
    unsafe {
        (
            std::slice::from_raw_parts(f.dimensions, nd),
            std::slice::from_raw_parts(f.strides, nd),
        )
    }
}

/// Whether NumPy's array struct matches [`ArrayFields`] in this process: checked once,
/// on a strided probe array, against what the buffer protocol reports for it.
fn fields_usable(py: Python<'_>) -> bool {
    static USABLE: PyOnceLock<bool> = PyOnceLock::new();
    *USABLE.get_or_init(py, || {
        let check = || -> PyResult<bool> {
            let np = py.import("numpy")?;
            let probe = np
                .call_method1("arange", (24.0,))? // float64
                .call_method1("reshape", ((4, 6),))?
                .get_item((
                    pyo3::types::PySlice::new(py, 0, 4, 2),
                    pyo3::types::PySlice::new(py, 1, 6, 2),
                ))?;
            let Some(f) = fields(&probe) else {
                return Ok(false);
            };
            let view = View::get(&probe, ffi::PyBUF_RECORDS_RO)?;
            let b = &view.0;
            // plain fields first: the pointers in the others are followed only if these agree
            if b.ndim != 2 || f.nd != 2 || !std::ptr::eq(f.data.cast::<std::ffi::c_void>(), b.buf) {
                return Ok(false);
            }
            let (shape, strides) = fields_dims(f);
            Ok(shape == [2, 3]
                && strides == [96, 16]
                // SAFETY: with PyBUF_RECORDS_RO and ndim 2, shape and strides hold 2 entries.
                && unsafe { std::slice::from_raw_parts(b.shape, 2) } == shape
                && unsafe { std::slice::from_raw_parts(b.strides, 2) } == strides
                && std::ptr::eq(f.descr, probe.getattr("dtype")?.as_ptr()))
        };
        check().unwrap_or(false)
    })
}

/// What [`direct`] found.
pub enum Direct {
    /// The array has the expected dtype and shape; its elements were written.
    Written,
    /// The array has the expected dtype but another shape.
    OtherShape,
    /// Not decidable this way (another dtype object, not C-contiguous, not an ndarray,
    /// or NumPy's struct not as expected): use [`Buffer`].
    Unknown,
}

/// `@cp.jit`'s per-call read of a NumPy array argument without the buffer protocol
/// (whose export costs NumPy a format string and allocations per call): if `obj`'s dtype
/// is the very object `dtype` (so its format is `elem`), its shape is `shape` and its
/// memory C-contiguous, its elements are written into `out` as [`write_contiguous`] does.
pub fn direct(
    obj: &Bound<'_, PyAny>,
    dtype: &Py<PyAny>,
    elem: Elem,
    shape: &[usize],
    out: Option<&mut [u8]>,
    convert: impl Fn(Number) -> PyResult<u32>,
) -> PyResult<Direct> {
    let Some(f) = fields(obj) else {
        return Ok(Direct::Unknown);
    };
    let src = match matching_memory(obj.py(), f, dtype, elem, shape) {
        Ok(src) => src,
        Err(found) => return Ok(found),
    };
    if let Some(out) = out {
        if !src.is_empty() {
            write_contiguous(elem, src, out, convert)?;
        }
    }
    Ok(Direct::Written)
}

/// An exact `numpy.ndarray` of one dtype object and shape, C-contiguous: the form of an
/// array argument the jit's argument plan takes, and of the array a remembered
/// `Target.write_value` list takes (`target/remembered.rs`). Everything a call compares
/// against (the ndarray type, the dtype object, the dimensions and their C-order strides,
/// the length in bytes) is kept here, worked out once, so a call reads a few fields of
/// the array and looks nothing up.
pub struct ExactArray {
    array_type: Py<PyAny>,
    dtype: Py<PyAny>,
    dims: Box<[isize]>,
    strides: Box<[isize]>,
    nbytes: usize,
}

impl ExactArray {
    /// Arrays of format `elem` (the dtype object `dtype`) and `shape`; `None` where NumPy's
    /// struct cannot be read directly in this process ([`fields_usable`]).
    pub fn new(py: Python<'_>, dtype: &Py<PyAny>, elem: Elem, shape: &[usize]) -> Option<Self> {
        let (array, _) = numpy_types(py)?;
        if !fields_usable(py) {
            return None;
        }
        let dims = shape
            .iter()
            .map(|&d| isize::try_from(d).ok())
            .collect::<Option<Box<[isize]>>>()?;
        let mut strides = vec![0isize; dims.len()].into_boxed_slice();
        let mut nbytes = isize::from(elem.size);
        for (stride, &d) in strides.iter_mut().zip(dims.iter()).rev() {
            *stride = nbytes;
            nbytes = nbytes.checked_mul(d)?;
        }
        Some(ExactArray {
            array_type: array.clone_ref(py),
            dtype: dtype.clone_ref(py),
            dims,
            strides,
            nbytes: usize::try_from(nbytes).ok()?,
        })
    }

    /// The dtype object arrays must have.
    pub fn dtype(&self) -> &Py<PyAny> {
        &self.dtype
    }

    /// The elements of `obj` (C order, in its own format) if it is such an array: exactly
    /// `numpy.ndarray` (a subclass may behave otherwise), this very dtype object, this
    /// shape, C-contiguous (any stride for an axis of one element).
    #[inline]
    pub fn memory<'a>(&self, obj: &'a Bound<'_, PyAny>) -> Option<&'a [u8]> {
        // the type pointer, not `get_type()`: no reference count traffic per call
        if !std::ptr::eq(
            obj.get_type_ptr().cast::<ffi::PyObject>(),
            self.array_type.as_ptr(),
        ) {
            return None;
        }
        // SAFETY: the type is exactly numpy.ndarray, whose objects start with
        // PyArrayObject_fields, and `new` found that struct readable (`fields_usable`);
        // the object outlives the borrow.
        let f = unsafe { &*obj.as_ptr().cast::<ArrayFields>() };
        if !std::ptr::eq(f.descr, self.dtype.as_ptr()) {
            return None;
        }
        if let (&[want], &[want_stride]) = (&*self.dims, &*self.strides) {
            // a vector (most arguments): its one dimension and stride compared directly
            if f.nd != 1 || f.dimensions.is_null() || f.strides.is_null() {
                return None;
            }
            // SAFETY: a NumPy array of one dimension has one entry in each of its (non-null)
            // dimensions and strides arrays, alive as long as the array.
            let (d, s) = unsafe { (*f.dimensions, *f.strides) };
            if d != want || (d > 1 && s != want_stride) {
                return None;
            }
        } else {
            let (dims, strides) = fields_dims(f);
            if dims.len() != self.dims.len() {
                return None;
            }
            for (((&d, &s), &want), &want_stride) in
                dims.iter().zip(strides).zip(&self.dims).zip(&self.strides)
            {
                if d != want || (d > 1 && s != want_stride) {
                    return None;
                }
            }
        }
        if self.nbytes == 0 {
            return Some(&[]);
        }
        // SAFETY: C-contiguous with this shape and item size: the array's memory holds
        // `nbytes` bytes from data, alive while the array is (the caller's borrow); only
        // Rust code runs while it is borrowed, so nothing can resize or free the array.
        Some(unsafe { std::slice::from_raw_parts(f.data.cast_const(), self.nbytes) })
    }
}

/// The memory of the array with fields `f` if its dtype is the object `dtype` (format
/// `elem`), its shape `shape` and its memory C-contiguous; otherwise what [`direct`]
/// reports (`OtherShape` only when the dtype matched).
fn matching_memory<'a>(
    py: Python<'_>,
    f: &'a ArrayFields,
    dtype: &Py<PyAny>,
    elem: Elem,
    shape: &[usize],
) -> Result<&'a [u8], Direct> {
    if !fields_usable(py) || !std::ptr::eq(f.descr, dtype.as_ptr()) {
        return Err(Direct::Unknown);
    }
    let (own, strides) = fields_dims(f);
    if own.len() != shape.len() {
        return Err(Direct::OtherShape);
    }
    // one pass from the last axis (this runs on every jit call): each stride must be the
    // bytes of the axes after it (any stride for an axis of one element), and the product
    // of those is the array's length in bytes
    let mut len = usize::from(elem.size);
    let mut contiguous = true;
    for ((&d, &s), &want) in own.iter().zip(strides).zip(shape).rev() {
        if d as usize != want {
            return Err(Direct::OtherShape);
        }
        contiguous &= d <= 1 || s as usize == len;
        len = len.saturating_mul(want);
    }
    if !contiguous {
        return Err(Direct::Unknown);
    }
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: C-contiguous with this shape and item size: the array's memory holds `len`
    // bytes from data, alive while the array is (the caller's borrow).
    Ok(unsafe { std::slice::from_raw_parts(f.data.cast_const(), len) })
}

/// Reads every element of a NumPy array (or NumPy scalar) exactly; with `numbers` false
/// only its format and shape (`numbers` is then empty).
pub fn read(obj: &Bound<'_, PyAny>, numbers: bool) -> PyResult<Array> {
    let buffer = Buffer::get(obj)?;
    Ok(Array {
        elem: buffer.elem(),
        shape: buffer.shape(),
        numbers: if numbers {
            buffer.numbers()
        } else {
            Vec::new()
        },
    })
}

/// The dtype of a NumPy array copapy returns.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OutDtype {
    Bool,
    Int32,
    Float32,
    /// For results mixing ints and floats, as NumPy promotes int32 with float32.
    Float64,
}

impl OutDtype {
    fn name(self) -> &'static str {
        match self {
            OutDtype::Bool => "bool",
            OutDtype::Int32 => "int32",
            OutDtype::Float32 => "float32",
            OutDtype::Float64 => "float64",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            OutDtype::Bool => 1,
            OutDtype::Int32 | OutDtype::Float32 => 4,
            OutDtype::Float64 => 8,
        }
    }
}

/// A new C-ordered NumPy array of `dtype` and `shape` whose bytes `fill` writes (in the
/// machine's byte order; all of them, `np.empty` leaves them undefined).
pub fn new_array(
    py: Python<'_>,
    dtype: OutDtype,
    shape: &[usize],
    fill: impl FnOnce(&mut [u8]) -> PyResult<()>,
) -> PyResult<Py<PyAny>> {
    // numpy.empty and the four dtype objects, looked up once: a result is then one call
    static EMPTY: PyOnceLock<(Py<PyAny>, [Py<PyAny>; 4])> = PyOnceLock::new();
    let (empty, dtypes) = EMPTY.get_or_try_init(py, || -> PyResult<_> {
        let np = py.import("numpy")?;
        let dtype = |d: OutDtype| np.getattr("dtype")?.call1((d.name(),)).map(Bound::unbind);
        Ok((
            np.getattr("empty")?.unbind(),
            [
                dtype(OutDtype::Bool)?,
                dtype(OutDtype::Int32)?,
                dtype(OutDtype::Float32)?,
                dtype(OutDtype::Float64)?,
            ],
        ))
    })?;
    let d = &dtypes[match dtype {
        OutDtype::Bool => 0,
        OutDtype::Int32 => 1,
        OutDtype::Float32 => 2,
        OutDtype::Float64 => 3,
    }];
    let arr = empty
        .bind(py)
        .call1((PyTuple::new(py, shape)?, d.bind(py)))?;
    {
        let view = View::get(&arr, ffi::PyBUF_CONTIG)?;
        let len = usize::try_from(view.0.len).unwrap_or(0);
        let count: usize = shape.iter().product();
        if len != count * dtype.size() {
            return Err(PyRuntimeError::new_err(
                "internal error: numpy.empty returned an array of another size",
            ));
        }
        if len > 0 {
            // SAFETY: PyBUF_CONTIG gives a writable, contiguous buffer of `len` bytes at
            // buf, ours alone (the array was just created) while the view is held.
            let bytes = unsafe { std::slice::from_raw_parts_mut(view.0.buf.cast::<u8>(), len) };
            fill(bytes)?;
        }
    }
    Ok(arr.unbind())
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
        let le = parse_format(b"<d", 8).unwrap();
        let be = parse_format(b">d", 8).unwrap();
        assert_ne!(le.code(), be.code());
        assert_eq!(be.decode(&1.5f64.to_be_bytes()), Number::Float(1.5));
        let i = parse_format(b"<h", 2).unwrap();
        assert_eq!(i.decode(&(-3i16).to_le_bytes()), Number::Int(-3));
        assert!(parse_format(b"Zf", 8).is_none());
        assert!(parse_format(b"g", 16).is_none());
    }
}
