//! The result of a `@cp.jit` call: how it is rebuilt from data memory ([`Output`], made
//! when the specialisation is traced), and the reading itself.
//!
//! A list or tuple result of numbers (or of lists of numbers) is built once and then
//! refilled: the specialisation keeps the object it returned last, and when nobody else
//! refers to it any more (its reference count is 1, our own), the next call sets its items
//! to the new numbers instead of allocating and freeing the container on every call. This
//! is CPython's own trick for the tuples `zip` and `enumerate` return; it needs nothing
//! beyond the limited API (`Py_REFCNT`, `PyTuple_SetItem` on a tuple only we refer to,
//! `PyList_SetItem`). Whoever still holds a previous result keeps it unchanged: its count
//! is above 1 and the call builds a new object. A list its holder changed (items replaced,
//! appended or removed) before letting it go is refilled only at its length; otherwise it
//! is replaced. Only containers whose items are numbers, constants or such lists are
//! refilled, so the garbage collector never sees a refilled container change kind.

use pyo3::exceptions::PyRuntimeError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3::PyTraverseError;

use copapy_compiler::compile::read_bits;
use copapy_compiler::ScalarType;

use crate::convert::to_python;
use crate::numpy_buffer::{self, OutDtype};
use crate::py_build;

/// How the result is rebuilt from data memory.
pub enum Output {
    Scalar(ScalarType, u32),
    /// A `cp.array` result, returned as a NumPy array of this shape.
    Packed {
        ty: ScalarType,
        shape: Vec<usize>,
        offset: u32,
    },
    /// A vector or matrix result of a function called with NumPy arrays: a NumPy array.
    NdArray {
        dtype: OutDtype,
        shape: Vec<usize>,
        elements: Vec<Element>,
    },
    /// A value the function returned that needs no code (a number, None, …).
    Constant(Py<PyAny>),
    Seq {
        tuple: bool,
        items: Vec<Output>,
    },
    /// A list or tuple of computed numbers only (the common result): their types and
    /// offsets in one slice, read in one loop (made from a `Seq` by [`compact_output`]).
    Numbers {
        tuple: bool,
        items: Box<[(ScalarType, u32)]>,
    },
    /// A dict: its keys (kept as given) and the result for each.
    Dict {
        keys: Vec<Py<PyAny>>,
        items: Vec<Output>,
    },
}

/// One element of an [`Output::NdArray`].
pub enum Element {
    /// Computed: its type and offset in data memory.
    Data(ScalarType, u32),
    /// A number the function returned as it is, as the bits of its copapy type.
    Fixed(ScalarType, u32),
}

/// Writes the copapy value `bits` of type `ty` as one element of `dtype` into `dst`.
fn put_element(dtype: OutDtype, ty: ScalarType, bits: u32, dst: &mut [u8]) {
    let as_f64 = || match ty {
        ScalarType::Float => f64::from(f32::from_bits(bits)),
        ScalarType::Int => f64::from(bits as i32),
        ScalarType::Bool => f64::from(u8::from(bits != 0)),
    };
    match dtype {
        OutDtype::Bool => dst[0] = u8::from(bits != 0),
        OutDtype::Int32 => {
            let v = if ty == ScalarType::Bool {
                u32::from(bits != 0)
            } else {
                bits
            };
            dst.copy_from_slice(&v.to_ne_bytes());
        }
        OutDtype::Float32 => {
            let v = match ty {
                ScalarType::Float => f32::from_bits(bits),
                _ => as_f64() as f32,
            };
            dst.copy_from_slice(&v.to_ne_bytes());
        }
        OutDtype::Float64 => dst.copy_from_slice(&as_f64().to_ne_bytes()),
    }
}

impl Output {
    /// A number, a constant or a sequence of computed numbers: made without running
    /// Python code ([`read_in_place`]), so a sequence of them is built in place.
    fn is_plain(&self) -> bool {
        matches!(
            self,
            Output::Scalar(..) | Output::Constant(_) | Output::Numbers { .. }
        )
    }
}

/// The computed number of type `ty` at `offset` of `data`.
#[inline(always)]
fn read_scalar(py: Python<'_>, ty: ScalarType, offset: u32, data: &[u8]) -> Py<PyAny> {
    // one range check for the four bytes (read_bits checks each)
    let o = offset as usize;
    match data.get(o..o.saturating_add(4)) {
        Some(&[a, b, c, d]) => to_python(py, ty, u32::from_le_bytes([a, b, c, d])),
        _ => to_python(py, ty, read_bits(data, offset)),
    }
}

