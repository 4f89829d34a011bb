//! `copapy.Target`: compiles values, owns the loaded program, runs it, reads and writes its data.

use std::sync::OnceLock;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use rustc_hash::FxHashMap;

use copapy_compiler::compile::{compile_with_updates, read_bits, CompileError};
use copapy_compiler::select::StencilTable;
use copapy_compiler::stencil_db::StencilDb;
use copapy_compiler::{ScalarType, Value};
use copapy_program::{Program, Symbol};
use copapy_runner::LoadedProgram;
use rustc_hash::FxHashSet;

use crate::convert::{bits_for, number_bits, to_python, type_name};
use crate::symbols::{self, NameSet, Planned};
use crate::value::PyValue;

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

/// Compiles `outputs` (and end-of-run `updates`) with the native stencils.
fn compile_program(
    outputs: &[Value],
    updates: &[(Value, Value)],
) -> PyResult<copapy_compiler::Compiled> {
    let be = backend()?;
    compile_with_updates(&be.db, &be.table, outputs, updates).map_err(|e| match e {
        CompileError::Missing(_) | CompileError::Link(_) => PyRuntimeError::new_err(e.to_string()),
        e => PyValueError::new_err(e.to_string()),
    })
}

/// Loads a program into host memory.
fn load_program(program: &Program) -> PyResult<LoadedProgram> {
    LoadedProgram::load(program)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot load the program: {e}")))
}

/// Compiles `outputs` with the native stencils and loads the program.
pub fn compile_values(outputs: &[Value]) -> PyResult<(copapy_compiler::Compiled, LoadedProgram)> {
    let compiled = compile_program(outputs, &[])?;
    let program = load_program(&compiled.program)?;
    Ok((compiled, program))
}

/// Pairs the state variables and next values of `updates` element by element: a dict
/// `{state: next}` or, for containers (which are not hashable), a list of
/// `(state, next)` pairs.
fn collect_updates(updates: &Bound<'_, PyAny>) -> PyResult<Vec<(Value, Value)>> {
    let pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> =
        if let Ok(d) = updates.cast::<pyo3::types::PyDict>() {
            d.iter().collect()
        } else {
            let bad = || {
                PyTypeError::new_err(
                "updates takes a dict {state: next_value} or a list of (state, next_value) pairs",
            )
            };
            let mut v = Vec::new();
            for item in updates.try_iter().map_err(|_| bad())? {
                let item = item?;
                v.push(item.extract().map_err(|_| bad())?);
            }
            v
        };
    let mut out = Vec::new();
    for (state, next) in pairs {
        let s = symbols::flatten(&state)?;
        let n = symbols::flatten(&next)?;
        if s.shape != n.shape {
            return Err(PyValueError::new_err(format!(
                "an update pairs a state of shape {:?} with a next value of shape {:?}: they must match",
                s.shape, n.shape
            )));
        }
        out.extend(s.values.into_iter().zip(n.values));
    }
    Ok(out)
}

/// `(name, role, dtype, shape)` of a program variable, as `Target.variables()` lists it.
type VariableInfo = (String, &'static str, &'static str, Vec<u32>);

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
    /// The program as compiled, with its symbol table (what `save` writes).
    file: Program,
    /// Index into `file.symbols` by name.
    by_name: FxHashMap<String, usize>,
}

impl Loaded {
    fn symbol(&self, name: &str) -> PyResult<&Symbol> {
        self.by_name
            .get(name)
            .map(|&i| &self.file.symbols[i])
            .ok_or_else(|| symbols::unknown(name, &self.file.symbols))
    }
}

fn index_symbols(symbols: &[Symbol]) -> FxHashMap<String, usize> {
    symbols
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), i))
        .collect()
}

/// A machine to compile for and run on (this process's CPU).
#[pyclass(module = "copapy", name = "Target")]
pub struct Target {
    loaded: Option<Loaded>,
    has_run: bool,
}

