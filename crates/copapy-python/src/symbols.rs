//! The symbol table written into program files: user structures flattened to named
//! variables for `Target.compile(..., names=...)`, and values read back into them.
//! Names themselves live in `names.rs`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use rustc_hash::{FxHashMap, FxHashSet};

use copapy_compiler::{array, Value};
use copapy_program::format::MAX_RANK;
use copapy_program::{ElementType, Role, Symbol};

use crate::array_ops::PyArrayNode;

use crate::container::{self, Contents};
use crate::convert::{number_bits, type_name};
use crate::device::DataWrite;
use crate::names::{check_name, name_arg, name_of};
use crate::trail::Trail;
use crate::value::PyValue;

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
    let mut values = Vec::new();
    let shape = flatten_into(obj, &mut values, 0, trail)?;
    Ok(Flat { shape, values })
}

fn flatten_into<'py>(
    obj: &Bound<'py, PyAny>,
    out: &mut Vec<Value>,
    depth: usize,
    trail: &mut Trail<'py>,
) -> PyResult<Vec<u32>> {
    let marked = trail.enter(obj);
    let shape = flatten_object(obj, out, depth, trail);
    trail.leave(marked, out.len());
    shape
}

fn flatten_object<'py>(
    obj: &Bound<'py, PyAny>,
    out: &mut Vec<Value>,
    depth: usize,
    trail: &mut Trail<'py>,
) -> PyResult<Vec<u32>> {
    if let Ok(v) = obj.cast::<PyValue>() {
        trail.objects.push(obj.clone());
        trail.leaves.push(Some(obj.clone()));
        out.push(v.get().value().clone());
        return Ok(Vec::new());
    }
    let too_deep = || {
        PyValueError::new_err(format!(
            "a named container may have at most {MAX_RANK} dimensions"
        ))
    };
    // before the number check (a container may also convert to a number); below the
    // deepest level only scalars are taken, which bounds the recursion
    let described = if depth < MAX_RANK {
        container::describe(obj)?
    } else {
        None
    };
    if let Some(c) = described {
        trail.objects.push(obj.clone());
        let c = c.get();
        if c.shape().len() + depth > MAX_RANK {
            return Err(too_deep());
        }
        let py = obj.py();
        match c.contents() {
            Contents::Array { node, .. } => out.push(node.get().value().clone()),
            // the leaves are scalars: flattened as if at the deepest level
            Contents::Element(leaf) => {
                flatten_into(leaf.bind(py), out, MAX_RANK, trail)?;
            }
            Contents::Sequence(leaves) => {
                for leaf in leaves.bind(py) {
                    flatten_into(&leaf, out, MAX_RANK, trail)?;
                }
            }
        }
        return c.shape().iter().map(|&d| dim(d)).collect();
    }
    if let Some((ty, bits)) = number_bits(obj)? {
        out.push(Value::constant(ty, bits));
        return Ok(Vec::new());
    }
    if depth >= MAX_RANK {
        return Err(too_deep());
    }
    // a bare array node: one value whose elements are consecutive slots
    if let Ok(node) = obj.cast::<PyArrayNode>() {
        let v = node.get().value().clone();
        if depth + 1 > MAX_RANK {
            return Err(too_deep());
        }
        let len = array::len_of(&v).unwrap_or(1);
        out.push(v);
        return Ok(vec![len]);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        trail.objects.push(obj.clone());
        let mut inner: Option<Vec<u32>> = None;
        let mut n = 0u32;
        for item in obj.try_iter()? {
            let s = flatten_into(&item?, out, depth + 1, trail)?;
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

/// A container dimension as the program format stores it.
fn dim(d: usize) -> PyResult<u32> {
    u32::try_from(d).map_err(|_| {
        PyValueError::new_err(format!(
            "a named container has a dimension of {d} elements, too many"
        ))
    })
}

/// One entry of the symbol table before slots are known.
pub struct Planned {
    pub name: String,
    pub flat: Flat,
    /// Where the elements of a `names=` entry or positional argument are in the
    /// values compiled (`Plan::all`), and which of them are outputs of the run that
    /// alias an updated state (see [`run_outputs`]); None for a variable's own symbol.
    pub compiled: Option<(usize, Vec<bool>)>,
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

/// How the symbol table stores the elements of `v`: a byte array one byte each,
/// anything else 4 bytes of its scalar type.
pub fn element_type(v: &Value) -> ElementType {
    if array::is_bytes(v) {
        ElementType::Byte
    } else {
        v.ty().into()
    }
}

/// Builds the symbol table once slots are known. `slot` gives the data offset of a
/// node (every planned element was compiled, so it has one); `states` are the nodes
/// updated at the end of each run.
pub fn build(
    planned: &[Planned],
    slot: &dyn Fn(&Value) -> Option<u32>,
    run_slot: &dyn Fn(usize) -> Option<u32>,
    states: &FxHashSet<usize>,
) -> PyResult<Vec<Symbol>> {
    let mut out = Vec::with_capacity(planned.len());
    for p in planned {
        let mut offsets = Vec::with_capacity(p.flat.values.len());
        let run_output = |k: usize| match &p.compiled {
            Some((first, run)) if run[k] => Some(first + k),
            _ => None,
        };
        for (k, v) in p.flat.values.iter().enumerate() {
            let base = match run_output(k) {
                Some(position) => run_slot(position),
                None => slot(v),
            };
            let base = base.ok_or_else(|| {
                PyValueError::new_err(format!(
                    "variable {:?} has an element that is not part of the compiled program",
                    p.name
                ))
            })?;
            match array::len_of(v) {
                // an array's elements are consecutive from its start, 4 bytes each or
                // 1 for a byte array
                Some(n) => {
                    let size = element_type(v).size() as u32;
                    offsets.extend((0..n).map(|k| base + size * k));
                }
                None => offsets.push(base),
            }
        }
        let ty = p
            .flat
            .values
            .first()
            .map_or(ElementType::Float, element_type);
        if p.flat.values.iter().any(|v| element_type(v) != ty) {
            return Err(PyTypeError::new_err(format!(
                "variable {:?} mixes element types: a named container needs one dtype",
                p.name
            )));
        }
        let all_inputs = !p.flat.values.is_empty()
            && p.flat
                .values
                .iter()
                .all(|v| v.is_input() || array::is_data(v));
        let any_run_output = (0..p.flat.values.len()).any(|k| run_output(k).is_some());
        let role = if any_run_output {
            Role::Output
        } else if all_inputs && p.flat.values.iter().any(|v| states.contains(&v.id())) {
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

/// Reads symbol `s` through `read_bytes(offset, out)` (a device read): a number, or
/// nested lists in its shape. Elements close together (an array) take one read.
pub fn read(
    py: Python<'_>,
    s: &Symbol,
    read_bytes: impl Fn(u32, &mut [u8]) -> PyResult<()>,
) -> PyResult<Py<PyAny>> {
    let size = s.ty.size();
    let lo = s.offsets.iter().copied().min().unwrap_or(0);
    let hi = s.offsets.iter().copied().max().unwrap_or(0);
    let span = (hi - lo) as usize + size;
    // a span much larger than the elements (scalars scattered over the data) would
    // read mostly other variables: then each element is its own read
    let block = if s.offsets.is_empty() {
        None // nothing to read (and possibly no data at all)
    } else if span <= 4 * s.offsets.len() * size + 64 {
        let mut buf = vec![0u8; span];
        read_bytes(lo, &mut buf)?;
        Some(buf)
    } else {
        None
    };
    let element = |o: u32| -> PyResult<u32> {
        let mut word = [0u8; 4];
        match &block {
            Some(buf) => {
                let at = (o - lo) as usize;
                word[..size].copy_from_slice(&buf[at..at + size]);
            }
            None => read_bytes(o, &mut word[..size])?,
        }
        Ok(u32::from_le_bytes(word))
    };
    let items: Vec<Py<PyAny>> = s
        .offsets
        .iter()
        .map(|&o| Ok(crate::convert::to_python(py, s.ty.scalar(), element(o)?)))
        .collect::<PyResult<_>>()?;
    if s.shape.is_empty() {
        return Ok(items.into_iter().next().expect("a scalar has one offset"));
    }
    let shape: Vec<usize> = s.shape.iter().map(|&d| d as usize).collect();
    crate::container::nest(py, items, &shape)
}

fn flatten_numbers<'py>(x: &Bound<'py, PyAny>, out: &mut Vec<Bound<'py, PyAny>>) -> PyResult<()> {
    crate::convert::check_dtype(x)?;
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

/// Converts `x` (a number, or nested sequences of numbers) into the writes of the
/// elements of symbol `s`. Nothing is written, so a bad `x` changes nothing.
pub fn bits_for_symbol(s: &Symbol, x: &Bound<'_, PyAny>) -> PyResult<Vec<DataWrite>> {
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
    let size = s.ty.size() as u8;
    s.offsets
        .iter()
        .zip(&items)
        .map(|(&offset, item)| {
            let bits = crate::convert::bits_for(s.ty.scalar(), item)?;
            if s.ty == ElementType::Byte && bits > 255 {
                return Err(PyValueError::new_err(format!(
                    "{} does not fit the byte variable {:?} (from 0 to 255)",
                    bits as i32, s.name
                )));
            }
            Ok(DataWrite { offset, bits, size })
        })
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

/// The symbol plan of one `Target.compile` call, made before compiling (given names
/// claimed, positional arguments flattened) and finished once slots are known.
pub struct Plan {
    /// Every value to compile: the outputs, then every element of a planned symbol
    /// (numbers in containers become constants, so they get a slot too).
    pub all: Vec<Value>,
    /// The positions in `all` of outputs of the run that alias an updated state (see
    /// [`run_outputs`]): compiled with a slot of their own holding the run's value.
    pub run_outputs: Vec<usize>,
    /// The value objects of those outputs with their positions in `all`, so that
    /// reading such an object reads the run's value.
    pub run_objects: Vec<(Py<PyAny>, usize)>,
    planned: Vec<Planned>,
    generated: Vec<usize>,
    named_ids: FxHashSet<usize>,
    taken: NameSet,
}

/// Which elements of a flattened `names=` entry or positional argument are outputs of
/// the run although their graph node is an updated state: the rule is by Python
/// identity. The state object given in `updates` (or an element of a container given
/// there, or anything inside such a container) names the state itself: read after
/// the update, writable. Any other object whose value is the state's node (`1.0 * x`
/// and `x + 0` trace to the node of `x`, so whether an expression aliases a state
/// depends on algebra the user cannot see) is a result of the run, read before the update.
fn run_outputs(flat: &Flat, state_views: &[bool], states: &FxHashSet<usize>) -> Vec<bool> {
    flat.values
        .iter()
        .zip(state_views)
        .map(|(v, &view)| !view && states.contains(&v.id()))
        .collect()
}

/// Plans the symbols of `tg.compile(*values, names=names, updates=...)`; `outputs` are
/// the values collected from `values`, `updates` the pairs from [`collect_updates`] and
/// `state_objects` the Python objects it walked through in the states.
pub fn plan<'py>(
    values: &Bound<'py, PyTuple>,
    outputs: &[Value],
    names: Option<&Bound<'py, PyDict>>,
    updates: &[(Value, Value)],
    state_objects: &[Bound<'py, PyAny>],
) -> PyResult<Plan> {
    let states: FxHashSet<usize> = updates.iter().map(|(s, _)| s.id()).collect();
    let mut trail = Trail::marking(state_objects);
    let mut taken = NameSet::new();
    let mut planned: Vec<Planned> = Vec::new();
    // the value object of each element of each planned symbol
    let mut leaves: Vec<Vec<Option<Bound<'py, PyAny>>>> = Vec::new();
    if let Some(names) = names {
        for (k, obj) in names.iter() {
            if !k.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "names maps str names to values, got a {} key",
                    type_name(&k)
                )));
            }
            let name = name_arg(&k)?;
            taken.claim(&name)?;
            let flat = flatten_tracked(&obj, &mut trail)?;
            let run = run_outputs(&flat, &trail.flags, &states);
            leaves.push(std::mem::take(&mut trail.leaves));
            planned.push(Planned {
                name,
                flat,
                compiled: Some((0, run)),
            });
        }
    }
    // what the names entries cover: a node, or (`!`) the run's copy of a state's node
    let key = |v: &Value, run: bool| (v.id(), run);
    let named: FxHashSet<(usize, bool)> = planned
        .iter()
        .flat_map(|p| {
            let run = &p.compiled.as_ref().expect("planned from names").1;
            p.flat.values.iter().zip(run).map(|(v, &r)| key(v, r))
        })
        .collect();
    // a variable is covered (gets no `in<k>` name) where a names entry exposes it, not
    // where it only names a run's copy of it
    let named_ids = named.iter().filter(|k| !k.1).map(|k| k.0).collect();
    let mut generated = Vec::new();
    for (i, v) in values.iter().enumerate() {
        // An argument that is not one rectangular container of one dtype (a ragged or
        // mixed list) is compiled as always but gets no generated name: its parts can
        // be named with `names=`.
        let Ok(flat) = flatten_tracked(&v, &mut trail) else {
            continue;
        };
        let run = run_outputs(&flat, &trail.flags, &states);
        let one_dtype = flat
            .values
            .windows(2)
            .all(|w| element_type(&w[0]) == element_type(&w[1]));
        let already = flat.values.len() == 1 && named.contains(&key(&flat.values[0], run[0]));
        if one_dtype && !already && !flat.values.is_empty() {
            generated.push(planned.len());
            leaves.push(std::mem::take(&mut trail.leaves));
            planned.push(Planned {
                name: format!("out{i}"),
                flat,
                compiled: Some((0, run)),
            });
        }
    }
    let mut all = outputs.to_vec();
    let mut run_positions = Vec::new();
    let mut run_objects = Vec::new();
    for (p, leaves) in planned.iter_mut().zip(leaves) {
        let Some((first, run)) = p.compiled.as_mut() else {
            continue;
        };
        *first = all.len();
        for (k, leaf) in leaves.into_iter().enumerate() {
            if run[k] {
                run_positions.push(*first + k);
                run_objects.extend(leaf.map(|o| (o.unbind(), *first + k)));
            }
        }
        all.extend(p.flat.values.iter().cloned());
    }
    Ok(Plan {
        all,
        run_outputs: run_positions,
        run_objects,
        planned,
        generated,
        named_ids,
        taken,
    })
}

impl Plan {
    /// The symbol table once `compiled` (compiled from `self.all` and `updates`) is known.
    ///
    /// A variable named with `cp.value(name=...)` always has its own symbol; an unnamed
    /// one gets `in<k>` unless a `names` entry covers it; positional arguments not named
    /// get `out<i>`.
    pub fn finish(
        mut self,
        compiled: &copapy_compiler::Compiled,
        updates: &[(Value, Value)],
    ) -> PyResult<Vec<Symbol>> {
        let mut slot_of: FxHashMap<usize, u32> = FxHashMap::default();
        for (v, &o) in self.all.iter().zip(&compiled.outputs) {
            slot_of.entry(v.id()).or_insert(o);
        }
        for ((state, _), &o) in updates.iter().zip(&compiled.states) {
            slot_of.insert(state.id(), o);
        }
        for (v, o) in &compiled.inputs {
            slot_of.insert(v.id(), *o);
        }
        let variables = compiled
            .inputs
            .iter()
            .map(|(v, _)| v)
            .chain(updates.iter().map(|(s, _)| s));
        let mut seen: FxHashSet<usize> = FxHashSet::default();
        let mut unnamed = Vec::new();
        for v in variables {
            if !seen.insert(v.id()) {
                continue;
            }
            match name_of(v.id()) {
                Some(name) => {
                    self.taken.claim(&name)?;
                    self.planned.push(Planned {
                        name,
                        flat: Flat {
                            shape: array::len_of(v).map(|n| vec![n]).unwrap_or_default(),
                            values: vec![v.clone()],
                        },
                        compiled: None,
                    });
                }
                None if self.named_ids.contains(&v.id()) => {}
                None => unnamed.push(v.clone()),
            }
        }
        // `in0, in1, ...` in the order the user created the inputs, whatever order the
        // compiler reached them in, so `--set in2=...` means the third input made
        unnamed.sort_by_key(Value::seq);
        let (mut outs, mut ins) = (0, 0);
        for &i in &self.generated {
            self.planned[i].name = self.taken.generate("out", &mut outs);
        }
        for v in unnamed {
            let name = self.taken.generate("in", &mut ins);
            self.planned.push(Planned {
                name,
                flat: Flat {
                    shape: array::len_of(&v).map(|n| vec![n]).unwrap_or_default(),
                    values: vec![v],
                },
                compiled: None,
            });
        }
        let states: FxHashSet<usize> = updates.iter().map(|(s, _)| s.id()).collect();
        build(
            &self.planned,
            &|v| slot_of.get(&v.id()).copied(),
            &|position| compiled.outputs.get(position).copied(),
            &states,
        )
    }
}

/// The `updates=` of a compile: `(state, next)` pairs, element by element.
#[derive(Default)]
pub struct Updates<'py> {
    pub pairs: Vec<(Value, Value)>,
    /// The Python objects walked through in the states, for [`plan`].
    pub state_objects: Vec<Bound<'py, PyAny>>,
}

/// Pairs the state variables and next values of `updates` element by element: a dict
/// `{state: next}` or, for containers (which are not hashable), a list of
/// `(state, next)` pairs.
///
/// Also returns the Python objects walked through in the states (the state values
/// and their containers), kept alive for [`plan`] to recognise them by identity.
pub fn collect_updates<'py>(updates: &Bound<'py, PyAny>) -> PyResult<Updates<'py>> {
    let pairs: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = if let Ok(d) = updates.cast::<PyDict>()
    {
        d.iter().collect()
    } else {
        let bad = || {
            PyTypeError::new_err(
                "updates takes a dict {state: next_value} or a list of (state, next_value) pairs",
            )
        };
        let mut v = Vec::new();
        for item in updates.try_iter().map_err(|_| bad())? {
            v.push(item?.extract().map_err(|_| bad())?);
        }
        v
    };
    let mut out = Vec::new();
    let mut walked = Trail::default();
    for (state, next) in pairs {
        let s = flatten_tracked(&state, &mut walked)?;
        let n = flatten(&next)?;
        if s.shape != n.shape {
            return Err(PyValueError::new_err(format!(
                "an update pairs a state of shape {:?} with a next value of shape {:?}: they must match",
                s.shape, n.shape
            )));
        }
        // updates copy scalar slots: an array would pair one value with many slots
        if s.values
            .iter()
            .chain(&n.values)
            .any(|v| array::len_of(v).is_some())
        {
            return Err(PyValueError::new_err(
                "updates pair scalar variables with their next values; a cp.array cannot be a \
                 state or next value: keep the state in a vector of cp.value variables",
            ));
        }
        out.extend(s.values.into_iter().zip(n.values));
    }
    Ok(Updates {
        pairs: out,
        state_objects: walked.objects,
    })
}
