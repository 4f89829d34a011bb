//! `copapy.Target`: compiles values, owns the loaded program, runs it, reads and writes its data.

use std::borrow::Cow;
use std::sync::OnceLock;
use std::thread::ThreadId;

use pyo3::exceptions::{PyImportError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFrozenSet, PyList, PySet, PyString, PyTuple};
use rustc_hash::FxHashMap;

use copapy_compiler::finish;
use copapy_compiler::targets::{Backend, Target as TargetSpec};
use copapy_compiler::{array, ScalarType, Value};
use copapy_program::{Arch, InstructionBounds, Program, Symbol};
use copapy_runner::LoadedProgram;

use crate::array_ops::PyArrayNode;
use crate::container::{self, Contents, PyContainer};
use crate::convert::{bits_for, number_bits, to_python, type_name};
use crate::device::{DataWrite, Device};
use crate::flatten;
use crate::snapshot;
use crate::structural::StructuralIndex;
use crate::symbols;
use crate::trail::Trail;
use crate::value::PyValue;
use crate::walk;

mod bulk;
mod remembered;
mod step_programs;

fn backend(target: &'static TargetSpec) -> PyResult<&'static Backend> {
    target.backend().map_err(PyRuntimeError::new_err)
}

/// The best target for this machine's CPU, as its kernel reports it (e.g. `armv6` on
/// a Raspberry Pi Zero, `armv7` on a Cortex-A7), or an error naming the machine.
fn host_target() -> PyResult<&'static TargetSpec> {
    copapy_runner::cpu::target()
        .map(TargetSpec::of)
        .ok_or_else(|| {
            PyRuntimeError::new_err(format!(
                "copapy cannot run code natively on this machine ({}); compile for one of its \
             targets with cp.Target('<name>') instead",
                std::env::consts::ARCH
            ))
        })
}

/// Compiles `outputs` into a finished program (no symbols: `@cp.jit` keeps its own
/// map of where each argument and result lives).
pub(crate) fn compile_for(
    target: &'static TargetSpec,
    outputs: &[Value],
) -> PyResult<copapy_compiler::Compiled> {
    finish::finish(
        target,
        finish::Request {
            outputs: outputs.to_vec(),
            variables: Vec::new(),
            updates: Vec::new(),
            name_of: &|_| None,
        },
    )
    .map_err(symbols::finish_error)
}

/// Compiles `outputs` with the native stencils and loads the program.
pub fn compile_values(outputs: &[Value]) -> PyResult<(copapy_compiler::Compiled, LoadedProgram)> {
    let compiled = compile_for(host_target()?, outputs)?;
    let program = LoadedProgram::load(&compiled.program).map_err(crate::device::load_error)?;
    Ok((compiled, program))
}

/// The device that runs `program` for `target`: the connected `runner` if there is one
/// (it resolves imports itself), else host memory for the host's own target and the
/// emulator (`copapy._emulator`) for any other, with `imports`, the Python callables
/// that serve the program's imports (`cp.extern`).
pub(crate) fn make_device(
    py: Python<'_>,
    target: &'static TargetSpec,
    program: &Program,
    runner: Option<Py<PyAny>>,
    imports: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<Device> {
    if let Some(r) = runner {
        return Device::python(py, r, program);
    }
    if Some(target.arch) == Arch::host() {
        return Device::host_with_imports(program, imports);
    }
    let emulator = py
        .import(intern!(py, "copapy._emulator"))?
        .getattr(intern!(py, "Emulator"))?;
    let kwargs = pyo3::types::PyDict::new(py);
    if let Some(i) = imports {
        kwargs.set_item("imports", i)?;
    }
    match emulator.call((target.name,), Some(&kwargs)) {
        Ok(device) => Device::python(py, device.unbind(), program),
        // unicorn is an optional extra: the program can still be saved
        Err(e) if e.is_instance_of::<PyImportError>(py) => Ok(Device::Unavailable(
            e.value(py).str().map(|s| s.to_string()).unwrap_or_default(),
        )),
        Err(e) => Err(e),
    }
}

/// `(name, role, dtype, shape)` of a program variable, as `Target.variables()` lists it.
type VariableInfo = (String, &'static str, &'static str, Vec<u32>);

/// Where a compiled variable lives.
#[derive(Clone, Copy)]
struct Var {
    offset: u32,
    ty: ScalarType,
    input: bool,
    /// Number of 4-byte slots of an array (its elements, or a quarter of them
    /// rounded up for a byte array); 0 for a scalar.
    len: u32,
}

struct Loaded {
    device: Device,
    program: Program,
    vars: FxHashMap<usize, Var>,
    /// Keeps every mapped node alive, so its address (the map key) is never reused.
    keep: Vec<Value>,
    /// `keep` by structure, built by the first lookup of a value not found by identity.
    structural: OnceLock<StructuralIndex>,
    steps: usize,
    /// The stencil name and element count (0 for scalar steps) of each step, for
    /// instruction bounds; None for a program read from a file (it does not record
    /// its steps).
    stencils: Option<Vec<(&'static str, u32)>>,
    /// The linked steps (empty for a program read from a file): an array step's count
    /// is found by running it alone (`step_programs`).
    linked: Vec<copapy_compiler::link::Step>,
    /// Index into `program.symbols` by name.
    by_name: FxHashMap<String, usize>,
    /// Outputs whose node is an updated state (`1.0 * x`), by the address of their
    /// Python object: they hold the run's value, the state's node the next one. The
    /// object is kept alive, so its address is never reused.
    run_values: FxHashMap<usize, (Py<PyAny>, Var)>,
    /// The lists of variables last written and read in bulk (`remembered.rs`).
    remembered: remembered::Remembered,
}

impl Loaded {
    fn symbol(&self, name: &str) -> PyResult<&Symbol> {
        self.by_name
            .get(name)
            .map(|&i| &self.program.symbols[i])
            .ok_or_else(|| symbols::unknown(name, &self.program.symbols))
    }
}

fn index_symbols(symbols: &[Symbol]) -> FxHashMap<String, usize> {
    symbols
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), i))
        .collect()
}

