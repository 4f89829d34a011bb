//! The one walk over user structures that become program variables: `Target.compile`'s
//! positional arguments, and the `names=` and `updates=` entries. It flattens a value,
//! a number (a constant), a container (`__copapy__`, `container.rs`), an array node or
//! a rectangular nest of lists and tuples into its elements and shape, recording the
//! Python objects walked through (`trail.rs`: a state given in `updates=` is told
//! apart from another object traced to the same node by identity).
//!
//! Two modes share every rule:
//! - [`walk_argument`] (compile): also collects the values to compute, from any nest of
//!   iterables (numbers need no code); an argument that does not flatten (ragged, an
//!   iterator, deeper than a program file's rank) is still compiled and only gets no
//!   `out<k>` symbol;
//! - [`flatten_tracked`] (names): the structure must flatten, else an error says why.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use copapy_compiler::{array, Value};
use copapy_program::format::MAX_RANK;

use crate::array_ops::PyArrayNode;
use crate::container::{self, Contents, PyContainer};
use crate::convert::{number_bits, type_name};
use crate::trail::Trail;
use crate::value::PyValue;
use crate::walk;

/// A value or container flattened for the symbol table: its shape and elements.
pub struct Flat {
    pub shape: Vec<u32>,
    pub values: Vec<Value>,
}

/// Flattens a value, a number (a constant), a container (`__copapy__`, see
/// `container.rs`), or a rectangular nest of lists and tuples.
pub fn flatten(obj: &Bound<'_, PyAny>) -> PyResult<Flat> {
    flatten_tracked(obj, &mut Trail::default())
}

/// [`flatten`], recording in `trail` the Python objects walked through.
pub fn flatten_tracked<'py>(obj: &Bound<'py, PyAny>, trail: &mut Trail<'py>) -> PyResult<Flat> {
    trail.flags.clear();
    trail.leaves.clear();
    let mut w = Walk {
        outputs: None,
        flat: Some(Vec::new()),
        trail,
    };
    let shape = w.item(obj, 0)?.expect("naming fails rather than giving up");
    let values = w.flat.take().expect("naming fails rather than giving up");
    Ok(Flat { shape, values })
}

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
        outputs: Some(outputs),
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

fn too_deep() -> PyErr {
    PyValueError::new_err(format!(
        "a named container may have at most {MAX_RANK} dimensions"
    ))
}

struct Walk<'a, 'py> {
    /// The values to compile (compile mode), or None when naming.
    outputs: Option<&'a mut Vec<Value>>,
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

    /// The argument does not flatten: when naming, the error `why`; when compiling, the
    /// walk goes on collecting values and the argument gets no symbol.
    fn give_up(&mut self, why: impl FnOnce() -> PyErr) -> PyResult<Option<Vec<u32>>> {
        if self.outputs.is_none() {
            return Err(why());
        }
        self.flat = None;
        Ok(None)
    }

    /// Bounds the walk into `obj` when compiling (any iterable may nest without
    /// limit); naming stops at a program file's rank anyway.
    fn enter(&self, obj: &Bound<'py, PyAny>) -> PyResult<Option<walk::Level>> {
        match self.outputs {
            Some(_) => walk::enter(obj, "Target.compile").map(Some),
            None => Ok(None),
        }
    }

    fn output(&mut self, v: &Value) {
        if let Some(out) = self.outputs.as_mut() {
            out.push(v.clone());
        }
    }

