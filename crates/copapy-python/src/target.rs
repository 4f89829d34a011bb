//! `copapy.Target`: compiles values, owns the loaded program, runs it, reads and writes its data.

use std::sync::OnceLock;
use std::thread::ThreadId;

use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFrozenSet, PyList, PySet, PyString, PyTuple};
use rustc_hash::FxHashMap;

use copapy_compiler::compile::{read_bits, CompileError};
use copapy_compiler::select::StencilTable;
use copapy_compiler::stencil_db::StencilDb;
use copapy_compiler::{compile, ScalarType, Value};
use copapy_runner::{LoadError, LoadedProgram};

use crate::convert::{bits_for, number_bits, to_python, type_name};
use crate::value::PyValue;
use crate::walk;

/// The stencils for the machine this module runs on, parsed once.
struct Backend {
    db: StencilDb,
    table: StencilTable,
}

static STENCILS_X86_64: &[u8] = include_bytes!("../../../stencils/x86_64.o");

fn backend() -> PyResult<&'static Backend> {
    static BACKEND: OnceLock<Result<Backend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            if !cfg!(target_arch = "x86_64") {
                return Err(format!(
                    "copapy has no native stencils for this machine ({}) yet; x86_64 is supported",
                    std::env::consts::ARCH
                ));
            }
            let db = StencilDb::parse(STENCILS_X86_64)
                .map_err(|e| format!("stencil object is invalid: {e}"))?;
            let table = StencilTable::new(&db);
            Ok(Backend { db, table })
        })
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(e.clone()))
}

/// Compiles `outputs` with the native stencils and loads the program.
pub fn compile_values(outputs: &[Value]) -> PyResult<(copapy_compiler::Compiled, LoadedProgram)> {
    let be = backend()?;
    let compiled = compile(&be.db, &be.table, outputs).map_err(|e| match e {
        CompileError::NothingToCompile => PyValueError::new_err(e.to_string()),
        e => PyRuntimeError::new_err(e.to_string()),
    })?;
    let program = LoadedProgram::load(&compiled.program).map_err(|e| match e {
        LoadError::Os { .. } => PyMemoryError::new_err(format!(
            "the operating system refused memory for the compiled program ({e}): too many \
             programs may be loaded at once; drop Targets and jit functions no longer needed, \
             or give jit functions a smaller cache_size"
        )),
        e => PyRuntimeError::new_err(format!("cannot load the compiled program: {e}")),
    })?;
    Ok((compiled, program))
}

/// Where a compiled variable lives.
#[derive(Clone, Copy)]
struct Var {
    offset: u32,
    ty: ScalarType,
    input: bool,
}

struct Loaded {
    program: LoadedProgram,
    vars: FxHashMap<usize, Var>,
    /// Keeps every mapped node alive, so its address (the map key) is never reused.
    _keep: Vec<Value>,
    steps: usize,
    code_size: usize,
    data_size: usize,
}

/// A machine to compile for and run on (this process's CPU).
#[pyclass(module = "copapy", name = "Target")]
pub struct Target {
    loaded: Option<Loaded>,
    has_run: bool,
    /// While `write_value` walks its arguments: the writes found so far (offset, bits),
    /// applied together once everything converted, so a failed write changes nothing.
    /// The thread doing that write, so only its own hooks add to the plan.
    pending: Option<(ThreadId, Vec<(u32, u32)>)>,
}

fn not_compiled() -> PyErr {
    PyValueError::new_err(
        "this value was not compiled for this target: pass it (or a value computed from it) \
         to Target.compile(...) first",
    )
}

/// The Target for a change, or a clear error while another call is using it.
fn borrow_mut<'py>(slf: &Bound<'py, Target>) -> PyResult<PyRefMut<'py, Target>> {
    slf.try_borrow_mut().map_err(|_| {
        PyRuntimeError::new_err(
            "this Target is in use by another call (another thread, or code called back \
             from inside compile/read_value/write_value): wait until that call returns",
        )
    })
}