/// The result object of an [`Output::is_plain`] output.
#[inline]
fn read_in_place(py: Python<'_>, output: &Output, data: &[u8]) -> PyResult<Py<PyAny>> {
    match output {
        Output::Scalar(ty, offset) => Ok(read_scalar(py, *ty, *offset, data)),
        Output::Constant(obj) => Ok(obj.clone_ref(py)),
        Output::Numbers { tuple, items } => {
            crate::py_build::sequence(py, *tuple, items.len(), |k| {
                let (ty, offset) = items[k];
                Ok(read_scalar(py, ty, offset, data))
            })
        }
        _ => read(py, output, data),
    }
}

/// A new result object: [`read`], with the most common result (a list or tuple of
/// numbers) read without the dispatch over every kind of output.
#[inline]
fn read_fresh(py: Python<'_>, output: &Output, data: &[u8]) -> PyResult<Py<PyAny>> {
    match output {
        Output::Numbers { .. } => read_in_place(py, output, data),
        _ => read(py, output, data),
    }
}

/// Turns every list or tuple of computed numbers in `output` into [`Output::Numbers`]
/// (after the offsets are placed): a repeated call reads them in one tight loop.
pub fn compact_output(output: &mut Output) {
    match output {
        Output::Seq { tuple, items } => {
            let numbers: Option<Box<[(ScalarType, u32)]>> = items
                .iter()
                .map(|i| match i {
                    Output::Scalar(ty, offset) => Some((*ty, *offset)),
                    _ => None,
                })
                .collect();
            match numbers {
                Some(items) => {
                    *output = Output::Numbers {
                        tuple: *tuple,
                        items,
                    }
                }
                None => items.iter_mut().for_each(compact_output),
            }
        }
        Output::Dict { items, .. } => items.iter_mut().for_each(compact_output),
        _ => {}
    }
}

fn read(py: Python<'_>, output: &Output, data: &[u8]) -> PyResult<Py<PyAny>> {
    Ok(match output {
        Output::Scalar(ty, offset) => to_python(py, *ty, read_bits(data, *offset)),
        Output::Packed { ty, shape, offset } => {
            let count: usize = shape.iter().product();
            let start = *offset as usize;
            let raw = data.get(start..start + 4 * count).ok_or_else(|| {
                PyRuntimeError::new_err("internal error: a packed result lies outside data memory")
            })?;
            let dtype = match ty {
                ScalarType::Float => OutDtype::Float32,
                ScalarType::Int => OutDtype::Int32,
                ScalarType::Bool => OutDtype::Bool,
            };
            numpy_buffer::new_array(py, dtype, shape, |out| {
                if dtype != OutDtype::Bool && cfg!(target_endian = "little") {
                    out.copy_from_slice(raw);
                } else {
                    for (dst, src) in out.chunks_exact_mut(dtype.size()).zip(raw.chunks_exact(4)) {
                        let bits = u32::from_le_bytes(src.try_into().unwrap_or([0; 4]));
                        put_element(dtype, *ty, bits, dst);
                    }
                }
                Ok(())
            })?
        }
        Output::NdArray {
            dtype,
            shape,
            elements,
        } => numpy_buffer::new_array(py, *dtype, shape, |out| {
            for (dst, e) in out.chunks_exact_mut(dtype.size()).zip(elements) {
                let (ty, bits) = match *e {
                    Element::Data(ty, offset) => (ty, read_bits(data, offset)),
                    Element::Fixed(ty, bits) => (ty, bits),
                };
                put_element(*dtype, ty, bits, dst);
            }
            Ok(())
        })?,
        Output::Constant(obj) => obj.clone_ref(py),
        Output::Numbers { .. } => read_in_place(py, output, data)?,
        Output::Seq { tuple, items } if items.iter().all(Output::is_plain) => {
            // numbers and lists of them (the common results): built in place, without a
            // vector between
            crate::py_build::sequence(py, *tuple, items.len(), |k| {
                read_in_place(py, &items[k], data)
            })?
        }
        Output::Seq { tuple, items } => {
            let objs = items
                .iter()
                .map(|i| read(py, i, data))
                .collect::<PyResult<Vec<_>>>()?;
            if *tuple {
                PyTuple::new(py, objs)?.into_any().unbind()
            } else {
                PyList::new(py, objs)?.into_any().unbind()
            }
        }
        Output::Dict { keys, items } => {
            let dict = PyDict::new(py);
            for (k, i) in keys.iter().zip(items) {
                dict.set_item(k, read(py, i, data)?)?;
            }
            dict.into_any().unbind()
        }
    })
}

