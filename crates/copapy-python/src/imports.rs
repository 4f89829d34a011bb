//! Imported functions (`cp.extern`) served by Python callables.
//!
//! Tracing: [`extern_call`] is `cp.extern`'s core, [`extern_filled`] gives what a call
//! left in the buffer of an array argument. Running on the host: the program calls
//! through its import table, so each import needs a native function. Each import index
//! `k` gets a trampoline (`float_trampoline::<K>` or `int_trampoline::<K>`) that receives
//! all eight argument registers of the call stencils (four float, four integer of
//! pointer size; the unused ones carry zeros), finds the callables of the program being
//! run in a thread-local set by [`HostImports::run`], converts the arguments the
//! signature names to Python objects (an array argument to a NumPy array over a copy of
//! its buffer, written back after the call: `crate::call_buffers`), calls the callable
//! and converts its result. A callable that raises (or returns something that is not a
//! number of the signature's type) makes the remaining calls of the run return 0; after
//! the run the data memory is put back as it was before it and the exception is raised,
//! so a failed run changes nothing. `copapy._import_check` holds the rules the emulator
//! shares: the arity check at load and the result conversions.

use std::cell::RefCell;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyDict, PyList, PyTuple};

use copapy_compiler::graph::ScalarType;
use copapy_program::{ImportTable, Program, ProgramView};
use copapy_runner::imports::Resolution;
use copapy_runner::LoadedProgram;

use crate::array_ops::PyArrayNode;
use crate::call_buffers::DataWindow;
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
        if let Ok(array) = a.cast::<PyArrayNode>() {
            values.push(array.get().value().clone());
            continue;
        }
        let v = crate::value::operand(&a, ScalarType::Int)?.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "argument {k} of cp.extern({name:?}, ...) is a {}: pass copapy values, \
                 numbers or arrays (cp.array, cp.vector, cp.tensor)",
                crate::convert::type_name(&a)
            ))
        })?;
        values.push(v);
    }
    let v = copapy_compiler::imports::call(name, &values, result)
        .map_err(|e| PyValueError::new_err(e.message))?;
    Ok(Py::new(py, PyValue::from_graph(v))?.into_any())
}

/// `extern_filled(call, k)`: the contents of the buffer of array argument `k` after the
/// call `call` (a value `extern_call` returned), as a flat array.
#[pyfunction]
pub fn extern_filled(
    py: Python<'_>,
    call: &Bound<'_, PyValue>,
    k: usize,
) -> PyResult<Py<PyArrayNode>> {
    let v = copapy_compiler::imports::filled(call.get().value(), k)
        .map_err(|e| PyValueError::new_err(e.message))?;
    Py::new(py, PyArrayNode::new(v))
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
        .map(|i| {
            (
                i.name_str().to_string(),
                i.signature_str().to_string(),
                i.slot,
            )
        })
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
    callables: Callables,
    /// The data memory before the current run (kept to restore it if a callable raises;
    /// reused, so a run allocates nothing).
    snapshot: Vec<u8>,
}

/// One import of a loaded program: its name, signature and callable.
struct Import {
    name: String,
    signature: String,
    f: Py<PyAny>,
}

/// Each import's callable and signature, shared with the thread running the program.
type Callables = std::sync::Arc<Vec<Import>>;

/// The program running on a thread: its imports, its data memory (where buffers may
/// be), and the first error a callable raised.
struct Running {
    callables: Callables,
    data: DataWindow,
    error: Option<PyErr>,
}

/// `copapy._import_check`, the rules shared with the emulator.
fn check_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import(pyo3::intern!(py, "copapy._import_check"))
}

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
            let Some(f) = imports.map(|d| d.get_item(&i.name)).transpose()?.flatten() else {
                return Err(missing(&i.name, &i.signature));
            };
            check_module(f.py())?
                .getattr(pyo3::intern!(f.py(), "check_callable"))?
                .call1((&i.name, &i.signature, &f))?;
            callables.push(Import {
                name: i.name.clone(),
                signature: i.signature.clone(),
                f: f.unbind(),
            });
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
            let k = program
                .imports
                .iter()
                .position(|i| i.name.as_bytes() == name);
            k.map_or(Resolution::Missing, |k| Resolution::Found(addrs[k]))
        });
        Ok(Some(HostImports {
            callables: std::sync::Arc::new(callables),
            snapshot: Vec::new(),
        }))
    }

    /// Runs `loaded` once with these callables; if one raised, restores the data memory
    /// to what it was before the run and returns that exception.
    pub fn run(&mut self, py: Python<'_>, loaded: &mut LoadedProgram) -> PyResult<()> {
        let _ = py; // the GIL is held: the trampolines call into Python on this thread
        self.snapshot.clear();
        self.snapshot.extend_from_slice(loaded.data());
        let running = Running {
            callables: self.callables.clone(),
            data: DataWindow::of(loaded.data()),
            error: None,
        };
        CURRENT.with(|c| *c.borrow_mut() = Some(running));
        loaded.run();
        let error = CURRENT
            .with(|c| c.borrow_mut().take())
            .and_then(|r| r.error);
        match error {
            None => Ok(()),
            Some(e) => {
                loaded.data_mut().copy_from_slice(&self.snapshot);
                Err(e)
            }
        }
    }
}

