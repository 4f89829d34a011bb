//! The symbol table written into program files: user structures flattened to named
//! variables for `Target.compile(..., names=...)`, and values read back into them.
//! Names themselves live in `names.rs`.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use rustc_hash::FxHashSet;

use copapy_compiler::compile::CompileError;
use copapy_compiler::{array, finish, Value};
use copapy_program::{ElementType, Symbol};

use crate::flatten::{flatten, flatten_tracked, Argument, Flat};

use crate::convert::{number_bits, type_name};
use crate::device::DataWrite;
use crate::names::{check_name, name_arg, name_of};
use crate::trail::Trail;

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

/// The symbols of one `Target.compile` call, planned: what the compiler finishes
/// (`copapy_compiler::finish`), and the Python value objects whose reads take a run's
/// own copy of a state.
pub struct Plan<'a> {
    pub finish: finish::Plan<'a>,
    /// The value objects of outputs of the run that alias an updated state, with their
    /// positions among the compiled values, so that reading such an object reads the
    /// run's value.
    pub run_objects: Vec<(Py<PyAny>, usize)>,
}

/// The value object each element of a flattened variable came from (None for a
/// number or an array).
type Leaves<'py> = Vec<Option<Bound<'py, PyAny>>>;

/// The name a node was given with `cp.value(..., name=...)`.
fn registered_name(v: &Value) -> Option<String> {
    name_of(v.id())
}

/// Plans the symbols of `tg.compile(*values, names=names, updates=...)`: converts the
/// Python objects into the compiler's [`finish::Request`]. `arguments` and `outputs`
/// come from the one walk over `values` (`flatten.rs`), `updates` are the pairs
/// from [`collect_updates`] and `trail` marks the state objects it walked through.
pub fn plan<'py>(
    arguments: Vec<Argument<'py>>,
    outputs: &[Value],
    names: Option<&Bound<'py, PyDict>>,
    updates: &[(Value, Value)],
    mut trail: Trail<'py>,
) -> PyResult<Plan<'static>> {
    let states: FxHashSet<usize> = updates.iter().map(|(s, _)| s.id()).collect();
    let mut variables = Vec::new();
    // the value object of each element of each variable, and whether it is a run output
    let mut leaves: Vec<(Leaves<'py>, Vec<bool>)> = Vec::new();
    let mut add = |name: Option<String>, flat: Flat, flags: &[bool], found: Leaves<'py>| {
        let run = run_outputs(&flat, flags, &states);
        leaves.push((found, run.clone()));
        variables.push(finish::Variable {
            name,
            shape: flat.shape,
            values: flat.values,
            run,
        });
    };
    if let Some(names) = names {
        for (k, obj) in names.iter() {
            if !k.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "names maps str names to values, got a {} key",
                    type_name(&k)
                )));
            }
            let name = name_arg(&k)?;
            check_name(&name)?;
            let flat = flatten_tracked(&obj, &mut trail)?;
            add(
                Some(name),
                flat,
                &trail.flags,
                std::mem::take(&mut trail.leaves),
            );
        }
    }
    for a in arguments {
        // An argument that is not one rectangular container (a ragged list) is compiled
        // as always but gets no generated name: its parts can be named with `names=`.
        if let Some(flat) = a.flat {
            add(None, flat, &a.flags, a.leaves);
        }
    }
    let finish = finish::Plan::new(finish::Request {
        outputs: outputs.to_vec(),
        variables,
        updates: updates.to_vec(),
        name_of: &registered_name,
    })
    .map_err(finish_error)?;
    let mut run_objects = Vec::new();
    for (k, (leaves, run)) in leaves.into_iter().enumerate() {
        let Some(first) = finish.first(k) else {
            continue;
        };
        for (i, (leaf, run)) in leaves.into_iter().zip(run).enumerate() {
            if run {
                run_objects.extend(leaf.map(|o| (o.unbind(), first + i)));
            }
        }
    }
    Ok(Plan {
        finish,
        run_objects,
    })
}

/// The Python exception for a program that could not be finished: a bad name or a
/// bad request is a ValueError (TypeError for mixed element types), a missing
/// stencil, a failed link or an invalid result a RuntimeError (a copapy bug).
pub fn finish_error(e: finish::FinishError) -> PyErr {
    use finish::FinishError as E;
    match e {
        E::Target(_) | E::Invalid(_) => PyRuntimeError::new_err(e.to_string()),
        E::Compile(CompileError::Missing(_) | CompileError::Link(_)) => {
            PyRuntimeError::new_err(e.to_string())
        }
        E::MixedTypes(_) => PyTypeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
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