pub fn visit_output(output: &Output, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
    match output {
        Output::Scalar(..)
        | Output::Packed { .. }
        | Output::NdArray { .. }
        | Output::Numbers { .. } => Ok(()),
        Output::Constant(obj) => visit.call(obj),
        Output::Seq { items, .. } => items.iter().try_for_each(|i| visit_output(i, visit)),
        Output::Dict { keys, items } => {
            keys.iter().try_for_each(|k| visit.call(k))?;
            items.iter().try_for_each(|i| visit_output(i, visit))
        }
    }
}

pub fn place_outputs(output: &mut Output, next: &mut impl Iterator<Item = u32>) {
    match output {
        Output::Scalar(_, offset) | Output::Packed { offset, .. } => {
            *offset = next.next().unwrap_or(u32::MAX)
        }
        Output::Seq { items, .. } | Output::Dict { items, .. } => {
            items.iter_mut().for_each(|i| place_outputs(i, next))
        }
        Output::NdArray { elements, .. } => {
            for e in elements {
                if let Element::Data(_, offset) = e {
                    *offset = next.next().unwrap_or(u32::MAX);
                }
            }
        }
        Output::Constant(_) | Output::Numbers { .. } => {}
    }
}

impl Output {
    /// Whether a result of this form is refilled on the next call (see the module docs):
    /// a list or tuple of numbers, constants and such lists or tuples.
    fn refillable(&self) -> bool {
        match self {
            Output::Numbers { .. } => true,
            Output::Seq { items, .. } => items
                .iter()
                .all(|i| matches!(i, Output::Scalar(..) | Output::Constant(_)) || i.refillable()),
            _ => false,
        }
    }
}

/// The result a specialisation's last call returned, kept to be refilled by the next (see
/// the module docs), and whether its form is refillable at all (decided once).
pub struct Kept {
    obj: Option<Py<PyAny>>,
    refillable: bool,
}

impl Kept {
    /// Nothing kept yet, for results of form `output`.
    pub fn new(output: &Output) -> Self {
        Kept {
            obj: None,
            refillable: output.refillable(),
        }
    }

    /// Lets the garbage collector see the kept result.
    pub fn visit(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.obj)
    }
}

/// The result object of a call. `kept` holds the object the previous call returned (if
/// refillable): refilled in place when nobody else refers to it, else replaced by the new
/// result. An error forgets it.
#[inline]
pub fn read_result(
    py: Python<'_>,
    output: &Output,
    data: &[u8],
    kept: &mut Kept,
) -> PyResult<Py<PyAny>> {
    if !kept.refillable {
        return read_fresh(py, output, data);
    }
    if let Some(obj) = kept.obj.as_ref() {
        match refill(py, output, obj.bind(py), data) {
            Ok(true) => return Ok(obj.clone_ref(py)),
            Ok(false) => {}
            Err(err) => {
                kept.obj = None;
                return Err(err);
            }
        }
    }
    let fresh = read_fresh(py, output, data)?;
    kept.obj = Some(fresh.clone_ref(py));
    Ok(fresh)
}

/// Sets the items of `obj`, a previous result of the refillable `output`, to this call's
/// values, if nobody but its one holder refers to it and it still has its length;
/// `Ok(false)` (nothing changed) otherwise. Its lists and tuples are refilled the same way
/// (only `obj` refers to them if their count is 1), or replaced by new ones.
fn refill(py: Python<'_>, output: &Output, obj: &Bound<'_, PyAny>, data: &[u8]) -> PyResult<bool> {
    match output {
        Output::Numbers { tuple, items } => {
            if !py_build::is_sole_sequence(obj, *tuple, items.len()) {
                return Ok(false);
            }
            for (k, &(ty, offset)) in items.iter().enumerate() {
                py_build::set_item(obj, *tuple, k, read_scalar(py, ty, offset, data))?;
            }
            Ok(true)
        }
        Output::Seq { tuple, items } => {
            if !py_build::is_sole_sequence(obj, *tuple, items.len()) {
                return Ok(false);
            }
            for (k, item) in items.iter().enumerate() {
                if item.refillable() {
                    // the item still in place, refilled if only this container refers to it
                    let refilled = match py_build::item(obj, *tuple, k) {
                        Some(current) => refill(py, item, &current, data)?,
                        None => false,
                    };
                    if refilled {
                        continue;
                    }
                }
                py_build::set_item(obj, *tuple, k, read_in_place(py, item, data)?)?;
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}