/// Containers whose order is not meaningful (or that are text): never a list of numbers.
fn unordered(obj: &Bound<'_, PyAny>) -> Option<&'static str> {
    if obj.is_instance_of::<PyString>() {
        Some("str")
    } else if obj.is_instance_of::<PyBytes>() {
        Some("bytes")
    } else if obj.is_instance_of::<PyDict>() {
        Some("dict")
    } else if obj.is_instance_of::<PySet>() || obj.is_instance_of::<PyFrozenSet>() {
        Some("set")
    } else {
        None
    }
}

fn no_program() -> PyErr {
    PyRuntimeError::new_err("nothing compiled yet: call Target.compile(values) before run()")
}

/// Collects the values to compile from arguments: values, numbers (ignored), and
/// (nested) lists, tuples or other iterables of them.
fn collect(obj: &Bound<'_, PyAny>, out: &mut Vec<Value>) -> PyResult<()> {
    if let Ok(v) = obj.cast::<PyValue>() {
        out.push(v.get().value().clone());
        return Ok(());
    }
    if obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyBytes>()
        || obj.is_instance_of::<pyo3::types::PyDict>()
    {
        return Err(PyTypeError::new_err(format!(
            "cannot compile a {}: pass copapy values or lists of them",
            type_name(obj)
        )));
    }
    if number_bits(obj)?.is_some() {
        return Ok(()); // constants need no code, as in Copapy
    }
    let _level = walk::enter(obj, "Target.compile")?;
    if let Some(values) = walk::attr(obj, intern!(obj.py(), "values"))? {
        if !obj.is_instance_of::<pyo3::types::PyDict>() && !values.is_callable() {
            return collect(&values, out);
        }
    }
    let iter = walk::iterate(obj, || {
        PyTypeError::new_err(format!(
            "cannot compile a {}: pass copapy values or lists of them",
            type_name(obj)
        ))
    })?;
    for item in iter {
        collect(&item?, out)?;
    }
    Ok(())
}

impl Target {
    fn loaded(&self) -> PyResult<&Loaded> {
        self.loaded.as_ref().ok_or_else(no_program)
    }

    fn var(&self, v: &PyValue) -> PyResult<(&Loaded, Var)> {
        let loaded = self.loaded.as_ref().ok_or_else(not_compiled)?;
        let var = *loaded.vars.get(&v.value().id()).ok_or_else(not_compiled)?;
        Ok((loaded, var))
    }

    fn read_one(&self, py: Python<'_>, v: &PyValue) -> PyResult<Py<PyAny>> {
        let (loaded, var) = self.var(v)?;
        if !var.input && !self.has_run {
            return Err(PyRuntimeError::new_err(
                "this value is computed by the program, which has not run yet: call Target.run() first",
            ));
        }
        Ok(to_python(
            py,
            var.ty,
            read_bits(loaded.program.data(), var.offset),
        ))
    }

    /// Checks and converts one write; it is applied later by [`Target::apply_writes`].
    fn plan_one(&mut self, v: &PyValue, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let (_, var) = self.var(v)?;
        if !var.input {
            return Err(PyValueError::new_err(
                "only input variables created with cp.value(...) can be written; \
                 this value is computed by the program and would be overwritten by run()",
            ));
        }
        let bits = bits_for(var.ty, x)?;
        match self.pending.as_mut() {
            Some((_, writes)) => writes.push((var.offset, bits)),
            None => self.pending = Some((std::thread::current().id(), vec![(var.offset, bits)])),
        }
        Ok(())
    }

    fn apply_writes(&mut self, writes: &[(u32, u32)]) -> PyResult<()> {
        let loaded = self.loaded.as_mut().ok_or_else(not_compiled)?;
        let data = loaded.program.data_mut();
        for &(offset, bits) in writes {
            let o = offset as usize;
            data[o..o + 4].copy_from_slice(&bits.to_le_bytes());
        }
        Ok(())
    }

    /// Walks `v` and `x` together, adding every write to `pending`.
    fn plan_write(
        slf: &Bound<'_, Self>,
        v: &Bound<'_, PyAny>,
        x: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = slf.py();
        if let Ok(pv) = v.cast::<PyValue>() {
            return borrow_mut(slf)?.plan_one(pv.get(), x);
        }
        let _level = walk::enter(v, "Target.write_value")?;
        if let Some(hook) = walk::attr(v, intern!(py, "_cp_write"))? {
            // the hook calls write_value again, which adds to the same plan
            hook.call1((slf, x))?;
            return Ok(());
        }
        if let Some(kind) = unordered(v) {
            return Err(PyTypeError::new_err(format!(
                "write_value takes a copapy value or a list of them, not a {kind}"
            )));
        }
        let targets: Vec<Bound<'_, PyAny>> = walk::iterate(v, || {
            PyTypeError::new_err(format!(
                "write_value takes a copapy value or a list of them, not a {}",
                type_name(v)
            ))
        })?
        .collect::<PyResult<_>>()?;
        if let Some(kind) = unordered(x) {
            return Err(PyTypeError::new_err(format!(
                "cannot write a {kind} to {} values: expected a list, tuple or array of numbers",
                targets.len()
            )));
        }
        let data: Vec<Bound<'_, PyAny>> = walk::iterate(x, || {
            PyTypeError::new_err(format!(
                "writing to {} values needs as many numbers (a list, tuple or array), got a {}",
                targets.len(),
                type_name(x)
            ))
        })?
        .collect::<PyResult<_>>()?;
        if data.len() != targets.len() {
            return Err(PyValueError::new_err(format!(
                "write_value got {} numbers for {} values: the lengths must match",
                data.len(),
                targets.len()
            )));
        }
        for (t, d) in targets.iter().zip(&data) {
            Self::plan_write(slf, t, d)?;
        }
        Ok(())
    }
}

