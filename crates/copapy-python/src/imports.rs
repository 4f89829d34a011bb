//! Imported functions (`cp.extern`) served by Python callables.
//!
//! Tracing: [`extern_call`] is `cp.extern`'s core. Running on the host: the program
//! calls through its import table, so each import needs a native function. Each import
//! index `k` gets a trampoline (`float_trampoline::<K>` or `int_trampoline::<K>`) that
//! receives all eight argument registers of the call stencils (four float, four int;
//! the unused ones carry zeros), finds the callables of the program being run in a
//! thread-local set by [`HostImports::run`], converts the arguments the signature
//! names to Python numbers, calls the callable and converts its result. A callable that
//! raises (or returns something that is not a number) makes the remaining calls of the
//! run return 0; after the run the data memory is put back as it was before it and the
//! exception is raised, so a failed run changes nothing.

use std::cell::RefCell;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use copapy_compiler::graph::ScalarType;
use copapy_program::{ImportTable, Program, ProgramView};
use copapy_runner::imports::Resolution;
use copapy_runner::LoadedProgram;

use crate::value::PyValue;

/// Most imports one host program may call (one trampoline per index and result class).
pub const MAX_HOST_IMPORTS: usize = 32;

/// `cp.extern(name, *args, returns=...)`: `returns` is `"f"`, `"i"`, `"b"` or None.
#[pyfunction]
#[pyo3(signature = (name, args, returns))]
pub fn extern_call(
    py: Python<'_>,
    name: &str,
    args: &Bound<'_, PyList>,
    returns: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let result = match returns {
        None => None,
        Some("f") => Some(ScalarType::Float),
        Some("i") => Some(ScalarType::Int),
        Some("b") => Some(ScalarType::Bool),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "returns must be float, int, bool or None, not {other}"
            )))
        }
    };
    let mut values = Vec::with_capacity(args.len());
    for (k, a) in args.iter().enumerate() {
        let v = crate::value::operand(&a, ScalarType::Int)?.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "argument {k} of cp.extern({name:?}, ...) is a {}: pass copapy values or numbers",
                crate::convert::type_name(&a)
            ))
        })?;
        values.push(v);
    }
    let v = copapy_compiler::imports::call(name, &values, result)
        .map_err(|e| PyValueError::new_err(e.message))?;
    Ok(Py::new(py, PyValue::from_graph(v))?.into_any())
}

/// `program_imports(file) -> [(name, signature, slot)]`: the imports a program file
/// declares (for devices that resolve them themselves, the emulator).
#[pyfunction]
pub fn program_imports(program: &[u8]) -> PyResult<Vec<(String, String, u32)>> {
    let view = ProgramView::parse(program)
        .map_err(|e| PyValueError::new_err(format!("invalid program file: {e}")))?;
    Ok(view
        .imports()
        .iter()
        .map(|i| (i.name.to_string(), i.signature.to_string(), i.slot))
        .collect())
}

/// The error for a program import that `imports` lacks.
pub fn missing(name: &str, signature: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "the program calls import {name} (signature {signature}), which this Target does not \
         provide: pass Target(..., imports={{{name:?}: a_function}})"
    ))
}

/// The callables of a loaded host program, in the order of its import section.
pub struct HostImports {
    callables: Vec<(Py<PyAny>, String)>,
}

/// The callables of the program running on a thread, and the first error one raised.
type Running = (Vec<(Py<PyAny>, String)>, Option<PyErr>);

thread_local! {
    /// The imports of the program running on this thread, and the first error raised.
    static CURRENT: RefCell<Option<Running>> =
        const { RefCell::new(None) };
}

impl HostImports {
    /// Resolves every import of `program` in `imports` (name -> callable), and writes
    /// the trampolines into `loaded`'s import table. Refuses, naming the import, a
    /// missing or non-callable one, or more than [`MAX_HOST_IMPORTS`].
    pub fn resolve(
        program: &Program,
        imports: Option<&Bound<'_, PyDict>>,
        loaded: &mut LoadedProgram,
    ) -> PyResult<Option<HostImports>> {
        if program.imports.is_empty() {
            return Ok(None);
        }
        if program.imports.len() > MAX_HOST_IMPORTS {
            return Err(PyValueError::new_err(format!(
                "the program calls {} imports; a host Target serves at most {MAX_HOST_IMPORTS}",
                program.imports.len()
            )));
        }
        let mut callables = Vec::with_capacity(program.imports.len());
        for i in &program.imports {
            let f = match imports.map(|d| d.get_item(&i.name)).transpose()?.flatten() {
                Some(f) if f.is_callable() => f,
                Some(f) => {
                    return Err(PyTypeError::new_err(format!(
                        "imports[{:?}] is a {}, not a callable",
                        i.name,
                        crate::convert::type_name(&f)
                    )))
                }
                None => return Err(missing(&i.name, &i.signature)),
            };
            callables.push((f.unbind(), i.signature.clone()));
        }
        let section = copapy_program::imports::encode_section(&program.imports);
        let table = ImportTable::parse(&section, program.data.len())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let addrs: Vec<u64> = program
            .imports
            .iter()
            .enumerate()
            .map(|(k, i)| trampoline(k, i.signature.starts_with('f')))
            .collect();
        loaded.set_imports(table, |name, _| {
            let k = program.imports.iter().position(|i| i.name == name);
            k.map_or(Resolution::Missing, |k| Resolution::Found(addrs[k]))
        });
        Ok(Some(HostImports { callables }))
    }