/// A machine to compile for and run on: this process's CPU, or another architecture
/// (run in the emulator).
#[pyclass(module = "copapy", name = "Target")]
pub struct Target {
    spec: &'static TargetSpec,
    /// A remote device (`runner=`) that every compiled program is installed on.
    runner: Option<Py<PyAny>>,
    loaded: Option<Loaded>,
    has_run: bool,
    /// The functions that serve programs' imports (`cp.extern`), by name.
    imports: Option<Py<pyo3::types::PyDict>>,
    /// While `write_value` walks its arguments: the writes found so far, applied
    /// together once everything converted, so a failed write changes nothing.
    /// The thread doing that write, so only its own hooks add to the plan.
    pending: Option<(ThreadId, Vec<DataWrite>)>,
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

/// The Target for reading, or a clear error while a call is changing it.
fn borrow<'py>(slf: &Bound<'py, Target>) -> PyResult<PyRef<'py, Target>> {
    slf.try_borrow().map_err(|_| {
        PyRuntimeError::new_err(
            "this Target is in use by another call (another thread, or code called back \
             from inside compile/write_value): wait until that call returns",
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

impl Target {
    /// (fewest, most) instructions of one run: from `copapy._bounds` for a program
    /// compiled here, from the file for one read from a program file.
    fn instruction_bounds(&self, py: Python<'_>) -> PyResult<(u64, u64)> {
        let loaded = self.loaded()?;
        let Some(names) = loaded.stencils.as_ref() else {
            return match loaded.program.instructions {
                Some(InstructionBounds::Known { fewest, most }) => Ok((fewest, most)),
                Some(InstructionBounds::Unbounded) => Err(PyValueError::new_err(
                    "this program's file records no instruction bound: a step has loop kernels \
                     without a static bound (nested loops over an array's shape, see \
                     docs/determinism.md)",
                )),
                None => Err(PyValueError::new_err(
                    "this program was read from a program file that does not record its \
                     instruction bounds (written before copapy saved them, or where they could \
                     not be counted): compile it with tg.compile(...) and save it again",
                )),
            };
        };
        let programs = step_programs::array_steps(py, self.spec, loaded)?;
        py.import(intern!(py, "copapy._bounds"))?
            .call_method1(
                intern!(py, "program_bounds"),
                (self.spec.name, names.clone(), programs),
            )?
            .extract()
    }

    fn cycle_bounds(&self, py: Python<'_>) -> PyResult<(u64, u64)> {
        let loaded = self.loaded()?;
        let Some(names) = loaded.stencils.as_ref() else {
            return Err(PyValueError::new_err(
                "cycle bounds need the compiled steps: this program was read from a file; \
                 compile it with tg.compile(...)",
            ));
        };
        let programs = step_programs::array_steps(py, self.spec, loaded)?;
        py.import(intern!(py, "copapy._bounds"))?
            .call_method1(
                intern!(py, "program_cycles"),
                (self.spec.name, names.clone(), programs),
            )?
            .extract()
    }

    /// The program as a file records it: with its instruction bounds when it was
    /// compiled here and the stencil table covers it (format version 4); a program
    /// read from a file keeps what the file had. Computed when saving, so compiling
    /// pays nothing for it.
    fn program_for_file(&self, py: Python<'_>) -> PyResult<Cow<'_, Program>> {
        let loaded = self.loaded()?;
        let Some(names) = loaded.stencils.as_ref() else {
            return Ok(Cow::Borrowed(&loaded.program));
        };
        let found = py.import(intern!(py, "copapy._bounds"))?.call_method1(
            intern!(py, "file_bounds"),
            (
                self.spec.name,
                names.clone(),
                step_programs::array_steps(py, self.spec, loaded)?,
            ),
        )?;
        let bounds = if found.is_none() {
            None
        } else if found.is_instance_of::<PyString>() {
            Some(InstructionBounds::Unbounded)
        } else {
            let (fewest, most) = found.extract()?;
            Some(InstructionBounds::Known { fewest, most })
        };
        finish::with_bounds(&loaded.program, bounds)
            .map(Cow::Owned)
            .map_err(symbols::finish_error)
    }

    fn loaded(&self) -> PyResult<&Loaded> {
        self.loaded.as_ref().ok_or_else(no_program)
    }

    /// The program file: as compiled (`initial`), or with the current bytes of every
    /// variable a user can write (`snapshot.rs`): the writable symbols, and the inputs,
    /// states and data arrays this Target compiled (a `names=` entry mixing inputs with
    /// computed values is an output symbol, but its inputs are still written).
    fn file_bytes(&self, py: Python<'_>, initial: bool) -> PyResult<Vec<u8>> {
        let loaded = self.loaded()?;
        let program = self.program_for_file(py)?;
        if initial {
            return Ok(program.encode());
        }
        let vars = loaded.vars.values().filter(|v| v.input).map(|v| {
            let size = if v.len > 0 { 4 * v.len } else { 4 };
            (v.offset, v.offset + size)
        });
        let ranges = snapshot::merge(
            snapshot::writable_symbol_ranges(&loaded.program.symbols)
                .chain(vars)
                .collect(),
        );
        snapshot::encode_current(py, &program, &loaded.device, &ranges)
    }

    /// Where `v` lives: found by identity, else a compiled value structurally equal to it
    /// (Copapy's graph has structural identity, see `structural.rs`).
    fn var(&self, v: &Value) -> PyResult<(&Loaded, Var)> {
        let loaded = self.loaded.as_ref().ok_or_else(not_compiled)?;
        if let Some(var) = loaded.vars.get(&v.id()) {
            return Ok((loaded, *var));
        }
        let index = loaded
            .structural
            .get_or_init(|| StructuralIndex::new(&loaded.keep));
        let unknown = || {
            if copapy_compiler::loops::inside_a_body(v) {
                PyValueError::new_err(
                    "this value was computed inside the body of a cp.fori_loop / cp.scan: it \
                     exists only inside the loop; return it in the carry (or as a scan \
                     output) and read that after the loop",
                )
            } else {
                not_compiled()
            }
        };
        let same = index.find(v).ok_or_else(unknown)?;
        let var = *loaded.vars.get(&same.id()).ok_or_else(unknown)?;
        Ok((loaded, var))
    }

    /// Where the value object `v` lives: an output of the run that aliases a state by
    /// its object, anything else by its node ([`Target::var`]).
    fn var_of(&self, v: &Bound<'_, PyValue>) -> PyResult<(&Loaded, Var)> {
        let run = self.loaded.as_ref().and_then(|l| {
            let (_, var) = l.run_values.get(&(v.as_ptr() as usize))?;
            Some((l, *var))
        });
        match run {
            Some(found) => Ok(found),
            None => self.var(v.get().value()),
        }
    }

    fn read_one(&self, py: Python<'_>, v: &Bound<'_, PyValue>) -> PyResult<Py<PyAny>> {
        let (loaded, var) = self.var_of(v)?;
        if !var.input && !self.has_run {
            return Err(PyRuntimeError::new_err(
                "this value is computed by the program, which has not run yet: call Target.run() first",
            ));
        }
        Ok(to_python(
            py,
            var.ty,
            loaded.device.read_u32(py, var.offset)?,
        ))
    }

    /// Checks and converts one write; it is applied later by [`Target::apply_writes`].
    fn plan_one(&mut self, v: &Bound<'_, PyValue>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let (_, var) = self.var_of(v)?;
        if !var.input {
            return Err(PyValueError::new_err(
                "only input variables created with cp.value(...) can be written; \
                 this value is computed by the program and would be overwritten by run()",
            ));
        }
        let write = DataWrite::word(var.offset, bits_for(var.ty, x)?);
        match self.pending.as_mut() {
            Some((_, writes)) => writes.push(write),
            None => self.pending = Some((std::thread::current().id(), vec![write])),
        }
        Ok(())
    }

    /// Checks and converts a write to the named program variable `name` (all its elements).
    fn plan_named(&mut self, name: &Bound<'_, PyString>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let loaded = self.loaded.as_ref().ok_or_else(no_program)?;
        let bits = symbols::bits_for_symbol(loaded.symbol(name.to_str()?)?, x)?;
        match self.pending.as_mut() {
            Some((_, writes)) => writes.extend(bits),
            None => self.pending = Some((std::thread::current().id(), bits)),
        }
        Ok(())
    }

    /// Applies planned writes through the device (host memory, emulator or remote runner),
    /// one device write per run of consecutive bytes (an array is one bulk write).
    fn apply_writes(&mut self, py: Python<'_>, writes: &[DataWrite]) -> PyResult<()> {
        let loaded = self.loaded.as_mut().ok_or_else(not_compiled)?;
        if let Device::Host(_) | Device::HostImports(..) = loaded.device {
            // host memory: a write is a copy, one device access buys nothing
            for w in writes {
                let bits = w.bits.to_le_bytes();
                loaded
                    .device
                    .write(py, w.offset, &bits[..usize::from(w.size).min(4)])?;
            }
            return Ok(());
        }
        let mut run: Vec<u8> = Vec::new();
        let mut start = 0u32;
        for w in writes {
            if !run.is_empty() && u64::from(start) + run.len() as u64 != u64::from(w.offset) {
                loaded.device.write(py, start, &run)?;
                run.clear();
            }
            if run.is_empty() {
                start = w.offset;
            }
            run.extend(w.bytes());
        }
        if !run.is_empty() {
            loaded.device.write(py, start, &run)?;
        }
        Ok(())
    }

    /// Adds the writes of `x` to container `v` (described by `c`) to `pending`: `x` is
    /// checked against the container's shape by the package's registered conversions.
    fn plan_container(
        slf: &Bound<'_, Self>,
        v: &Bound<'_, PyAny>,
        c: &PyContainer,
        x: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = slf.py();
        let constant = |i: Option<usize>, leaf: &Bound<'_, PyAny>| -> PyResult<PyErr> {
            let what = match i {
                Some(i) => format!("element {i} of this {}", type_name(v)),
                None => format!("this {}", type_name(v)),
            };
            Ok(PyTypeError::new_err(format!(
                "{what} is the constant {}, not a copapy value: only input values created \
                 with cp.value(...) can be written",
                leaf.repr()?
            )))
        };
        match c.contents() {
            Contents::Element(leaf) => {
                let leaf = leaf.bind(py);
                match leaf.cast::<PyValue>() {
                    Ok(pv) => borrow_mut(slf)?.plan_one(pv, x),
                    Err(_) => Err(constant(None, leaf)?),
                }
            }
            Contents::Sequence(leaves) => {
                let leaves = leaves.bind(py);
                let what = format!("a {}", type_name(v));
                let shape = PyTuple::new(py, c.shape())?;
                let data = container::registry()?
                    .flatten
                    .bind(py)
                    .call1((x, shape, what))?;
                let data: Vec<Bound<'_, PyAny>> = data.try_iter()?.collect::<PyResult<_>>()?;
                if data.len() != leaves.len() {
                    return Err(PyRuntimeError::new_err(format!(
                        "internal error: the data for a {} has {} numbers for {} elements",
                        type_name(v),
                        data.len(),
                        leaves.len()
                    )));
                }
                let mut targets = Vec::with_capacity(leaves.len());
                for (i, leaf) in leaves.iter().enumerate() {
                    match leaf.cast::<PyValue>() {
                        Ok(pv) => targets.push(pv.clone()),
                        Err(_) => return Err(constant(Some(i), &leaf)?),
                    }
                }
                let mut this = borrow_mut(slf)?;
                for (t, d) in targets.iter().zip(&data) {
                    this.plan_one(t, d)?;
                }
                Ok(())
            }
            Contents::Array { node, dtype } => {
                let raw = crate::ndcore::nd_encode(x, c.shape().to_vec(), dtype.name())?;
                Self::write_array(slf, node.bind(py), raw.as_bytes())
            }
        }
    }

    /// What `read_value` returns for container `c`: its leaves read (rebuilt into the
    /// container when it can rebuild itself, else nested lists); an array's elements in
    /// one bulk read, as nested lists (Copapy's form).
    fn read_container(slf: &Bound<'_, Self>, c: &PyContainer) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        match c.contents() {
            Contents::Element(leaf) => {
                let x = Self::read_value(slf, leaf.bind(py))?.into_bound(py);
                Ok(c.rebuild(py, x.clone())?.unwrap_or(x).unbind())
            }
            Contents::Sequence(leaves) => {
                let items = leaves
                    .bind(py)
                    .iter()
                    .map(|leaf| Self::read_value(slf, &leaf))
                    .collect::<PyResult<Vec<_>>>()?;
                if c.has_rebuild() {
                    let t = PyTuple::new(py, items)?.into_any();
                    return Ok(c.rebuild(py, t)?.expect("has a rebuild").unbind());
                }
                container::nest(py, items, c.shape())
            }
            Contents::Array { node, dtype } => {
                let node = node.bind(py).get();
                let mut raw = Self::read_array(slf, node)?;
                if array::is_bytes(node.value()) {
                    // one byte per element in data memory: widen to the 4-byte form
                    let len = array::len_of(node.value()).unwrap_or(0) as usize;
                    raw = raw
                        .iter()
                        .take(len)
                        .flat_map(|&b| u32::from(b).to_le_bytes())
                        .collect();
                }
                let ty = dtype.read_type(node.value().ty());
                container::nest_words(py, &raw, ty, c.shape())
            }
        }
    }

    /// The bytes of a compiled array (one device read).
    fn read_array(slf: &Bound<'_, Self>, node: &PyArrayNode) -> PyResult<Vec<u8>> {
        let py = slf.py();
        let this = borrow(slf)?;
        let (loaded, var) = this.var(node.value())?;
        if !var.input && !this.has_run {
            return Err(PyRuntimeError::new_err(
                "this array is computed by the program, which has not run yet: call Target.run() first",
            ));
        }
        let mut buf = vec![0u8; var.len as usize * 4];
        loaded.device.read(py, var.offset, &mut buf)?;
        Ok(buf)
    }

    /// Overwrites an input array with little-endian 4-byte patterns. Within `write_value`
    /// it joins that call's plan, so a failed write elsewhere in the same call changes
    /// nothing; the plan applies consecutive slots as one bulk write.
    fn write_array(
        slf: &Bound<'_, Self>,
        node: &Bound<'_, PyArrayNode>,
        bytes: &[u8],
    ) -> PyResult<()> {
        let py = slf.py();
        let mut this = borrow_mut(slf)?;
        let (_, var) = this.var(node.get().value())?;
        if !var.input {
            return Err(PyValueError::new_err(
                "only arrays created from numbers can be written; this array is computed by \
                 the program and would be overwritten by run()",
            ));
        }
        let value = node.get().value();
        let elements = array::len_of(value).unwrap_or(0) as usize;
        if bytes.len() != elements * 4 {
            return Err(PyValueError::new_err(format!(
                "got {} bytes for an array of {} elements (4 bytes each)",
                bytes.len(),
                elements
            )));
        }
        // a byte array stores the low byte of each element (the encoder checked 0..255),
        // its last slot padded with zeros
        let packed;
        let bytes = if array::is_bytes(value) {
            let mut b: Vec<u8> = bytes.iter().step_by(4).copied().collect();
            b.resize(var.len as usize * 4, 0);
            packed = b;
            &packed[..]
        } else {
            bytes
        };
        let writes = bytes.chunks_exact(4).zip(0u32..).map(|(word, k)| {
            let bits = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            DataWrite::word(var.offset + 4 * k, bits)
        });
        let me = std::thread::current().id();
        match this.pending.as_mut() {
            Some((owner, plan)) if *owner == me => {
                plan.extend(writes);
                Ok(())
            }
            Some(_) => Err(PyRuntimeError::new_err(
                "this Target is being written by another thread: wait until that \
                 write_value returns",
            )),
            None => {
                let writes: Vec<DataWrite> = writes.collect();
                this.apply_writes(py, &writes)
            }
        }
    }

    /// Walks `v` and `x` together, adding every write to `pending`.
    fn plan_write(
        slf: &Bound<'_, Self>,
        v: &Bound<'_, PyAny>,
        x: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if let Ok(pv) = v.cast::<PyValue>() {
            return borrow_mut(slf)?.plan_one(pv, x);
        }
        // a program variable by name, also as an element of a list of targets
        if let Ok(name) = v.cast::<PyString>() {
            return borrow_mut(slf)?.plan_named(name, x);
        }
        let _level = walk::enter(v, "Target.write_value")?;
        if let Some(c) = container::describe(v)? {
            return Self::plan_container(slf, v, c.get(), x);
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
        // a NumPy array whose elements are not numbers (objects, text, datetimes) is
        // refused as a whole, naming its dtype, before any element is looked at
        crate::convert::check_dtype(x)?;
        // a 1-D NumPy array into scalar variables (a nested list of them): from its buffer
        let bulk = borrow(slf)?.bulk_writes(&targets, x);
        if let Some(writes) = bulk {
            let mut this = borrow_mut(slf)?;
            if let Some((_, pending)) = this.pending.as_mut() {
                pending.extend(writes);
                return Ok(());
            }
        }
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

/// Where programs run: the target to compile for and, with `runner=`, the connected
/// device (a `copapy-run` address, "process", or a device object). Shared by `Target`
/// and `@cp.jit`.
pub(crate) fn resolve_placement<'py>(
    py: Python<'py>,
    arch: &str,
    runner: Option<&Bound<'py, PyAny>>,
) -> PyResult<(&'static TargetSpec, Option<Bound<'py, PyAny>>)> {
    // A runner decides the architecture: programs are compiled for what it runs.
    let runner = match runner {
        None => None,
        Some(r) => Some(
            py.import(intern!(py, "copapy._connect"))?
                .getattr(intern!(py, "connect"))?
                .call1((r,))?,
        ),
    };
    let spec = match &runner {
        None if arch == "native" => host_target()?,
        None => TargetSpec::find(arch).map_err(PyValueError::new_err)?,
        Some(device) => runner_target(device, arch)?,
    };
    backend(spec)?;
    Ok((spec, runner))
}

/// The target to compile for on `device`: the one it reports (`arch` and, for a
/// `copapy-run`, its CPU's `features`), or `wanted` if the device's CPU has all its
/// features (an armv7 runner runs armv6 programs, not the other way round).
fn runner_target(device: &Bound<'_, PyAny>, wanted: &str) -> PyResult<&'static TargetSpec> {
    let py = device.py();
    let arch: String = device.getattr(intern!(py, "arch"))?.extract()?;
    let features: String = match device.getattr_opt(intern!(py, "features"))? {
        Some(f) => f.extract()?,
        None => String::new(),
    };
    let (runs, has) =
        copapy_program::targets::TargetInfo::from_report(&arch, &features).map_err(|e| {
            PyValueError::new_err(if arch == "unsupported" {
                format!("the runner's machine ({features}) is not one copapy generates code for")
            } else {
                e.to_string()
            })
        })?;
    let runs = TargetSpec::of(runs);
    if wanted == "native" {
        return Ok(runs);
    }
    let spec = TargetSpec::find(wanted).map_err(PyValueError::new_err)?;
    let missing = spec.features.missing(has);
    if spec.arch != runs.arch || !missing.is_empty() {
        let why = if spec.arch != runs.arch {
            format!("it executes {} code", runs.arch.name())
        } else {
            format!("its CPU ({has}) lacks {missing}")
        };
        return Err(PyValueError::new_err(format!(
            "the runner cannot run {} programs: {why}; omit arch or pass '{}'",
            spec.name, runs.name
        )));
    }
    Ok(spec)
}

#[pymethods]
impl Target {
    #[new]
    #[pyo3(signature = (arch = "native", optimization = "O3", runner = None, imports = None))]
    fn new(
        py: Python<'_>,
        arch: &str,
        optimization: &str,
        runner: Option<&Bound<'_, PyAny>>,
        imports: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Self> {
        let _ = optimization; // one optimisation level exists; accepted for Copapy compatibility
        if runner.is_some() && imports.is_some() {
            return Err(PyValueError::new_err(
                "imports= serves programs run here or in the emulator; a runner resolves a \
                 program's imports itself (copapy-run --plugin, the firmware's import table)",
            ));
        }
        let (spec, runner) = resolve_placement(py, arch, runner)?;
        Ok(Target {
            spec,
            runner: runner.map(Bound::unbind),
            loaded: None,
            has_run: false,
            pending: None,
            imports: imports.map(|d| d.copy()).transpose()?.map(Bound::unbind),
        })
    }

    /// Compiles the code that computes `values` (values, or lists/tuples of values).
    ///
    /// `names` maps names to values or containers for the program's symbol table (on
    /// top of names given with `cp.value(..., name=...)`; the rest get `out<i>` for the
    /// i-th argument and `in<k>` for other variables). `updates` maps state variables
    /// to their next values, stored at the end of every run, so one run is one loop step.
    #[pyo3(signature = (*values, names = None, updates = None))]
    fn compile(
        slf: &Bound<'_, Self>,
        values: &Bound<'_, PyTuple>,
        names: Option<&Bound<'_, pyo3::types::PyDict>>,
        updates: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let py = slf.py();
        // no borrow while walking: a generator among the values may use this Target
        let (spec, runner, imports) = {
            let this = borrow_mut(slf)?;
            let imports = this.imports.as_ref().map(|d| d.clone_ref(py));
            (
                this.spec,
                this.runner.as_ref().map(|r| r.clone_ref(py)),
                imports,
            )
        };
        let symbols::Updates {
            pairs: update_pairs,
            state_objects,
        } = match updates {
            Some(u) => symbols::collect_updates(u)?,
            None => symbols::Updates::default(),
        };
        // one walk over the arguments: the values to compile and their symbols' shapes
        let mut trail = Trail::marking(&state_objects);
        let mut outputs = Vec::new();
        let arguments = values
            .iter()
            .map(|v| flatten::walk_argument(&v, &mut outputs, &mut trail))
            .collect::<PyResult<Vec<_>>>()?;
        let plan = symbols::plan(arguments, &outputs, names, &update_pairs, trail)?;
        let run_types: Vec<ScalarType> = plan
            .run_objects
            .iter()
            .map(|(_, position)| plan.finish.values()[*position].ty())
            .collect();
        let compiled = plan.finish.finish(spec).map_err(symbols::finish_error)?;
        let mut run_values = FxHashMap::default();
        for ((obj, position), ty) in plan.run_objects.into_iter().zip(run_types) {
            let var = Var {
                offset: compiled.outputs[position],
                ty,
                input: false,
                len: 0,
            };
            run_values.insert(obj.as_ptr() as usize, (obj, var));
        }
        let device = make_device(
            py,
            spec,
            &compiled.program,
            runner,
            imports.as_ref().map(|d| d.bind(py)),
        )?;
        let stencils = finish::step_names(spec, &compiled);
        let mut vars = FxHashMap::default();
        let mut keep = Vec::with_capacity(outputs.len() + compiled.inputs.len());
        for (v, &offset) in outputs.iter().zip(&compiled.outputs) {
            vars.insert(
                v.id(),
                Var {
                    offset,
                    ty: v.ty(),
                    input: v.is_input() || array::is_data(v),
                    len: array::slots_of(v).unwrap_or(0),
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
                    len: array::slots_of(&v).unwrap_or(0),
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
                    len: array::slots_of(state).unwrap_or(0),
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
                len: array::slots_of(&v).unwrap_or(0),
            });
            keep.push(v);
        }
        let mut this = borrow_mut(slf)?;
        this.loaded = Some(Loaded {
            stencils: Some(stencils),
            linked: compiled.linked_steps,
            device,
            by_name: index_symbols(&compiled.program.symbols),
            run_values,
            program: compiled.program,
            vars,
            keep,
            structural: OnceLock::new(),
            steps: compiled.steps,
            remembered: Default::default(),
        });
        this.has_run = false;
        Ok(())
    }

    /// Runs the compiled program once. Data memory keeps its state between runs.
    fn run(&mut self, py: Python<'_>) -> PyResult<()> {
        let loaded = self.loaded.as_mut().ok_or_else(no_program)?;
        loaded.device.run(py)?;
        self.has_run = true;
        Ok(())
    }

    /// Reads a compiled value (a Python number), or a list of them. Containers (vectors,
    /// matrices, anything with `__copapy__`) come back as the same kind of container
    /// when they can rebuild themselves; arrays as nested lists.
    /// A freshly traced value structurally equal to a compiled one reads that one.
    #[pyo3(signature = (variables))]
    fn read_value(slf: &Bound<'_, Self>, variables: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let v = variables;
        let py = slf.py();
        // the list read last time in bulk (remembered.rs)
        if let Some(list) = slf.try_borrow().ok().and_then(|t| t.read_remembered(py, v)) {
            return list;
        }
        // a list or tuple of scalar values or names: one device read (bulk.rs)
        if let Some(items) = bulk::plain_sequence(v) {
            let list = borrow(slf)?.bulk_read(py, &items);
            if let Some(list) = list {
                if list.is_ok() {
                    borrow_mut(slf)?.remember_read(&items);
                }
                return list;
            }
        }
        if let Ok(pv) = v.cast::<PyValue>() {
            return borrow(slf)?.read_one(py, pv);
        }
        // before the number check: a container may also convert to a number
        if let Some(c) = container::describe(v)? {
            let _level = walk::enter(v, "Target.read_value")?;
            return Self::read_container(slf, c.get());
        }
        if number_bits(v)?.is_some() {
            return Ok(v.clone().unbind());
        }
        let _level = walk::enter(v, "Target.read_value")?;
        if let Ok(name) = v.cast::<PyString>() {
            let this = borrow(slf)?;
            let loaded = this.loaded()?;
            let sym = loaded.symbol(name.to_str()?)?;
            if !sym.role.writable() && !this.has_run {
                return Err(PyRuntimeError::new_err(format!(
                    "{:?} is computed by the program, which has not run yet: call Target.run() first",
                    sym.name
                )));
            }
            return symbols::read(py, sym, |o, buf| loaded.device.read(py, o, buf));
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
    /// Containers take data of their shape (nested lists, NumPy arrays).
    #[pyo3(signature = (variables, data))]
    fn write_value(
        slf: &Bound<'_, Self>,
        variables: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (v, x) = (variables, data);
        let py = slf.py();
        // the list written last time in bulk, from an array like last time (remembered.rs)
        if let Ok(mut this) = slf.try_borrow_mut() {
            if let Some(writes) = this.remembered_writes(v, x) {
                return writes.apply(&mut this, py);
            }
        }
        // a list or tuple of scalar values or names from a 1-D NumPy array (bulk.rs)
        if let Some(items) = bulk::plain_sequence(v) {
            let mut this = borrow_mut(slf)?;
            if this.pending.is_none() {
                if let Some(writes) = this.bulk_writes(&items, x) {
                    this.apply_writes(py, &writes)?;
                    this.remember_write(&items, x);
                    return Ok(());
                }
            }
        }
        // called back from Python code inside a write (a data conversion): part of the
        // outer write's plan
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
        // a program variable by name (Copapy's string form): a top-level form only
        let planned = match v.cast::<PyString>() {
            Ok(name) => borrow_mut(slf).and_then(|mut this| this.plan_named(name, x)),
            Err(_) => Self::plan_write(slf, v, x),
        };
        let mut this = borrow_mut(slf)?;
        let writes = this.pending.take().map(|(_, w)| w).unwrap_or_default();
        planned?;
        this.apply_writes(py, &writes)
    }

    /// The elements of a compiled array as little-endian 4-byte patterns (one bulk
    /// read; `cp.array.to_numpy` makes a NumPy array of them).
    fn _read_array<'py>(
        slf: &Bound<'py, Self>,
        node: &Bound<'_, PyArrayNode>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let raw = Self::read_array(slf, node.get())?;
        Ok(PyBytes::new(slf.py(), &raw))
    }

    /// Size and shape of the compiled program: steps (stencils), code and data bytes.
    fn stats(&self) -> PyResult<(usize, usize, usize)> {
        let l = self.loaded()?;
        Ok((l.steps, l.program.code.len(), l.program.data.len()))
    }

    /// The most instructions one run of the compiled program executes on this target:
    /// the sum over its steps of each stencil's longest path (with the helpers it
    /// calls), from the stencil build's control-flow analysis (docs/determinism.md).
    /// Equal to `min_instructions()` when the program is branch-free.
    fn max_instructions(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.instruction_bounds(py)?.1)
    }

    /// The fewest instructions one run of the compiled program executes (see
    /// `max_instructions`).
    fn min_instructions(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.instruction_bounds(py)?.0)
    }

    /// The most cycles one run of the compiled program takes on a Cortex-M4, from the
    /// core's documented instruction timings with code and data in zero-wait-state
    /// memory and no interrupt (docs/determinism.md); scalar programs compiled here.
    fn max_cycles(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.cycle_bounds(py)?.1)
    }

    /// The fewest cycles one run takes (see `max_cycles`).
    fn min_cycles(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.cycle_bounds(py)?.0)
    }

    /// The target's name, e.g. `"x86_64"` or `"cortex-m4"`.
    #[getter]
    fn arch(&self) -> &'static str {
        self.spec.name
    }

    /// The program as a program file (what any device or runner loads; see
    /// docs/program-format.md), carrying the current values of its inputs and state
    /// (what `write_value` set and runs advanced, read back from the device); with
    /// `initial=True`, the values it was compiled with. With `code_base=` and `data_base=`
    /// it is a pre-linked image: code and data patched for a firmware whose buffers are at
    /// those addresses, with no patches left (docs/program-format.md, "Pre-linked images").
    #[pyo3(signature = (*, initial = false, code_base = None, data_base = None))]
    fn program_bytes<'py>(
        &self,
        py: Python<'py>,
        initial: bool,
        code_base: Option<u64>,
        data_base: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let placement = crate::prelinked::requested(code_base, data_base)?;
        let bytes = crate::prelinked::link(self.file_bytes(py, initial)?, placement)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Writes the program to `path` as a program file, for `cp.load` or `copapy-run`: with
    /// the current values of its inputs and state, or (`initial=True`) the compiled ones;
    /// pre-linked for fixed buffer addresses with `code_base=` and `data_base=` (see
    /// `program_bytes`).
    #[pyo3(signature = (path, *, initial = false, code_base = None, data_base = None))]
    fn save(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        initial: bool,
        code_base: Option<u64>,
        data_base: Option<u64>,
    ) -> PyResult<()> {
        let placement = crate::prelinked::requested(code_base, data_base)?;
        let bytes = crate::prelinked::link(self.file_bytes(py, initial)?, placement)?;
        std::fs::write(&path, bytes).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("cannot write {}: {e}", path.display()))
        })
    }

    /// The program's variables: `(name, role, dtype, shape)` for each symbol.
    fn variables(&self) -> PyResult<Vec<VariableInfo>> {
        Ok(self
            .loaded()?
            .program
            .symbols
            .iter()
            .map(|s| (s.name.clone(), s.role.name(), s.ty.name(), s.shape.clone()))
            .collect())
    }

    /// The imported functions the compiled program calls (`cp.extern`): `(name,
    /// signature)` in file order, the C signature every runner must offer for each.
    fn imports(&self) -> PyResult<Vec<(String, String)>> {
        Ok(self
            .loaded()?
            .program
            .imports
            .iter()
            .map(|i| (i.name.clone(), i.signature.clone()))
            .collect())
    }

    /// A target running the program file `data` (what `cp.load` calls): in this
    /// process, or on `runner` (a device object) if given.
    #[staticmethod]
    #[pyo3(signature = (data, runner = None, imports = None))]
    fn _from_program_bytes(
        py: Python<'_>,
        data: &[u8],
        runner: Option<Py<PyAny>>,
        imports: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Target> {
        let program = Program::decode(data)
            .map_err(|e| PyValueError::new_err(format!("not a valid program file: {e}")))?;
        // The target whose architecture and features the program was compiled for
        // (e.g. cortex-m4 among the Thumb targets): its emulator runs it if this
        // machine cannot.
        let candidates = copapy_compiler::targets::TARGETS
            .iter()
            .filter(|t| t.arch == program.arch);
        let mut spec = None;
        // If none fits, name the missing features of the closest one (fewest missing bits).
        let mut missing: Option<(u32, copapy_program::FormatError)> = None;
        for t in candidates {
            match copapy_program::format::check_features(program.features, t.features.0) {
                Ok(()) => {
                    spec = Some(t);
                    break;
                }
                Err(e) => {
                    let count = (program.features & !t.features.0).count_ones();
                    if missing.as_ref().is_none_or(|(c, _)| count < *c) {
                        missing = Some((count, e));
                    }
                }
            }
        }
        let missing = missing.map(|(_, e)| e);
        let spec = spec.ok_or_else(|| {
            PyValueError::new_err(match missing {
                Some(e) => format!("no copapy target can run this program: {e}"),
                None => "the program's architecture has no copapy target".to_string(),
            })
        })?;
        let device = make_device(
            py,
            spec,
            &program,
            runner.as_ref().map(|r| r.clone_ref(py)),
            imports,
        )?;
        Ok(Target {
            spec,
            runner,
            imports: imports.map(|d| d.copy()).transpose()?.map(Bound::unbind),
            loaded: Some(Loaded {
                device,
                by_name: index_symbols(&program.symbols),
                run_values: FxHashMap::default(),
                program,
                vars: FxHashMap::default(),
                keep: Vec::new(),
                structural: OnceLock::new(),
                steps: 0,
                stencils: None,
                linked: Vec::new(),
                remembered: Default::default(),
            }),
            has_run: false,
            pending: None,
        })
    }
}
