//! Building a result tuple or list in place, and reading a list's items without a
//! reference (CPython's C API, the crate's few unsafe calls of it kept here).
//!
//! pyo3's `PyTuple::new` / `PyList::new` take an iterator of infallible items and check
//! its length around every item; a jit call's result of n numbers (`jit.rs`) is built
//! here instead: the sequence is allocated at its length and each item stored as it is
//! made, with no vector in between. Used only where making an item runs no Python code
//! of ours (numbers, constants, lists of numbers), so the half-built sequence is never
//! seen by anyone; CPython's own builders fill their tuples the same way, and the
//! garbage collector skips the items not set yet.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// A new tuple (or list, `tuple` false) of `n` items; `item(k)` makes item k and must not
/// run Python code. An error making an item drops the sequence (and the items made).
#[inline]
pub fn sequence(
    py: Python<'_>,
    tuple: bool,
    n: usize,
    mut item: impl FnMut(usize) -> PyResult<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let len = ffi::Py_ssize_t::try_from(n)?;
    // SAFETY: PyTuple_New / PyList_New return a new reference or NULL with an exception
    // set; `from_owned_ptr_or_err` takes that reference over (and drops it on error).
    let seq = unsafe {
        let ptr = if tuple {
            ffi::PyTuple_New(len)
        } else {
            ffi::PyList_New(len)
        };
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    for k in 0..n {
        let obj = item(k)?.into_ptr();
        // SAFETY: `seq` is a new tuple/list of length n owned by us, k < n, and the
        // SetItem functions steal the reference `obj` (even when they fail).
        let rc = unsafe {
            if tuple {
                ffi::PyTuple_SetItem(seq.as_ptr(), k as ffi::Py_ssize_t, obj)
            } else {
                ffi::PyList_SetItem(seq.as_ptr(), k as ffi::Py_ssize_t, obj)
            }
        };
        if rc != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(seq.unbind())
}

/// Whether item `k` of the list `l` is the object `a`: its pointer compared, without taking
/// a reference (two reference count calls per item otherwise, on every round trip). Only
/// the pointer is read, at once, and no Python code runs in between.
pub fn list_item_is(l: &Bound<'_, PyList>, k: usize, a: &Py<PyAny>) -> bool {
    let Ok(k) = ffi::Py_ssize_t::try_from(k) else {
        return false;
    };
    // SAFETY: `l` is a live list; PyList_GetItem returns a borrowed pointer (or NULL
    // with an IndexError set, which is cleared) that is only compared, never used.
    let item = unsafe { ffi::PyList_GetItem(l.as_ptr(), k) };
    if item.is_null() {
        drop(PyErr::take(l.py()));
        return false;
    }
    std::ptr::eq(item, a.as_ptr())
}
