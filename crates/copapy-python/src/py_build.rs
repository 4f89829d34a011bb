//! Building a result tuple or list in place, refilling one nobody else refers to, and
//! reading a list's items without a reference (CPython's C API, the crate's few unsafe
//! calls of it kept here).
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
use pyo3::types::{PyList, PyTuple};
use pyo3::Borrowed;

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
        // `seq` is new and ours alone, of length n
        set_item(&seq, tuple, k, item(k)?)?;
    }
    Ok(seq.unbind())
}

/// Whether `obj` is exactly a tuple (or list, `tuple` false) of `n` items that nobody
/// but its one holder refers to (reference count 1), so its items may be set
/// ([`set_item`]) without anyone seeing it change.
///
/// A count of 1 means no other reference exists anywhere: CPython's own builtins (`zip`,
/// `enumerate`, dict iterators) reuse their result tuples on that test. This module is
/// built for the limited API (abi3), which only GIL builds of CPython load, where the
/// count is exact.
pub fn is_sole_sequence(obj: &Bound<'_, PyAny>, tuple: bool, n: usize) -> bool {
    let exact = if tuple {
        obj.is_exact_instance_of::<PyTuple>()
    } else {
        obj.is_exact_instance_of::<PyList>()
    };
    if !exact {
        return false;
    }
    // SAFETY: `obj` is a live tuple (list): its count is only read, its size read by the
    // function for its exact type.
    let (count, len) = unsafe {
        let len = if tuple {
            ffi::PyTuple_Size(obj.as_ptr())
        } else {
            ffi::PyList_Size(obj.as_ptr())
        };
        (ffi::Py_REFCNT(obj.as_ptr()), len)
    };
    count == 1 && usize::try_from(len).is_ok_and(|len| len == n)
}

/// Sets item `k` of the tuple (or list) `seq` to `item`, dropping the item it replaces.
/// For a tuple, `seq` must be new or pass [`is_sole_sequence`] (CPython refuses anything
/// else with a SystemError, which is then returned).
#[inline]
pub fn set_item(seq: &Bound<'_, PyAny>, tuple: bool, k: usize, item: Py<PyAny>) -> PyResult<()> {
    let k = ffi::Py_ssize_t::try_from(k)?;
    let obj = item.into_ptr();
    // SAFETY: `seq` is a live tuple or list; the SetItem functions steal the reference
    // `obj` (even when they fail) and check the index and the type themselves.
    let rc = unsafe {
        if tuple {
            ffi::PyTuple_SetItem(seq.as_ptr(), k, obj)
        } else {
            ffi::PyList_SetItem(seq.as_ptr(), k, obj)
        }
    };
    if rc != 0 {
        return Err(PyErr::fetch(seq.py()));
    }
    Ok(())
}

/// Item `k` of the tuple (or list) `seq`, borrowed from it (no reference taken, so its
/// reference count is what `seq` alone gives it); `None` if there is none.
pub fn item<'a, 'py>(
    seq: &'a Bound<'py, PyAny>,
    tuple: bool,
    k: usize,
) -> Option<Borrowed<'a, 'py, PyAny>> {
    let k = ffi::Py_ssize_t::try_from(k).ok()?;
    // SAFETY: `seq` is a live tuple or list (GetItem checks); the pointer returned is
    // borrowed from it, valid while `seq` holds the item, which the borrow of `seq` ties
    // it to (the caller sets no item of `seq` while using it). NULL comes with an
    // IndexError or SystemError, cleared here.
    let ptr = unsafe {
        if tuple {
            ffi::PyTuple_GetItem(seq.as_ptr(), k)
        } else {
            ffi::PyList_GetItem(seq.as_ptr(), k)
        }
    };
    if ptr.is_null() {
        drop(PyErr::take(seq.py()));
        return None;
    }
    // SAFETY: non-null and borrowed from `seq`, as above.
    Some(unsafe { Borrowed::from_ptr(seq.py(), ptr) })
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
