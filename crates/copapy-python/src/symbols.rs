//! Variable names: `cp.value(..., name=...)`, `Target.compile(..., names=...)`, and the
//! symbol table written into program files.
//!
//! A name belongs to a graph node while the Python `value` that carries it lives, so a
//! program compiled later finds it without the user passing the value again.

use std::sync::Mutex;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use rustc_hash::{FxHashMap, FxHashSet};

use copapy_compiler::{ScalarType, Value};
use copapy_program::format::MAX_RANK;
use copapy_program::{Role, Symbol};

use crate::convert::{number_bits, type_name};
use crate::value::PyValue;

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

/// Refuses names that the runner's line protocol could not carry.
pub fn check_name(name: &str) -> PyResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && !name.contains(|c: char| c.is_whitespace() || c == '=' || c.is_control());
    if ok {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "invalid variable name {name:?}: use 1 to 255 bytes without spaces, control characters or '='"
        )))
    }
}

/// A value or container flattened for the symbol table: its shape and elements.
pub struct Flat {
    pub shape: Vec<u32>,
    pub values: Vec<Value>,
}

/// Flattens a value, a number (a constant), a container with `values` (and `shape`),
/// or a rectangular nest of lists and tuples.
pub fn flatten(obj: &Bound<'_, PyAny>) -> PyResult<Flat> {
    let mut values = Vec::new();
    let shape = flatten_into(obj, &mut values, 0)?;
    Ok(Flat { shape, values })
}

fn flatten_into(obj: &Bound<'_, PyAny>, out: &mut Vec<Value>, depth: usize) -> PyResult<Vec<u32>> {
    if let Ok(v) = obj.cast::<PyValue>() {
        out.push(v.get().value().clone());
        return Ok(Vec::new());
    }
    if let Some((ty, bits)) = number_bits(obj)? {
        out.push(Value::constant(ty, bits));
        return Ok(Vec::new());
    }
    let too_deep = || {
        PyValueError::new_err(format!(
            "a named container may have at most {MAX_RANK} dimensions"
        ))
    };
    if depth >= MAX_RANK {
        return Err(too_deep());
    }
    if let Ok(values) = obj.getattr("values") {
        if !values.is_callable() && !obj.is_instance_of::<PyDict>() {
            let start = out.len();
            for item in values.try_iter()? {
                let inner = flatten_into(&item?, out, MAX_RANK)?;
                debug_assert!(inner.is_empty());
            }
            let count = (out.len() - start) as u32;
            let shape: Vec<u32> = match obj.getattr("shape") {
                Ok(s) => s.extract::<Vec<u32>>().unwrap_or_else(|_| vec![count]),
                Err(_) => vec![count],
            };
            if shape.len() + depth > MAX_RANK {
                return Err(too_deep());
            }
            return Ok(shape);
        }
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut inner: Option<Vec<u32>> = None;
        let mut n = 0u32;
        for item in obj.try_iter()? {
            let s = flatten_into(&item?, out, depth + 1)?;
            if inner.as_ref().is_some_and(|i| *i != s) {
                return Err(PyValueError::new_err(
                    "a named list must be rectangular: every item needs the same shape",
                ));
            }
            inner = Some(s);
            n += 1;
        }
        let mut shape = vec![n];
        shape.extend(inner.unwrap_or_default());
        return Ok(shape);
    }
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "cannot name a str: name copapy values or containers of them",
        ));
    }
    Err(PyTypeError::new_err(format!(
        "cannot name a {}: name copapy values, numbers or containers of them",
        type_name(obj)
    )))
}

/// One entry of the symbol table before slots are known.
pub struct Planned {
    pub name: String,
    pub flat: Flat,
}

/// Collects names so that generated ones never collide with given ones.
pub struct NameSet {
    taken: FxHashSet<String>,
}

impl NameSet {
    pub fn new() -> NameSet {
        NameSet {
            taken: FxHashSet::default(),
        }
    }

    /// Claims a user-given name; an error if it is used twice.
    pub fn claim(&mut self, name: &str) -> PyResult<()> {
        check_name(name)?;
        if !self.taken.insert(name.to_owned()) {
            return Err(PyValueError::new_err(format!(
                "the name {name:?} is given to two different variables: names must be unique"
            )));
        }
        Ok(())
    }

