//! The registry of variable names given with `cp.value(..., name=...)`, and the checks a
//! name must pass before a program file can carry it.
//!
//! A name belongs to a graph node while the Python `value` that carries it lives, so a
//! program compiled later finds it without the user passing the value again. The
//! registry is keyed by node identity and knows nothing of containers or symbol tables,
//! so both `value.rs` and `symbols.rs` can use it.

use std::sync::Mutex;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use rustc_hash::FxHashMap;

static NAMES: Mutex<Option<FxHashMap<usize, String>>> = Mutex::new(None);

fn with_names<R>(f: impl FnOnce(&mut FxHashMap<usize, String>) -> R) -> R {
    let mut guard = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(FxHashMap::default))
}

/// Names node `id` (called by `cp.value(..., name=...)`).
pub fn set_name(id: usize, name: String) {
    with_names(|m| m.insert(id, name));
}

/// Forgets the name of node `id` (its named Python value was dropped).
pub fn forget_name(id: usize) {
    with_names(|m| m.remove(&id));
}

/// The name given to node `id` with `cp.value(..., name=...)`, if any.
pub fn name_of(id: usize) -> Option<String> {
    with_names(|m| m.get(&id).cloned())
}

/// Refuses names that program files cannot carry (`copapy_program::names`: the rule
/// every reader checks again), saying what is wrong and what a name may be.
pub fn check_name(name: &str) -> PyResult<()> {
    copapy_program::names::check_name(name.as_bytes()).map_err(|problem| {
        PyValueError::new_err(format!(
            "invalid variable name {name:?}: it {problem}; {}",
            copapy_program::names::NAME_RULE
        ))
    })
}

/// A name argument as a Rust string: a `str` that is not UTF-8 (a lone surrogate) is a
/// `ValueError` under the naming rule, anything else a `TypeError`.
pub fn name_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let Ok(s) = obj.cast::<PyString>() else {
        return Err(PyTypeError::new_err(format!(
            "a variable name is a str, not {}",
            obj.get_type().repr()?
        )));
    };
    match s.to_str() {
        Ok(s) => Ok(s.to_owned()),
        Err(_) => Err(PyValueError::new_err(format!(
            "invalid variable name {}: it is not UTF-8 (it has a lone surrogate); {}",
            obj.repr()?,
            copapy_program::names::NAME_RULE
        ))),
    }
}
