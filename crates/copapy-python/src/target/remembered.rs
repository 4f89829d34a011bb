//! `Target.write_value` / `read_value` called again with the same list of scalar
//! variables: a control loop's round trip.
//!
//! The bulk paths (`bulk.rs`) resolve every variable of a list on each call (a lookup per
//! value) and read a NumPy array through the buffer protocol. The first successful bulk
//! write and bulk read are remembered: the list's items (held, so their identity cannot be
//! reused), where each variable lives, and the dtype object of the array written. A later
//! call with a plain list or tuple of the very same items, and for a write an exact
//! `numpy.ndarray` of that dtype object, 1-D and C-contiguous, skips the lookups: the
//! elements are converted with the bulk path's rule ([`write_bits`]) into a scratch list
//! first (so a failed write changes nothing) and written, or the slots read in one device
//! access. Anything else goes the general way. A new `compile` forgets both.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::convert::{to_python, write_bits};
use crate::device::{run_start, DataWrite, Device};
use crate::numpy_buffer::{self, Elem, ExactArray, Kind};

use copapy_compiler::ScalarType;

use super::Var;

/// A list of scalar variables, resolved.
pub(super) struct Resolved {
    items: Vec<Py<PyAny>>,
    vars: Vec<Var>,
    /// The form (dtype object, length, C-contiguous) and format of the array last
    /// written through this list.
    array: Option<(ExactArray, Elem)>,
    /// Every variable is an input (readable before the first run).
    all_inputs: bool,
    /// The offset of the first variable if they lie one after another in list order.
    run: Option<u32>,
}

/// What a remembered write writes.
pub(super) enum Writes {
    /// These words one after another from this offset: one device write.
    Run(u32, Vec<u32>),
    Scattered(Vec<DataWrite>),
}

/// The lists remembered by one loaded program.
#[derive(Default)]
pub(super) struct Remembered {
    pub write: Option<Resolved>,
    pub read: Option<Resolved>,
}

impl Resolved {
    pub fn new(
        items: &[Bound<'_, PyAny>],
        vars: Vec<Var>,
        array: Option<(ExactArray, Elem)>,
    ) -> Self {
        Resolved {
            items: items.iter().map(|i| i.clone().unbind()).collect(),
            all_inputs: vars.iter().all(|v| v.input),
            run: run_start(vars.iter().map(|v| Some(v.offset))),
            vars,
            array,
        }
    }

    /// Whether `seq` is a plain list or tuple of exactly these items.
    fn matches(&self, seq: &Bound<'_, PyAny>) -> bool {
        let n = self.items.len();
        if let Ok(t) = seq.cast_exact::<PyTuple>() {
            return t.len() == n
                && self
                    .items
                    .iter()
                    .zip(t.iter_borrowed())
                    .all(|(a, b)| b.is(a));
        }
        match seq.cast_exact::<PyList>() {
            Ok(l) => {
                l.len() == n
                    && self
                        .items
                        .iter()
                        .enumerate()
                        .all(|(k, a)| crate::py_build::list_item_is(l, k, a))
            }
            Err(_) => false,
        }
    }

    /// The writes of `x` into these variables, if `seq` holds the items and `x` is an
    /// array as remembered whose every element converts.
    pub fn writes(&self, seq: &Bound<'_, PyAny>, x: &Bound<'_, PyAny>) -> Option<Writes> {
        let (exact, elem) = self.array.as_ref()?;
        if !self.matches(seq) {
            return None;
        }
        // only Rust code runs while `src` is borrowed: nothing can resize or free the array
        let src = exact.memory(x)?;
        let size = usize::from(elem.size);
        let native_f32 = elem.kind == Kind::Float && elem.size == 4 && elem.is_native();
        let mut words = Vec::with_capacity(self.vars.len());
        for (var, raw) in self.vars.iter().zip(src.chunks_exact(size)) {
            let bits = match var.ty {
                // decode's float32 -> f64 and float_bits' f64 -> f32, without the match
                ScalarType::Float if native_f32 => {
                    let x = f32::from_ne_bytes([raw[0], raw[1], raw[2], raw[3]]);
                    (f64::from(x) as f32).to_bits()
                }
                ty => write_bits(ty, elem.decode(raw)).ok()?,
            };
            words.push(bits);
        }
        Some(match self.run {
            Some(start) => Writes::Run(start, words),
            None => Writes::Scattered(
                self.vars
                    .iter()
                    .zip(words)
                    .map(|(var, bits)| DataWrite::word(var.offset, bits))
                    .collect(),
            ),
        })
    }

    /// The values of these variables as a list, if `seq` holds the items and they can
    /// be read now (`has_run`, or all are inputs).
    pub fn read(
        &self,
        py: Python<'_>,
        seq: &Bound<'_, PyAny>,
        device: &Device,
        has_run: bool,
    ) -> Option<PyResult<Py<PyAny>>> {
        if !(has_run || self.all_inputs) || !self.matches(seq) {
            return None;
        }
        Some(read_vars(py, device, &self.vars))
    }
}

/// The range `vars` span in data memory, if they lie close enough together to be read
/// in one device access (`bulk.rs` reads others slot by slot, and so do we: such lists
/// are not remembered).
pub(super) fn compact(vars: &[Var]) -> bool {
    let lo = vars.iter().map(|v| v.offset).min().unwrap_or(0);
    let hi = vars.iter().map(|v| v.offset).max().unwrap_or(0);
    !vars.is_empty() && ((hi - lo) as usize + 4) <= 4 * vars.len() * 4 + super::bulk::SPREAD_SLACK
}

/// The values of `vars` (see [`compact`]) as a list: one device read of their range.
fn read_vars(py: Python<'_>, device: &Device, vars: &[Var]) -> PyResult<Py<PyAny>> {
    let lo = vars.iter().map(|v| v.offset).min().unwrap_or(0);
    let hi = vars.iter().map(|v| v.offset).max().unwrap_or(0);
    let span = (hi - lo) as usize + 4;
    // a small range on the stack (the common control loop: zeroing 512 bytes each call
    // cost more than reading them), a larger one on the heap
    let mut small = [0u8; 128];
    let mut large = Vec::new();
    let block: &mut [u8] = if span <= small.len() {
        &mut small[..span]
    } else {
        large.resize(span, 0);
        &mut large
    };
    device.read(py, lo, block)?;
    let word = |var: &Var| {
        let at = (var.offset - lo) as usize;
        u32::from_le_bytes([block[at], block[at + 1], block[at + 2], block[at + 3]])
    };
    let objs = vars.iter().map(|v| to_python(py, v.ty, word(v)));
    Ok(PyList::new(py, objs)?.into_any().unbind())
}

impl super::Target {
    /// The writes of `x` into the list `v` remembered from an earlier bulk write, if `v`
    /// and `x` are like then (see the module documentation) and no write is under way.
    pub(super) fn remembered_writes(
        &self,
        v: &Bound<'_, PyAny>,
        x: &Bound<'_, PyAny>,
    ) -> Option<Writes> {
        if self.pending.is_some() {
            return None;
        }
        self.loaded
            .as_ref()?
            .remembered
            .write
            .as_ref()?
            .writes(v, x)
    }

