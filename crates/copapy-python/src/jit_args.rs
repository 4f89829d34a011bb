//! The argument plan of a `@cp.jit` specialisation: how each argument of a repeated call
//! goes into data memory, decided once when the specialisation is compiled.
//!
//! A call whose arguments are of the exact built-in types the specialisation was traced
//! with (`float`, `int`, `bool`, `list`, `tuple`, `numpy.ndarray` with the traced dtype
//! object, C-contiguous) is bound by [`ArgPlan::bind`]: a type check and a copy per
//! argument, no signature, no buffer export, no Python code. Anything else (a subclass,
//! a NumPy scalar, a strided or byte-swapped array, an int outside int32, an object with
//! `__float__`) makes `bind` answer `false`, and the general path of `jit.rs` binds the
//! call (or raises its error): the plan only ever takes calls whose outcome it knows to
//! be the general path's, bit for bit.

use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyTuple};
use pyo3::PyTraverseError;

use copapy_compiler::ScalarType;

use crate::convert::Number;
use crate::device::run_start;
use crate::numpy_buffer::{self, Elem, ExactArray};

/// Bits of `n` in a variable of type `ty` (the type the specialisation was traced with).
pub fn input_bits(ty: ScalarType, n: Number) -> PyResult<u32> {
    match ty {
        ScalarType::Float => Ok(n.float_bits()),
        ScalarType::Int => n.int32_bits(),
        ScalarType::Bool => Ok(u32::from(matches!(n, Number::Bool(true)))),
    }
}

/// Where an array argument's elements go in data memory.
pub enum Dest {
    /// The program does not read the array; it only has to match.
    Unread,
    /// One after another from this offset (a packed `cp.array`, or elements the compiler
    /// placed consecutively): a `memcpy` for float32 and int32.
    Run(u32),
    /// Each element to its own slot (`None`: not read by the program).
    Slots(Box<[Option<u32>]>),
}

impl Dest {
    /// The destination of elements at `slots`: a run if they are consecutive.
    pub fn of_slots(slots: &[Option<u32>]) -> Dest {
        if slots.iter().all(Option::is_none) {
            return Dest::Unread;
        }
        match run_start(slots.iter().copied()) {
            Some(start) => Dest::Run(start),
            None => Dest::Slots(slots.into()),
        }
    }
}

/// How one argument is bound.
pub enum ArgStep {
    /// A number of this type (`None`: the program does not read it): exactly a Python
    /// `float` for a float, `int` for an int, `bool` for a bool.
    Scalar(ScalarType, Option<u32>),
    /// Exactly a `list` (or `tuple`) of this many items, each bound by its own step.
    Seq { tuple: bool, items: Vec<ArgStep> },
    /// Exactly a `numpy.ndarray` with this very dtype object, shape, C-contiguous
    /// (`None`: NumPy's struct is not readable here, the general path binds arrays).
    Array {
        exact: Option<ExactArray>,
        elem: Elem,
        /// `elem` is float32 or int32 in little-endian order: the elements' bytes are
        /// their data words (decided once here, not per call)
        words: bool,
        dest: Dest,
    },
    /// This very object (`self` of a method).
    Object(Py<PyAny>),
}

/// The argument plan of one specialisation: one step per argument.
pub struct ArgPlan {
    pub steps: Vec<ArgStep>,
}

impl ArgPlan {
    /// Writes `args` into `data` if every argument is of its step's exact kind and
    /// converts without error; `false` otherwise (possibly after writing some of them,
    /// which the general path then overwrites), and the general path decides.
    pub fn bind(&self, args: &Bound<'_, PyTuple>, data: &mut [u8]) -> bool {
        args.len() == self.steps.len()
            && self
                .steps
                .iter()
                .zip(args.iter_borrowed())
                .all(|(step, arg)| step.bind(&arg, data))
    }
}

/// Writes the 4-byte `bits` at `slot` of `data`; `false` if it lies outside.
fn put(data: &mut [u8], slot: Option<u32>, bits: u32) -> bool {
    let Some(o) = slot else { return true };
    let o = o as usize;
    match data.get_mut(o..o + 4) {
        Some(dst) => {
            dst.copy_from_slice(&bits.to_le_bytes());
            true
        }
        None => false,
    }
}