#[pymethods]
impl Target {
    #[new]
    #[pyo3(signature = (arch = "native", optimization = "O3"))]
    fn new(arch: &str, optimization: &str) -> PyResult<Self> {
        let _ = optimization; // one optimisation level exists; accepted for Copapy compatibility
        let host = std::env::consts::ARCH;
        if arch != "native" && arch != host {
            return Err(PyValueError::new_err(format!(
                "cannot run code for '{arch}' on this {host} machine: use Target() or Target('{host}')"
            )));
        }
        backend()?;
        Ok(Target {
            loaded: None,
            has_run: false,
            pending: None,
        })
    }

    /// Compiles the code that computes `values` (values, or lists/tuples of values).
    #[pyo3(signature = (*values))]
    fn compile(slf: &Bound<'_, Self>, values: &Bound<'_, PyTuple>) -> PyResult<()> {
        // no borrow while walking: a generator among the values may use this Target
        let mut outputs = Vec::new();
        for v in values.iter() {
            collect(&v, &mut outputs)?;
        }
        let (compiled, program) = compile_values(&outputs)?;
        let mut vars = FxHashMap::default();
        let mut keep = Vec::with_capacity(outputs.len() + compiled.inputs.len());
        for (v, &offset) in outputs.iter().zip(&compiled.outputs) {
            vars.insert(
                v.id(),
                Var {
                    offset,
                    ty: v.ty(),
                    input: v.is_input(),
                },
            );
            keep.push(v.clone());
        }
        for (v, offset) in compiled.inputs {
            vars.insert(
                v.id(),
                Var {
                    offset,
                    ty: v.ty(),
                    input: true,
                },
            );
            keep.push(v);
        }
        // intermediates the user still holds: readable, as Copapy's README relies on
        for (v, offset) in compiled.exposed {
            vars.entry(v.id()).or_insert(Var {
                offset,
                ty: v.ty(),
                input: false,
            });
        }
        let mut this = borrow_mut(slf)?;
        this.loaded = Some(Loaded {
            program,
            vars,
            _keep: keep,
            steps: compiled.steps,
            code_size: compiled.program.code.len(),
            data_size: compiled.program.data.len(),
        });
        this.has_run = false;
        Ok(())
    }

    /// Runs the compiled program once. Data memory keeps its state between runs.
    fn run(&mut self) -> PyResult<()> {
        let loaded = self.loaded.as_mut().ok_or_else(no_program)?;
        loaded.program.run();
        self.has_run = true;
        Ok(())
    }

    /// Reads a compiled value (a Python number), or a list of them. Containers (vectors,
    /// matrices) come back as the same kind of container through their `_cp_read` hook.
    fn read_value(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if let Ok(pv) = v.cast::<PyValue>() {
            let this = slf.try_borrow().map_err(|_| {
                PyRuntimeError::new_err(
                    "this Target is in use by another call (another thread, or code called \
                     back from inside compile/write_value): wait until that call returns",
                )
            })?;
            return this.read_one(py, pv.get());
        }
        if number_bits(v)?.is_some() {
            return Ok(v.clone().unbind());
        }
        let _level = walk::enter(v, "Target.read_value")?;
        if let Some(hook) = walk::attr(v, intern!(py, "_cp_read"))? {
            return Ok(hook.call1((slf,))?.unbind());
        }
        if v.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "read_value takes a copapy value or a list of them, not a str",
            ));
        }
        let items = walk::iterate(v, || {
            PyTypeError::new_err(format!(
                "read_value takes a copapy value or a list of them, not a {}",
                type_name(v)
            ))
        })?;
        let list = PyList::empty(py);
        for item in items {
            list.append(Self::read_value(slf, &item?)?)?;
        }
        Ok(list.into_any().unbind())
    }

    /// Writes a Python number into an input value, or numbers into a list of them.
    /// Containers check their shape in their `_cp_write` hook.
    fn write_value(
        slf: &Bound<'_, Self>,
        v: &Bound<'_, PyAny>,
        x: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        // called back from a container's `_cp_write` hook: part of the outer write's plan
        let me = std::thread::current().id();
        {
            let mut this = borrow_mut(slf)?;
            match &this.pending {
                Some((owner, _)) if *owner == me => {
                    drop(this);
                    return Self::plan_write(slf, v, x);
                }
                Some(_) => {
                    return Err(PyRuntimeError::new_err(
                        "this Target is being written by another thread: wait until that \
                         write_value returns",
                    ))
                }
                None => this.pending = Some((me, Vec::new())),
            }
        }
        let planned = Self::plan_write(slf, v, x);
        let mut this = borrow_mut(slf)?;
        let writes = this.pending.take().map(|(_, w)| w).unwrap_or_default();
        planned?;
        this.apply_writes(&writes)
    }

    /// Size and shape of the compiled program: steps (stencils), code and data bytes.
    fn stats(&self) -> PyResult<(usize, usize, usize)> {
        let l = self.loaded()?;
        Ok((l.steps, l.code_size, l.data_size))
    }
}
