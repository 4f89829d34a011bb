//! `Target.write_value` / `read_value` on a flat list of scalar values or names, in bulk.
//!
//! The general paths walk their arguments element by element through Python (each
//! NumPy element becomes a NumPy scalar object, each read its own device access). For
//! the common case of a control loop, a list of scalar variables written from a 1-D
//! NumPy array (any dtype copapy accepts, any stride) and read back as a list, these
//! functions resolve every variable once, convert the array straight from its buffer
//! ([`crate::numpy_buffer::Buffer`]) with the same per-element rule ([`write_bits`]), and
//! read all slots in one device access when they lie close together.
//!
//! They only take the fast way when it succeeds completely: anything unusual (a target
//! that is not a compiled scalar, an element that does not convert, a wrong length, a
//! value not computed yet) returns `None` and the general path runs instead, so every
//! error is the one the general path gives and a failed call still changes nothing.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::convert::{to_python, write_bits};
use crate::device::DataWrite;
use crate::numpy_buffer::{self, Buffer};
use crate::value::PyValue;

use super::{Loaded, Target, Var};

/// A list of values much more spread out than this over the data is read slot by slot.
pub(super) const SPREAD_SLACK: usize = 64;

/// The items of a plain list or tuple (not a subclass, which may behave otherwise),
/// checked before anything else so the common call costs no Python-level probing.
pub(super) fn plain_sequence<'py>(v: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = v.cast_exact::<PyList>() {
        return Some(list.iter().collect());
    }
    let tuple = v.cast_exact::<PyTuple>().ok()?;
    Some(tuple.iter().collect())
}

impl Target {
    /// The variable a list element names: a compiled scalar value, or the name of a
    /// scalar program variable of 4 bytes; `None` for anything else.
    pub(super) fn scalar_var(&self, item: &Bound<'_, PyAny>) -> Option<Var> {
        if let Ok(pv) = item.cast::<PyValue>() {
            return self.var_of(pv).ok().map(|(_, var)| var);
        }
        let name = item.cast::<PyString>().ok()?;
        let loaded = self.loaded.as_ref()?;
        let sym = loaded.symbol(name.to_str().ok()?).ok()?;
        if !sym.shape.is_empty() || sym.ty.size() != 4 || sym.offsets.len() != 1 {
            return None;
        }
        Some(Var {
            offset: sym.offsets[0],
            ty: sym.ty.scalar(),
            input: sym.role.writable(),
            len: 0,
        })
    }

    /// The writes of a 1-D NumPy array `x` into the scalar variables `targets`, or `None`
    /// where the general path must decide (see the module documentation).
    pub(super) fn bulk_writes(
        &self,
        targets: &[Bound<'_, PyAny>],
        x: &Bound<'_, PyAny>,
    ) -> Option<Vec<DataWrite>> {
        if !numpy_buffer::is_ndarray(x) {
            return None;
        }
        let buffer = Buffer::get(x).ok()?;
        if buffer.ndim() != 1 || buffer.count() != targets.len() {
            return None;
        }
        let vars: Vec<Var> = targets
            .iter()
            .map(|t| self.scalar_var(t).filter(|v| v.input && v.len == 0))
            .collect::<Option<_>>()?;
        let mut writes = Vec::with_capacity(vars.len());
        let mut next = vars.iter();
        buffer
            .for_each(|n| {
                let var = next.next().expect("as many elements as targets");
                writes.push(DataWrite::word(var.offset, write_bits(var.ty, n)?));
                Ok(())
            })
            .ok()?;
        Some(writes)
    }

    /// The values of the scalar variables `items` as a list, read in one device access
    /// when they lie close together; `None` where the general path must decide.
    pub(super) fn bulk_read(
        &self,
        py: Python<'_>,
        items: &[Bound<'_, PyAny>],
    ) -> Option<PyResult<Py<PyAny>>> {
        let loaded: &Loaded = self.loaded.as_ref()?;
        let vars: Vec<Var> = items
            .iter()
            .map(|t| {
                self.scalar_var(t)
                    .filter(|v| v.len == 0 && (v.input || self.has_run))
            })
            .collect::<Option<_>>()?;
        Some(read_slots(py, loaded, &vars))
    }
}

fn read_slots(py: Python<'_>, loaded: &Loaded, vars: &[Var]) -> PyResult<Py<PyAny>> {
    let lo = vars.iter().map(|v| v.offset).min().unwrap_or(0);
    let hi = vars.iter().map(|v| v.offset).max().unwrap_or(0);
    let span = (hi - lo) as usize + 4;
    let block = if !vars.is_empty() && span <= 4 * vars.len() * 4 + SPREAD_SLACK {
        let mut buf = vec![0u8; span];
        loaded.device.read(py, lo, &mut buf)?;
        Some(buf)
    } else {
        None
    };
    let list = PyList::empty(py);
    for var in vars {
        let bits = match &block {
            Some(buf) => {
                let at = (var.offset - lo) as usize;
                u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
            }
            None => loaded.device.read_u32(py, var.offset)?,
        };
        list.append(to_python(py, var.ty, bits))?;
    }
    Ok(list.into_any().unbind())
}