    fn object(&mut self, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<Option<Vec<u32>>> {
        let naming = self.outputs.is_none();
        if let Ok(v) = obj.cast::<PyValue>() {
            let v = v.get().value().clone();
            self.output(&v);
            self.trail.objects.push(obj.clone());
            self.element(v, Some(obj));
            return Ok(Some(Vec::new()));
        }
        if let Ok(a) = obj.cast::<PyArrayNode>() {
            let v = a.get().value().clone();
            self.output(&v);
            if depth >= MAX_RANK {
                return self.give_up(too_deep);
            }
            // a bare array node: one value whose elements are consecutive slots
            let len = array::len_of(&v).unwrap_or(1);
            self.element(v, None);
            return Ok(Some(vec![len]));
        }
        // before the number check (a container may also convert to a number); when
        // naming, below the deepest level only scalars are taken
        let described = if naming && depth >= MAX_RANK {
            None
        } else {
            container::describe(obj)?
        };
        if let Some(c) = described {
            return self.container(obj, c.get(), depth);
        }
        let not_data = obj.is_instance_of::<PyString>()
            || obj.is_instance_of::<PyBytes>()
            || obj.is_instance_of::<PyDict>();
        if not_data && !naming {
            return Err(cannot_compile(obj));
        }
        if let Some((ty, bits)) = number_bits(obj)? {
            // constants need no code, as in Copapy; a named one gets a slot
            self.element(Value::constant(ty, bits), None);
            return Ok(Some(Vec::new()));
        }
        let listed = obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>();
        if naming {
            if depth >= MAX_RANK {
                return Err(too_deep());
            }
            if obj.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(
                    "cannot name a str: name copapy values or containers of them",
                ));
            }
            if !listed {
                return Err(PyTypeError::new_err(format!(
                    "cannot name a {}: name copapy values, numbers or containers of them",
                    type_name(obj)
                )));
            }
        }
        self.sequence(obj, depth, listed && depth < MAX_RANK)
    }

    /// A container: its array node or leaves (scalars, walked as if at the deepest
    /// level), in its shape.
    fn container(
        &mut self,
        obj: &Bound<'py, PyAny>,
        c: &PyContainer,
        depth: usize,
    ) -> PyResult<Option<Vec<u32>>> {
        self.trail.objects.push(obj.clone());
        let fits = depth < MAX_RANK && c.shape().len() + depth <= MAX_RANK;
        if !fits && self.outputs.is_none() {
            return Err(too_deep());
        }
        let py = obj.py();
        let mut leaves_flat = true;
        match c.contents() {
            Contents::Array { node, .. } => {
                let v = node.get().value().clone();
                self.output(&v);
                self.element(v, None);
            }
            Contents::Element(leaf) => {
                let _level = self.enter(obj)?;
                leaves_flat = self.item(leaf.bind(py), MAX_RANK)?.is_some();
            }
            Contents::Sequence(leaves) => {
                let _level = self.enter(obj)?;
                for leaf in leaves.bind(py) {
                    leaves_flat &= self.item(&leaf, MAX_RANK)?.is_some();
                }
            }
        }
        let mut shape = Vec::with_capacity(c.shape().len());
        for &d in c.shape() {
            match u32::try_from(d) {
                Ok(d) => shape.push(d),
                Err(_) => {
                    return self.give_up(|| {
                        PyValueError::new_err(format!(
                            "a named container has a dimension of {d} elements, too many"
                        ))
                    })
                }
            }
        }
        if !(fits && leaves_flat) {
            return self.give_up(too_deep);
        }
        Ok(Some(shape))
    }

    /// A list or tuple (`listed`: one that may flatten) or, when compiling, any other
    /// iterable, whose items are walked one level deeper.
    fn sequence(
        &mut self,
        obj: &Bound<'py, PyAny>,
        depth: usize,
        listed: bool,
    ) -> PyResult<Option<Vec<u32>>> {
        let _level = self.enter(obj)?;
        let iter = walk::iterate(obj, || cannot_compile(obj))?;
        if listed {
            self.trail.objects.push(obj.clone());
        } else {
            self.flat = None;
        }
        let mut inner: Option<Option<Vec<u32>>> = None;
        let mut n = 0u32;
        for item in iter {
            let s = self.item(&item?, depth + 1)?;
            if inner.as_ref().is_some_and(|i| *i != s) {
                self.give_up(|| {
                    PyValueError::new_err(
                        "a named list must be rectangular: every item needs the same shape",
                    )
                })?;
            }
            inner = Some(s);
            n += 1;
        }
        if !listed || self.flat.is_none() {
            return Ok(None);
        }
        let mut shape = vec![n];
        shape.extend(inner.flatten().unwrap_or_default());
        Ok(Some(shape))
    }
}