    /// A fresh `prefix<k>` name.
    pub fn generate(&mut self, prefix: &str, counter: &mut usize) -> String {
        loop {
            let name = format!("{prefix}{counter}");
            *counter += 1;
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

/// Builds the symbol table once slots are known. `slot` gives the data offset of a
/// node (every planned element was compiled, so it has one); `states` are the nodes
/// updated at the end of each run.
pub fn build(
    planned: &[Planned],
    slot: &dyn Fn(&Value) -> Option<u32>,
    states: &FxHashSet<usize>,
) -> PyResult<Vec<Symbol>> {
    let mut out = Vec::with_capacity(planned.len());
    for p in planned {
        let mut offsets = Vec::with_capacity(p.flat.values.len());
        for v in &p.flat.values {
            offsets.push(slot(v).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "variable {:?} has an element that is not part of the compiled program",
                    p.name
                ))
            })?);
        }
        let ty = p.flat.values.first().map_or(ScalarType::Float, |v| v.ty());
        if p.flat.values.iter().any(|v| v.ty() != ty) {
            return Err(PyTypeError::new_err(format!(
                "variable {:?} mixes element types: a named container needs one dtype",
                p.name
            )));
        }
        let all_inputs = !p.flat.values.is_empty() && p.flat.values.iter().all(|v| v.is_input());
        let role = if all_inputs && p.flat.values.iter().any(|v| states.contains(&v.id())) {
            Role::State
        } else if all_inputs {
            Role::Input
        } else {
            Role::Output
        };
        out.push(Symbol {
            name: p.name.clone(),
            role,
            ty,
            shape: p.flat.shape.clone(),
            offsets,
        });
    }
    Ok(out)
}

/// Reads symbol `s` from `data`: a number, or nested lists in its shape.
pub fn read(py: Python<'_>, s: &Symbol, data: &[u8]) -> PyResult<Py<PyAny>> {
    let items: Vec<Py<PyAny>> = s
        .offsets
        .iter()
        .map(|&o| crate::convert::to_python(py, s.ty, copapy_compiler::compile::read_bits(data, o)))
        .collect();
    if s.shape.is_empty() {
        return Ok(items.into_iter().next().expect("a scalar has one offset"));
    }
    nest(py, &items, &s.shape)
}

fn nest(py: Python<'_>, items: &[Py<PyAny>], shape: &[u32]) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(py);
    if shape.len() == 1 {
        for i in items {
            list.append(i.clone_ref(py))?;
        }
    } else {
        let chunk = items.len() / shape[0].max(1) as usize;
        for part in items.chunks(chunk.max(1)).take(shape[0] as usize) {
            list.append(nest(py, part, &shape[1..])?)?;
        }
    }
    Ok(list.into_any().unbind())
}

fn flatten_numbers<'py>(x: &Bound<'py, PyAny>, out: &mut Vec<Bound<'py, PyAny>>) -> PyResult<()> {
    if number_bits(x)?.is_some() || x.is_instance_of::<PyString>() {
        out.push(x.clone());
        return Ok(());
    }
    match x.try_iter() {
        Ok(items) => {
            for item in items {
                flatten_numbers(&item?, out)?;
            }
            Ok(())
        }
        Err(_) => {
            out.push(x.clone());
            Ok(())
        }
    }
}

/// Converts `x` (a number, or nested sequences of numbers) into the bit patterns of
/// symbol `s`, in its element order. Nothing is written, so a bad `x` changes nothing.
pub fn bits_for_symbol(s: &Symbol, x: &Bound<'_, PyAny>) -> PyResult<Vec<(u32, u32)>> {
    if !s.role.writable() {
        return Err(PyValueError::new_err(format!(
            "{:?} is an output of the program and would be overwritten by run(): only inputs \
             and states can be written",
            s.name
        )));
    }
    let mut items = Vec::new();
    flatten_numbers(x, &mut items)?;
    if items.len() != s.offsets.len() {
        return Err(PyValueError::new_err(format!(
            "{:?} has shape {:?} ({} numbers) but {} numbers were given",
            s.name,
            s.shape,
            s.offsets.len(),
            items.len()
        )));
    }
    s.offsets
        .iter()
        .zip(&items)
        .map(|(&o, item)| Ok((o, crate::convert::bits_for(s.ty, item)?)))
        .collect()
}

/// The error for a name the program does not have, listing the ones it has.
pub fn unknown(name: &str, symbols: &[Symbol]) -> PyErr {
    let mut known: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
    known.sort_unstable();
    PyValueError::new_err(format!(
        "the program has no variable named {name:?}; its variables are: {}",
        known.join(", ")
    ))
}