fn not_compiled() -> PyErr {
    PyValueError::new_err(
        "this value was not compiled for this target: pass it (or a value computed from it) \
         to Target.compile(...) first",
    )
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
    if let Ok(values) = obj.getattr("values") {
        if !obj.is_instance_of::<pyo3::types::PyDict>() && !values.is_callable() {
            return collect(&values, out);
        }
    }
    let iter = obj.try_iter().map_err(|_| {
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

    fn write_one(&mut self, v: &PyValue, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let (_, var) = self.var(v)?;
        if !var.input {
            return Err(PyValueError::new_err(
                "only input variables created with cp.value(...) can be written; \
                 this value is computed by the program and would be overwritten by run()",
            ));
        }
        let bits = bits_for(var.ty, x)?;
        let loaded = self.loaded.as_mut().expect("checked by var()");
        let o = var.offset as usize;
        loaded.program.data_mut()[o..o + 4].copy_from_slice(&bits.to_le_bytes());
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
        })
    }

    /// Compiles the code that computes `values` (values, or lists/tuples of values).
    ///
    /// `names` maps names to values or containers for the program's symbol table (on
    /// top of names given with `cp.value(..., name=...)`; the rest get `out<i>` for the
    /// i-th argument and `in<k>` for other variables). `updates` maps state variables
    /// to their next values, stored at the end of every run.
    #[pyo3(signature = (*values, names = None, updates = None))]
    fn compile(
        &mut self,
        values: &Bound<'_, PyTuple>,
        names: Option<&Bound<'_, pyo3::types::PyDict>>,
        updates: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let mut outputs = Vec::new();
        for v in values.iter() {
            collect(&v, &mut outputs)?;
        }
        let update_pairs = match updates {
            Some(u) => collect_updates(u)?,
            None => Vec::new(),
        };
        // Symbols: given names first, so generated ones avoid them.
        let mut taken = NameSet::new();
        let mut planned: Vec<Planned> = Vec::new();
        if let Some(names) = names {
            for (k, obj) in names.iter() {
                let name: String = k.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "names maps str names to values, got a {} key",
                        type_name(&k)
                    ))
                })?;
                taken.claim(&name)?;
                planned.push(Planned {
                    name,
                    flat: symbols::flatten(&obj)?,
                });
            }
        }
        let named_ids: FxHashSet<usize> = planned
            .iter()
            .flat_map(|p| p.flat.values.iter().map(Value::id))
            .collect();
        let mut generated = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let flat = symbols::flatten(&v)?;
            let already = flat.values.len() == 1 && named_ids.contains(&flat.values[0].id());
            if !already && !flat.values.is_empty() {
                generated.push(planned.len());
                planned.push(Planned {
                    name: format!("out{i}"),
                    flat,
                });
            }
        }
        let mut all = outputs.clone();
        for p in &planned {
            all.extend(p.flat.values.iter().cloned());
        }
        let compiled = compile_program(&all, &update_pairs)?;
        let mut slot_of: FxHashMap<usize, u32> = FxHashMap::default();
        for (v, &o) in all.iter().zip(&compiled.outputs) {
            slot_of.insert(v.id(), o);
        }
        for ((state, _), &o) in update_pairs.iter().zip(&compiled.states) {
            slot_of.insert(state.id(), o);
        }
        // Variables the program reads, in program order: their own name or a generated one.
        let mut variables: Vec<&Value> = compiled.inputs.iter().map(|(v, _)| v).collect();
        variables.extend(update_pairs.iter().map(|(s, _)| s));
        for (v, o) in &compiled.inputs {
            slot_of.insert(v.id(), *o);
        }
        // A variable named with cp.value(name=...) always has its own symbol; an unnamed
        // one gets a generated name unless a `names` entry already covers it.
        let mut seen: FxHashSet<usize> = FxHashSet::default();
        let mut unnamed = Vec::new();
        for v in variables {
            if !seen.insert(v.id()) {
                continue;
            }
            match symbols::name_of(v.id()) {
                Some(name) => {
                    taken.claim(&name)?;
                    planned.push(Planned {
                        name,
                        flat: symbols::Flat {
                            shape: Vec::new(),
                            values: vec![v.clone()],
                        },
                    });
                }
                None if named_ids.contains(&v.id()) => {}
                None => unnamed.push(v.clone()),
            }
        }
        let (mut outs, mut ins) = (0, 0);
        for i in generated {
            planned[i].name = taken.generate("out", &mut outs);
        }
        for v in unnamed {
            let name = taken.generate("in", &mut ins);
            planned.push(Planned {
                name,
                flat: symbols::Flat {
                    shape: Vec::new(),
                    values: vec![v],
                },
            });
        }
        let states: FxHashSet<usize> = update_pairs.iter().map(|(s, _)| s.id()).collect();
        let table = symbols::build(&planned, &|v| slot_of.get(&v.id()).copied(), &states)?;
        let mut file = compiled.program;
        file.symbols = table;
        file.validate()
            .map_err(|e| PyRuntimeError::new_err(format!("compiled program is invalid: {e}")))?;
        let program = load_program(&file)?;
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
        for ((state, _), &offset) in update_pairs.iter().zip(&compiled.states) {
            vars.insert(
                state.id(),
                Var {
                    offset,
                    ty: state.ty(),
                    input: true,
                },
            );
            keep.push(state.clone());
        }
        // intermediates the user still holds: readable, as Copapy's README relies on
        for (v, offset) in compiled.exposed {
            vars.entry(v.id()).or_insert(Var {
                offset,
                ty: v.ty(),
                input: false,
            });
        }
        self.loaded = Some(Loaded {
            program,
            vars,
            _keep: keep,
            steps: compiled.steps,
            by_name: index_symbols(&file.symbols),
            file,
        });
        self.has_run = false;
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
            return slf.borrow().read_one(py, pv.get());
        }
        if number_bits(v)?.is_some() {
            return Ok(v.clone().unbind());
        }
        if let Ok(hook) = v.getattr(intern!(py, "_cp_read")) {
            return Ok(hook.call1((slf,))?.unbind());
        }
        if let Ok(name) = v.cast::<PyString>() {
            let this = slf.borrow();
            let loaded = this.loaded()?;
            let sym = loaded.symbol(name.to_str()?)?;
            if !sym.role.writable() && !this.has_run {
                return Err(PyRuntimeError::new_err(format!(
                    "{:?} is computed by the program, which has not run yet: call Target.run() first",
                    sym.name
                )));
            }
            return symbols::read(py, sym, loaded.program.data());
        }
        let items = v.try_iter().map_err(|_| {
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
        let py = slf.py();
        if let Ok(pv) = v.cast::<PyValue>() {
            return slf.borrow_mut().write_one(pv.get(), x);
        }
        if let Ok(name) = v.cast::<PyString>() {
            let mut this = slf.borrow_mut();
            let loaded = this.loaded.as_mut().ok_or_else(no_program)?;
            let bits = symbols::bits_for_symbol(loaded.symbol(name.to_str()?)?, x)?;
            let data = loaded.program.data_mut();
            for (o, b) in bits {
                data[o as usize..o as usize + 4].copy_from_slice(&b.to_le_bytes());
            }
            return Ok(());
        }
        if let Ok(hook) = v.getattr(intern!(py, "_cp_write")) {
            hook.call1((slf, x))?;
            return Ok(());
        }
        let targets: Vec<Bound<'_, PyAny>> = v
            .try_iter()
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "write_value takes a copapy value or a list of them, not a {}",
                    type_name(v)
                ))
            })?
            .collect::<PyResult<_>>()?;
        if x.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "cannot write a str: expected a list of numbers",
            ));
        }
        let data: Vec<Bound<'_, PyAny>> = x
            .try_iter()
            .map_err(|_| {
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
            Self::write_value(slf, t, d)?;
        }
        Ok(())
    }

    /// The compiled program as a program file (see docs/program-format.md).
    fn program_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.loaded()?.file.encode()))
    }

    /// Writes the compiled program to `path` as a program file, for `cp.load` or `copapy-run`.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        let bytes = self.loaded()?.file.encode();
        std::fs::write(&path, bytes).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("cannot write {}: {e}", path.display()))
        })
    }

    /// The program's variables: `(name, role, dtype, shape)` for each symbol.
    fn variables(&self) -> PyResult<Vec<VariableInfo>> {
        Ok(self
            .loaded()?
            .file
            .symbols
            .iter()
            .map(|s| (s.name.clone(), s.role.name(), s.ty.name(), s.shape.clone()))
            .collect())
    }

    /// A target running the program file `data` (what `cp.load` calls).
    #[staticmethod]
    fn _from_program_bytes(data: &[u8]) -> PyResult<Target> {
        let file = Program::decode(data)
            .map_err(|e| PyValueError::new_err(format!("not a valid program file: {e}")))?;
        let program = load_program(&file)?;
        Ok(Target {
            loaded: Some(Loaded {
                program,
                vars: FxHashMap::default(),
                _keep: Vec::new(),
                steps: 0,
                by_name: index_symbols(&file.symbols),
                file,
            }),
            has_run: false,
        })
    }

    /// Size and shape of the compiled program: steps (stencils), code and data bytes.
    fn stats(&self) -> PyResult<(usize, usize, usize)> {
        let l = self.loaded()?;
        Ok((l.steps, l.file.code.len(), l.file.data.len()))
    }
}