    /// Remembers the list `items` just written in bulk from `x`, if `x` is exactly a
    /// NumPy array (the only kind the remembered path takes).
    pub(super) fn remember_write(&mut self, items: &[Bound<'_, PyAny>], x: &Bound<'_, PyAny>) {
        if !numpy_buffer::is_exact_ndarray(x) {
            return;
        }
        let Ok(elem) = numpy_buffer::Buffer::get(x).map(|b| b.elem()) else {
            return;
        };
        let Ok(dtype) = x.getattr(pyo3::intern!(x.py(), "dtype")) else {
            return;
        };
        let vars: Option<Vec<Var>> = items.iter().map(|t| self.scalar_var(t)).collect();
        if let (Some(vars), Some(loaded)) = (vars, self.loaded.as_mut()) {
            // no array form where NumPy's struct cannot be read: the general path then
            // writes every time, as before
            let exact = ExactArray::new(x.py(), &dtype.unbind(), elem, &[vars.len()]);
            loaded.remembered.write = Some(Resolved::new(items, vars, exact.map(|e| (e, elem))));
        }
    }

    /// The values of the list `v` remembered from an earlier bulk read, if it is that list.
    pub(super) fn read_remembered(
        &self,
        py: Python<'_>,
        v: &Bound<'_, PyAny>,
    ) -> Option<PyResult<Py<PyAny>>> {
        let loaded = self.loaded.as_ref()?;
        loaded
            .remembered
            .read
            .as_ref()?
            .read(py, v, &loaded.device, self.has_run)
    }

    /// Remembers the list `items` just read in bulk, if its variables lie close together.
    pub(super) fn remember_read(&mut self, items: &[Bound<'_, PyAny>]) {
        let vars: Option<Vec<Var>> = items.iter().map(|t| self.scalar_var(t)).collect();
        if let (Some(vars), Some(loaded)) = (vars, self.loaded.as_mut()) {
            if compact(&vars) {
                loaded.remembered.read = Some(Resolved::new(items, vars, None));
            }
        }
    }
}

impl Writes {
    /// Writes them through `device` (host memory, emulator or remote runner).
    pub fn apply(&self, target: &mut super::Target, py: Python<'_>) -> PyResult<()> {
        match self {
            Writes::Run(start, words) => {
                let loaded = target.loaded.as_mut().ok_or_else(super::not_compiled)?;
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                loaded.device.write(py, *start, &bytes)
            }
            Writes::Scattered(writes) => target.apply_writes(py, writes),
        }
    }
}