impl ArgStep {
    fn bind(&self, arg: &Bound<'_, PyAny>, data: &mut [u8]) -> bool {
        match self {
            ArgStep::Scalar(ty, slot) => match scalar_bits(*ty, arg) {
                Some(bits) => put(data, *slot, bits),
                None => false,
            },
            ArgStep::Seq { tuple, items } => {
                if *tuple {
                    let Ok(t) = arg.cast_exact::<PyTuple>() else {
                        return false;
                    };
                    t.len() == items.len()
                        && items
                            .iter()
                            .zip(t.iter_borrowed())
                            .all(|(step, item)| step.bind(&item, data))
                } else {
                    let Ok(l) = arg.cast_exact::<PyList>() else {
                        return false;
                    };
                    // item by item with the length checked each time: nothing here runs
                    // Python code, but the list is the caller's and not ours to trust
                    l.len() == items.len()
                        && items
                            .iter()
                            .enumerate()
                            .all(|(k, step)| l.get_item(k).is_ok_and(|item| step.bind(&item, data)))
                }
            }
            ArgStep::Array {
                exact,
                elem,
                words,
                dest,
            } => match exact.as_ref().and_then(|e| e.memory(arg)) {
                Some(src) if *words => write_words(src, dest, data),
                Some(src) => write_elements(*elem, src, dest, data),
                None => false,
            },
            ArgStep::Object(obj) => arg.is(obj),
        }
    }
}

/// Bits of a number argument of exactly the built-in type for `ty`, if it converts.
fn scalar_bits(ty: ScalarType, arg: &Bound<'_, PyAny>) -> Option<u32> {
    match ty {
        ScalarType::Float => {
            let f = arg.cast_exact::<PyFloat>().ok()?;
            Some(Number::Float(f.value()).float_bits())
        }
        // `int` exactly (a bool is not), within int32; beyond it the general path raises
        ScalarType::Int => {
            let i = arg.cast_exact::<PyInt>().ok()?;
            i.extract::<i32>().ok().map(|n| n as u32)
        }
        ScalarType::Bool => {
            let b = arg.cast_exact::<PyBool>().ok()?;
            Some(u32::from(b.is_true()))
        }
    }
}

/// Writes the float32 or int32 elements `src` (little-endian: their bytes are data words)
/// to `dest`: the path of nearly every call, kept free of the conversion machinery of
/// [`write_elements`]; `false` if one lies outside data memory.
fn write_words(src: &[u8], dest: &Dest, data: &mut [u8]) -> bool {
    match dest {
        Dest::Unread => true,
        Dest::Run(start) => {
            let start = *start as usize;
            match data.get_mut(start..start + src.len()) {
                Some(out) => {
                    out.copy_from_slice(src);
                    true
                }
                None => false,
            }
        }
        Dest::Slots(slots) => slots.iter().zip(src.chunks_exact(4)).all(|(slot, raw)| {
            put(
                data,
                *slot,
                u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]),
            )
        }),
    }
}

/// Writes the elements `src` (format `elem`) to `dest`, converted as the general path
/// converts them ([`input_bits`]); `false` if one does not convert (an int64 beyond
/// int32: the general path raises that error) or lies outside data memory.
fn write_elements(elem: Elem, src: &[u8], dest: &Dest, data: &mut [u8]) -> bool {
    let ty = elem.scalar_type();
    let convert = |n| input_bits(ty, n);
    match dest {
        Dest::Unread => true,
        Dest::Run(start) => {
            let words = src.len() / usize::from(elem.size.max(1));
            let start = *start as usize;
            match data.get_mut(start..start + 4 * words) {
                Some(out) => numpy_buffer::write_contiguous(elem, src, out, convert).is_ok(),
                None => false,
            }
        }
        Dest::Slots(slots) => {
            let size = usize::from(elem.size.max(1));
            slots
                .iter()
                .zip(src.chunks_exact(size))
                .all(|(slot, raw)| match slot {
                    None => true,
                    Some(_) => {
                        let mut word = [0u8; 4];
                        numpy_buffer::write_contiguous(elem, raw, &mut word, convert).is_ok()
                            && put(data, *slot, u32::from_le_bytes(word))
                    }
                })
        }
    }
}

impl ArgPlan {
    /// Lets the garbage collector see the objects the plan holds (dtypes, passed-through
    /// objects such as `self`, which may refer back to the jit function).
    pub fn visit(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.steps.iter().try_for_each(|s| s.visit(visit))
    }
}

impl ArgStep {
    fn visit(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        match self {
            ArgStep::Scalar(..) => Ok(()),
            ArgStep::Seq { items, .. } => items.iter().try_for_each(|i| i.visit(visit)),
            ArgStep::Array {
                exact: Some(exact), ..
            } => visit.call(exact.dtype()),
            ArgStep::Array { exact: None, .. } => Ok(()),
            ArgStep::Object(obj) => visit.call(obj),
        }
    }
}
