//! The one walk of `Target.compile` over its positional arguments: it collects the values
//! to compute (values, array nodes and the contents of containers, in any nest of
//! iterables; numbers need no code) and, in the same pass, flattens each argument for
//! the symbol table (`out<k>`) when it is one rectangular nest of lists, tuples and
//! containers, as `symbols::flatten` would: its elements, shape and the objects walked
//! through (for telling a state given in `updates=` apart by identity, `trail.rs`).
//!
//! An argument that does not flatten (ragged, an iterator, nested deeper than a program
//! file's rank) is still compiled; it only gets no generated name.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use copapy_compiler::{array, Value};
use copapy_program::format::MAX_RANK;

use crate::array_ops::PyArrayNode;
use crate::container::{self, Contents};
use crate::convert::{number_bits, type_name};
use crate::symbols::Flat;
use crate::trail::Trail;
use crate::value::PyValue;
use crate::walk;

/// One positional argument, walked: its flattened form (None if it does not flatten),
/// with the trail's flags and leaves for its elements.
pub struct Argument<'py> {
    pub flat: Option<Flat>,
    pub flags: Vec<bool>,
    pub leaves: Vec<Option<Bound<'py, PyAny>>>,
}

/// Walks `obj` once: pushes the values to compile onto `outputs` and flattens it with
/// `trail` (which marks the states of `updates=`).
pub fn walk_argument<'py>(
    obj: &Bound<'py, PyAny>,
    outputs: &mut Vec<Value>,
    trail: &mut Trail<'py>,
) -> PyResult<Argument<'py>> {
    trail.flags.clear();
    trail.leaves.clear();
    let mut w = Walk {
        outputs,
        flat: Some(Vec::new()),
        trail,
    };
    let shape = w.item(obj, 0)?;
    let flat = match (shape, w.flat) {
        (Some(shape), Some(values)) => Some(Flat { shape, values }),
        _ => None,
    };
    Ok(Argument {
        flat,
        flags: std::mem::take(&mut trail.flags),
        leaves: std::mem::take(&mut trail.leaves),
    })
}

fn cannot_compile(obj: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "cannot compile a {}: pass copapy values or lists of them",
        type_name(obj)
    ))
}

struct Walk<'a, 'py> {
    outputs: &'a mut Vec<Value>,
    /// The flattened elements so far; None once the argument turned out not to flatten.
    flat: Option<Vec<Value>>,
    trail: &'a mut Trail<'py>,
}

impl<'py> Walk<'_, 'py> {
    /// Walks `obj` at nesting `depth`; its shape if the argument still flattens.
    fn item(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<Option<Vec<u32>>> {
        let marked = self.trail.enter(obj);
        let shape = self.object(obj, depth);
        let n = self.flat.as_ref().map_or(0, Vec::len);
        self.trail.leave(marked, n);
        let shape = shape?;
        if shape.is_none() {
            self.flat = None;
        }
        Ok(shape)
    }

    /// Adds element `v` (a value or a number's constant) to the flattened argument.
    fn element(&mut self, v: Value, leaf: Option<&Bound<'py, PyAny>>) {
        if let Some(flat) = self.flat.as_mut() {
            flat.push(v);
            self.trail.leaves.resize(flat.len() - 1, None);
            self.trail.leaves.push(leaf.cloned());
        }
    }

    fn object(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<Option<Vec<u32>>> {
        if let Ok(v) = obj.cast::<PyValue>() {
            let v = v.get().value().clone();
            self.outputs.push(v.clone());
            self.trail.objects.push(obj.clone());
            self.element(v, Some(obj));
            return Ok(Some(Vec::new()));
        }
        if let Ok(a) = obj.cast::<PyArrayNode>() {
            let v = a.get().value().clone();
            self.outputs.push(v.clone());
            // a bare array node: one value whose elements are consecutive slots
            let len = array::len_of(&v).unwrap_or(1);
            self.element(v, None);
            return Ok((depth < MAX_RANK).then(|| vec![len]));
        }
        if let Some(c) = container::describe(obj)? {
            self.trail.objects.push(obj.clone());
            let c = c.get();
            let fits = depth < MAX_RANK && c.shape().len() + depth <= MAX_RANK;
            let py = obj.py();
            // a container's leaves are scalars: walked as if at the deepest level
            let mut leaves_flat = true;
            match c.contents() {
                Contents::Array { node, .. } => {
                    let v = node.get().value().clone();
                    self.outputs.push(v.clone());
                    self.element(v, None);
                }
                Contents::Element(leaf) => {
                    let _level = walk::enter(obj, "Target.compile")?;
                    leaves_flat = self.item(leaf.bind(py), MAX_RANK)?.is_some();
                }
                Contents::Sequence(leaves) => {
                    let _level = walk::enter(obj, "Target.compile")?;
                    for leaf in leaves.bind(py) {
                        leaves_flat &= self.item(&leaf, MAX_RANK)?.is_some();
                    }
                }
            }
            let shape: Option<Vec<u32>> =
                c.shape().iter().map(|&d| u32::try_from(d).ok()).collect();
            return Ok(shape.filter(|_| fits && leaves_flat));
        }
        if obj.is_instance_of::<PyString>()
            || obj.is_instance_of::<PyBytes>()
            || obj.is_instance_of::<PyDict>()
        {
            return Err(cannot_compile(obj));
        }
        if let Some((ty, bits)) = number_bits(obj)? {
            // constants need no code, as in Copapy; a named one gets a slot
            self.element(Value::constant(ty, bits), None);
            return Ok(Some(Vec::new()));
        }
        let _level = walk::enter(obj, "Target.compile")?;
        let iter = walk::iterate(obj, || cannot_compile(obj))?;
        let rectangular =
            depth < MAX_RANK && (obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>());
        if rectangular {
            self.trail.objects.push(obj.clone());
        } else {
            self.flat = None;
        }
        let mut inner: Option<Option<Vec<u32>>> = None;
        let mut n = 0u32;
        for item in iter {
            let s = self.item(&item?, depth + 1)?;
            if inner.as_ref().is_some_and(|i| *i != s) {
                self.flat = None;
            }
            inner = Some(s);
            n += 1;
        }
        if !rectangular || self.flat.is_none() {
            return Ok(None);
        }
        let mut shape = vec![n];
        shape.extend(inner.flatten().unwrap_or_default());
        Ok(Some(shape))
    }
}