    /// Runs `loaded` once with these callables; if one raised, restores the data memory
    /// to what it was before the run and returns that exception.
    pub fn run(&self, py: Python<'_>, loaded: &mut LoadedProgram) -> PyResult<()> {
        let before = loaded.data().to_vec();
        let callables = self
            .callables
            .iter()
            .map(|(f, s)| (f.clone_ref(py), s.clone()))
            .collect();
        CURRENT.with(|c| *c.borrow_mut() = Some((callables, None)));
        loaded.run();
        let error = CURRENT.with(|c| c.borrow_mut().take()).and_then(|(_, e)| e);
        match error {
            None => Ok(()),
            Some(e) => {
                loaded.data_mut().copy_from_slice(&before);
                Err(e)
            }
        }
    }
}

/// Calls import `k` of the running program with the register arguments; the result's
/// bit pattern (0 after an error).
fn call_import(k: usize, floats: [f32; 4], ints: [i32; 4]) -> u32 {
    Python::attach(|py| {
        let entry = CURRENT.with(|c| {
            let c = c.borrow();
            let (list, error) = c.as_ref()?;
            if error.is_some() {
                return None; // an earlier call raised: the run's result is discarded
            }
            list.get(k).map(|(f, s)| (f.clone_ref(py), s.clone()))
        });
        let Some((f, sig)) = entry else {
            return 0;
        };
        match call_python(py, &f, &sig, floats, ints) {
            Ok(bits) => bits,
            Err(e) => {
                CURRENT.with(|c| {
                    if let Some((_, slot)) = c.borrow_mut().as_mut() {
                        slot.get_or_insert(e);
                    }
                });
                0
            }
        }
    })
}

/// The Python call for signature `sig`: arguments in signature order, result converted.
fn call_python(
    py: Python<'_>,
    f: &Py<PyAny>,
    sig: &str,
    floats: [f32; 4],
    ints: [i32; 4],
) -> PyResult<u32> {
    let codes = sig.as_bytes();
    let (mut fi, mut ii) = (0, 0);
    let mut args: Vec<Py<PyAny>> = Vec::with_capacity(codes.len());
    for &c in &codes[2..codes.len() - 1] {
        let a = match c {
            b'f' => {
                fi += 1;
                (floats[fi - 1] as f64)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            }
            b'b' => {
                ii += 1;
                pyo3::types::PyBool::new(py, ints[ii - 1] != 0)
                    .to_owned()
                    .into_any()
                    .unbind()
            }
            _ => {
                ii += 1;
                ints[ii - 1].into_pyobject(py)?.into_any().unbind()
            }
        };
        args.push(a);
    }
    let tuple = pyo3::types::PyTuple::new(py, args)?;
    let r = f.bind(py).call1(tuple)?;
    match codes[0] {
        b'v' => Ok(0),
        b'f' => crate::convert::bits_for(ScalarType::Float, &r),
        b'b' => crate::convert::bits_for(ScalarType::Bool, &r),
        _ => crate::convert::bits_for(ScalarType::Int, &r),
    }
}

macro_rules! trampolines {
    ($($k:literal)*) => {
        /// The native function for import index `k` returning a float (or an int).
        fn trampoline(k: usize, float: bool) -> u64 {
            const FLOAT: [extern "C" fn(f32, f32, f32, f32, i32, i32, i32, i32) -> f32; MAX_HOST_IMPORTS] =
                [$(float_trampoline::<$k>),*];
            const INT: [extern "C" fn(f32, f32, f32, f32, i32, i32, i32, i32) -> i32; MAX_HOST_IMPORTS] =
                [$(int_trampoline::<$k>),*];
            if float { FLOAT[k] as usize as u64 } else { INT[k] as usize as u64 }
        }
    };
}
trampolines!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);

#[allow(clippy::too_many_arguments)]
extern "C" fn float_trampoline<const K: usize>(
    f0: f32,
    f1: f32,
    f2: f32,
    f3: f32,
    i0: i32,
    i1: i32,
    i2: i32,
    i3: i32,
) -> f32 {
    f32::from_bits(call_import(K, [f0, f1, f2, f3], [i0, i1, i2, i3]))
}

#[allow(clippy::too_many_arguments)]
extern "C" fn int_trampoline<const K: usize>(
    f0: f32,
    f1: f32,
    f2: f32,
    f3: f32,
    i0: i32,
    i1: i32,
    i2: i32,
    i3: i32,
) -> i32 {
    call_import(K, [f0, f1, f2, f3], [i0, i1, i2, i3]) as i32
}