/// Calls import `k` of the running program with the register arguments; the result's
/// bit pattern (0 after an error).
fn call_import(k: usize, floats: [f32; 4], ints: [isize; 4]) -> u32 {
    Python::attach(|py| {
        let running = CURRENT.with(|c| match c.borrow().as_ref() {
            // an earlier call raised: the run's result is discarded
            Some(r) if r.error.is_none() => Some((r.callables.clone(), r.data)),
            _ => None,
        });
        let Some((list, data)) = running else {
            return 0;
        };
        let Some(import) = list.get(k) else {
            return 0;
        };
        match call_python(py, import, data, floats, ints) {
            Ok(bits) => bits,
            Err(e) => {
                CURRENT.with(|c| {
                    if let Some(r) = c.borrow_mut().as_mut() {
                        r.error.get_or_insert(e);
                    }
                });
                0
            }
        }
    })
}

/// The Python call of `import`: arguments in signature order (a buffer as a NumPy
/// array, written back after the call), result converted.
fn call_python(
    py: Python<'_>,
    import: &Import,
    data: DataWindow,
    floats: [f32; 4],
    ints: [isize; 4],
) -> PyResult<u32> {
    let codes = import.signature.as_bytes();
    let (mut fi, mut ii) = (0, 0);
    let mut args: Vec<Py<PyAny>> = Vec::with_capacity(codes.len());
    // (bytes handed to Python, the buffer's address) for each array argument
    let mut buffers: Vec<(Bound<'_, PyByteArray>, usize)> = Vec::new();
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
                PyBool::new(py, ints[ii - 1] as i32 != 0)
                    .to_owned()
                    .into_any()
                    .unbind()
            }
            b'F' | b'I' => {
                ii += 2;
                let (addr, len) = (ints[ii - 2] as usize, ints[ii - 1] as i32);
                let bytes = PyByteArray::new(py, &data.read(addr, len)?);
                let array = check_module(py)?
                    .getattr(pyo3::intern!(py, "buffer_array"))?
                    .call1((&bytes, if c == b'F' { "F" } else { "I" }))?;
                buffers.push((bytes, addr));
                array.unbind()
            }
            _ => {
                ii += 1;
                // an int32 argument: the low 32 bits of its register
                (ints[ii - 1] as i32).into_pyobject(py)?.into_any().unbind()
            }
        };
        args.push(a);
    }
    let r = import.f.bind(py).call1(PyTuple::new(py, args)?)?;
    let ty = match codes[0] {
        b'v' => None,
        b'f' => Some(ScalarType::Float),
        b'b' => Some(ScalarType::Bool),
        _ => Some(ScalarType::Int),
    };
    let bits = match ty {
        None => 0,
        Some(ty) => crate::convert::bits_for(ty, &r).map_err(|_| {
            match check_module(py).and_then(|m| {
                m.getattr(pyo3::intern!(py, "result_error"))?.call1((
                    &import.name,
                    &import.signature,
                    &r,
                ))
            }) {
                Ok(e) => PyErr::from_value(e),
                Err(e) => e,
            }
        })?,
    };
    for (bytes, addr) in &buffers {
        data.write(*addr, &bytes.to_vec())?;
    }
    Ok(bits)
}

macro_rules! trampolines {
    ($($k:literal)*) => {
        /// The native function for import index `k` returning a float (or an int).
        fn trampoline(k: usize, float: bool) -> u64 {
            const FLOAT: [extern "C" fn(f32, f32, f32, f32, isize, isize, isize, isize) -> f32; MAX_HOST_IMPORTS] =
                [$(float_trampoline::<$k>),*];
            const INT: [extern "C" fn(f32, f32, f32, f32, isize, isize, isize, isize) -> i32; MAX_HOST_IMPORTS] =
                [$(int_trampoline::<$k>),*];
            if float { FLOAT[k] as usize as u64 } else { INT[k] as usize as u64 }
        }
    };
}
trampolines!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);

/// One trampoline kind: the call stencils' eight argument registers in (integer ones of
/// pointer size: `st_call_*_p` passes addresses there, `st_call_*` int32s whose low bits
/// are read), the callable's result bits out as `$ret`.
macro_rules! trampoline_kind {
    ($name:ident, $ret:ty, $from_bits:expr) => {
        #[allow(clippy::too_many_arguments)]
        extern "C" fn $name<const K: usize>(
            f0: f32,
            f1: f32,
            f2: f32,
            f3: f32,
            i0: isize,
            i1: isize,
            i2: isize,
            i3: isize,
        ) -> $ret {
            $from_bits(call_import(K, [f0, f1, f2, f3], [i0, i1, i2, i3]))
        }
    };
}
trampoline_kind!(float_trampoline, f32, f32::from_bits);
trampoline_kind!(int_trampoline, i32, |bits: u32| bits as i32);
