//! `copapy.jit`: compile a Python function on first call, then call native code.
//!
//! A [`JitFunction`] keeps compiled specialisations by call signature: the number of
//! arguments, the scalar type of each number, the kind and length of each list or tuple,
//! the element format (dtype and byte order) and shape of each NumPy array, and the
//! identity of any other object (such as `self` of a method). A call first binds its
//! arguments straight to the specialisation called last (binding checks each argument
//! against it, so a repeated call builds no signature and acquires each NumPy buffer once);
//! otherwise it computes the signature, finds the specialisation by hash and binds to that.
//! Binding writes each number straight into data memory; the program runs and the result
//! is read back into the structure the function returned. Arguments of exactly the types
//! traced are bound by the specialisation's argument plan (`jit_args.rs`) before any of
//! the checks here run; only what the plan does not take comes to [`bind`]. A new signature traces and
//! compiles the function; at most `cache_size` specialisations are kept, the least
//! recently used is dropped first.
//!
//! No borrow of the jit function is held while Python code runs (tracing), so the traced
//! function may call jit functions, itself included: with traced values such a call becomes
//! part of the trace, with numbers it is compiled and run as usual.
//!
//! A NumPy array of more than [`PACK_THRESHOLD`] elements arrives as one `cp.array`
//! (Copapy's packing threshold): its numbers are copied into the array's data range in
//! one pass per call (a `memcpy` for float32 and int32). A `cp.array` result comes back
//! as a NumPy array; so do vector and matrix results of a function called with NumPy
//! arrays, whatever their size.

use pyo3::exceptions::{PyRecursionError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyFrozenSet, PyList, PySet, PyString, PyTuple};
use pyo3::PyTraverseError;
use rustc_hash::FxHashMap;

use copapy_compiler::{ScalarType, Value};
use copapy_runner::LoadedProgram;

use crate::array_ops::PyArrayNode;
use crate::container::{self, Contents, PyContainer};
use crate::convert::{number, number_bits, type_name, Number};
use crate::device::Device;
use crate::jit_args::{input_bits, ArgPlan, ArgStep, Dest};
use crate::jit_output::{
    compact_output, place_outputs, read_result, visit_output, Element, Kept, Output,
};
use crate::numpy_buffer::{self, Buffer, Direct, Elem, ExactArray, OutDtype};
use crate::spec_cache::SpecCache;
use crate::target::{compile_for, compile_values, make_device, resolve_placement};
use crate::value::PyValue;
use crate::walk;

/// NumPy arguments with more elements than this arrive as one `cp.array`.
pub const PACK_THRESHOLD: usize = 64;

/// How one argument looks, and where its numbers go in data memory.
enum Input {
    /// A NumPy array (C order) passed as one `cp.array` stored at `slot`.
    Packed {
        elem: Elem,
        /// The array's dtype object when traced: an array with this very dtype object has
        /// format `elem` (see [`numpy_buffer::direct`]).
        dtype: Py<PyAny>,
        shape: Vec<usize>,
        slot: Option<u32>,
    },
    /// A number of this type; `None` when the program does not read it.
    Scalar(ScalarType, Option<u32>),
    /// A list or tuple with exactly these items.
    Seq { tuple: bool, items: Vec<Input> },
    /// A NumPy array of this element format and shape (any memory layout).
    Array {
        elem: Elem,
        /// The dtype object when traced, as for `Packed`: read without the buffer
        /// protocol when an argument has this very dtype object.
        dtype: Py<PyAny>,
        shape: Vec<usize>,
        slots: Vec<Option<u32>>,
    },
    /// Any other object (e.g. `self` of a method): passed to the function unchanged, so
    /// the specialisation holds for this very object only.
    Object(Py<PyAny>),
}

/// Where a jit function's programs run.
enum Placement {
    /// In this process, called directly (the fast path).
    Host,
    /// On another device: a target name (run in the emulator) or a runner address;
    /// every specialisation gets its own device (emulator or connection).
    Device {
        arch: String,
        runner: Option<String>,
        /// Python callables serving the program's imports (`cp.extern`), by name.
        imports: Option<Py<PyDict>>,
    },
}

/// A specialisation's compiled program, where it runs.
enum SpecProgram {
    Host(LoadedProgram),
    /// Any other device, with a copy of its data memory: arguments are bound into the
    /// copy, which is written whole, run, and read back whole (one round trip each).
    Device {
        device: Device,
        data: Vec<u8>,
    },
}

struct Specialisation {
    inputs: Vec<Input>,
    /// How a call of the exact argument types traced binds (`jit_args.rs`); `inputs`
    /// decide every other call.
    plan: ArgPlan,
    output: Output,
    /// The result the last call returned, if refillable (see `jit_output.rs`).
    kept: Kept,
    /// `None` when the function's result needs no code at all.
    program: Option<SpecProgram>,
}

/// Default of `cache_size`: specialisations kept per jit function.
pub const DEFAULT_CACHE_SIZE: usize = 64;

/// A function compiled on first call for each argument signature (`@cp.jit`).
#[pyclass(module = "copapy", name = "jit_function", dict)]
pub struct JitFunction {
    /// The Python function; `None` only after the garbage collector cleared a cycle.
    func: Option<Py<PyAny>>,
    /// Specialisations by argument signature (see [`signature`]), at most `cache_size`;
    /// the one called last is tried first (see [`call_last`]).
    specs: SpecCache<Specialisation>,
    /// Where the programs run.
    placement: Placement,
}

thread_local! {
    /// Jit calls inlined into a trace on this thread, nested (see `JitFunction::__call__`).
    static INLINE_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A number argument: a Python or NumPy number, or a 0-d NumPy array.
fn scalar_number(arg: &Bound<'_, PyAny>) -> PyResult<Option<Number>> {
    if let Some(n) = number(arg)? {
        return Ok(Some(n));
    }
    if numpy_buffer::is_numpy(arg) && arg.getattr("ndim")?.extract::<usize>()? == 0 {
        let a = numpy_buffer::read(arg, true)?;
        return Ok(a.numbers.first().copied());
    }
    Ok(None)
}

const SIG_BOOL: u64 = 1;
const SIG_INT: u64 = 2;
const SIG_FLOAT: u64 = 3;
const SIG_LIST: u64 = 4;
const SIG_TUPLE: u64 = 5;
const SIG_ARRAY: u64 = 6;
const SIG_OBJECT: u64 = 7;

fn sig_scalar(ty: ScalarType) -> u64 {
    match ty {
        ScalarType::Bool => SIG_BOOL,
        ScalarType::Int => SIG_INT,
        ScalarType::Float => SIG_FLOAT,
    }
}

/// Appends the signature of one argument: everything a specialisation depends on (scalar
/// types, sequence kinds and lengths, array formats and shapes, identity of other objects).
/// `Ok(false)` when the argument holds traced values (the call is part of a trace).
///
/// The buffers of NumPy arrays (not of 0-d ones) go to `held`, in argument order, so
/// binding uses them instead of acquiring them again.
fn signature(arg: &Bound<'_, PyAny>, sig: &mut Vec<u64>, held: &mut Vec<Buffer>) -> PyResult<bool> {
    if arg.cast::<PyValue>().is_ok() {
        return Ok(false);
    }
    // arrays first: `number` would probe their attributes in vain (arrays have a length)
    if numpy_buffer::is_ndarray(arg) {
        return numpy_signature(arg, sig, held);
    }
    if let Some(n) = number(arg)? {
        sig.push(sig_scalar(n.natural_type()));
        return Ok(true);
    }
    let tuple = arg.cast::<PyTuple>().is_ok();
    if tuple || arg.cast::<PyList>().is_ok() {
        let _level = walk::enter(arg, "jit function argument")?;
        sig.push(if tuple { SIG_TUPLE } else { SIG_LIST });
        sig.push(arg.len()? as u64);
        for item in arg.try_iter()? {
            if !signature(&item?, sig, held)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if numpy_buffer::is_numpy(arg) {
        // a NumPy scalar `number` does not take: the buffer reader names its dtype
        return numpy_signature(arg, sig, held);
    }
    sig.push(SIG_OBJECT);
    sig.push(arg.as_ptr() as u64);
    Ok(true)
}

/// [`signature`] of a NumPy array or scalar.
fn numpy_signature(
    arg: &Bound<'_, PyAny>,
    sig: &mut Vec<u64>,
    held: &mut Vec<Buffer>,
) -> PyResult<bool> {
    let b = Buffer::get(arg)?;
    if b.ndim() == 0 {
        sig.push(sig_scalar(b.elem().scalar_type()));
    } else {
        sig.push(SIG_ARRAY);
        sig.push(u64::from(b.elem().code()));
        sig.push(b.ndim() as u64);
        sig.extend(b.dims_u64());
        held.push(b);
    }
    Ok(true)
}

fn outside() -> PyErr {
    PyRuntimeError::new_err("internal error: a packed argument lies outside data memory")
}

/// The buffer of NumPy array `arg`: the next of `held` if it is `arg`'s, else acquired now.
fn buffer_of(arg: &Bound<'_, PyAny>, held: &mut std::vec::IntoIter<Buffer>) -> PyResult<Buffer> {
    match held.as_slice().first() {
        Some(b) if b.is_of(arg) => Ok(held.next().expect("a first element exists")),
        _ => Buffer::get(arg),
    }
}

/// Writes `arg` into `data` if it matches `input`; `Ok(false)` on a mismatch. Array
/// buffers come from `held` (see [`signature`]) where they were acquired already.
///
/// A mismatch may leave some inputs written: harmless, as every successful bind writes
/// all of a program's inputs before it runs.
fn bind(
    input: &Input,
    arg: &Bound<'_, PyAny>,
    data: &mut [u8],
    held: &mut std::vec::IntoIter<Buffer>,
) -> PyResult<bool> {
    let put = |data: &mut [u8], slot: Option<u32>, bits: u32| {
        if let Some(o) = slot {
            let o = o as usize;
            data[o..o + 4].copy_from_slice(&bits.to_le_bytes());
        }
    };
    match input {
        Input::Packed {
            elem,
            dtype,
            shape,
            slot,
        } => {
            let ty = elem.scalar_type();
            let out = match slot {
                Some(o) => Some(data.get_mut(*o as usize..).ok_or_else(outside)?),
                None => None,
            };
            match numpy_buffer::direct(arg, dtype, *elem, shape, out, |n| input_bits(ty, n))? {
                Direct::Written => {
                    // a buffer acquired for this argument is not needed
                    if held.as_slice().first().is_some_and(|b| b.is_of(arg)) {
                        held.next();
                    }
                    return Ok(true);
                }
                Direct::OtherShape => return Ok(false),
                Direct::Unknown => {}
            }
            if !numpy_buffer::is_ndarray(arg) {
                return Ok(false);
            }
            let b = buffer_of(arg, held)?;
            if b.elem() != *elem || !b.shape_is(shape) {
                return Ok(false);
            }
            // `None`: the program does not read this array, it only has to match
            if let Some(o) = slot.map(|o| o as usize) {
                let out = data.get_mut(o..).ok_or_else(outside)?;
                b.write_bits(out, |n| input_bits(ty, n))?;
            }
            Ok(true)
        }
        Input::Scalar(ty, slot) => {
            // fast path: a Python float for a float input
            let n = if let Ok(f) = arg.cast_exact::<PyFloat>() {
                Number::Float(f.value())
            } else if arg.cast::<PyValue>().is_ok() {
                return Ok(false);
            } else {
                match scalar_number(arg)? {
                    Some(n) => n,
                    None => return Ok(false),
                }
            };
            if n.natural_type() != *ty {
                return Ok(false);
            }
            put(data, *slot, input_bits(*ty, n)?);
            Ok(true)
        }
        Input::Seq { tuple, items } => {
            let ok = if *tuple {
                arg.cast::<PyTuple>().is_ok()
            } else {
                arg.cast::<PyList>().is_ok()
            };
            if !ok || arg.len()? != items.len() {
                return Ok(false);
            }
            let _level = walk::enter(arg, "jit function argument")?;
            for (item, a) in items.iter().zip(arg.try_iter()?) {
                if !bind(item, &a?, data, held)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Input::Array {
            elem,
            dtype,
            shape,
            slots,
        } => {
            // at most PACK_THRESHOLD elements: read into a scratch buffer without the
            // buffer protocol where NumPy's struct allows, then spread to their slots
            let mut scratch = [0u8; 4 * PACK_THRESHOLD];
            let ty = elem.scalar_type();
            let words = 4 * slots.len();
            if let Some(out) = scratch.get_mut(..words) {
                match numpy_buffer::direct(arg, dtype, *elem, shape, Some(out), |n| {
                    input_bits(ty, n)
                })? {
                    Direct::Written => {
                        if held.as_slice().first().is_some_and(|b| b.is_of(arg)) {
                            held.next();
                        }
                        for (slot, word) in slots.iter().zip(scratch.chunks_exact(4)) {
                            if let Some(o) = slot {
                                let o = *o as usize;
                                data.get_mut(o..o + 4)
                                    .ok_or_else(outside)?
                                    .copy_from_slice(word);
                            }
                        }
                        return Ok(true);
                    }
                    Direct::OtherShape => return Ok(false),
                    Direct::Unknown => {}
                }
            }
            if !numpy_buffer::is_ndarray(arg) {
                return Ok(false);
            }
            let b = buffer_of(arg, held)?;
            if b.elem() != *elem || !b.shape_is(shape) {
                return Ok(false);
            }
            let mut slots = slots.iter();
            b.for_each(|n| {
                if let Some(slot) = slots.next().copied().flatten() {
                    put(data, Some(slot), input_bits(ty, n)?);
                }
                Ok(())
            })?;
            Ok(true)
        }
        Input::Object(obj) => Ok(arg.is(obj)),
    }
}

/// Traced stand-ins for the arguments, and the (not yet placed) input template.
struct Traced {
    args: Vec<Py<PyAny>>,
    inputs: Vec<Input>,
    /// input values in template order (a template slot is filled from this list)
    values: Vec<Value>,
}

fn new_input(
    py: Python<'_>,
    ty: ScalarType,
    bits: u32,
    values: &mut Vec<Value>,
) -> PyResult<Py<PyAny>> {
    let v = Value::input(ty, bits);
    values.push(v.clone());
    Ok(Py::new(py, PyValue::from_graph(v))?.into_any())
}

/// Builds the traced stand-in for one argument: numbers become input values,
/// lists and tuples keep their type, NumPy arrays become `cp.vector` / `cp.matrix`, and any
/// other object is passed through as it is.
fn trace_arg(arg: &Bound<'_, PyAny>, values: &mut Vec<Value>) -> PyResult<(Py<PyAny>, Input)> {
    let py = arg.py();
    if let Some(n) = scalar_number(arg)? {
        let ty = n.natural_type();
        let obj = new_input(py, ty, input_bits(ty, n)?, values)?;
        return Ok((obj, Input::Scalar(ty, None)));
    }
    if numpy_buffer::is_numpy(arg) {
        let a = numpy_buffer::read(arg, true)?;
        let ty = a.elem.scalar_type();
        if a.numbers.len() > PACK_THRESHOLD {
            let init = a
                .numbers
                .iter()
                .map(|n| input_bits(ty, *n))
                .collect::<PyResult<Vec<_>>>()?;
            let v = copapy_compiler::array::data(ty, init)
                .map_err(|e| PyTypeError::new_err(e.message))?;
            values.push(v.clone());
            let obj = array_for(py, v, &a.shape, ty)?;
            let input = Input::Packed {
                elem: a.elem,
                dtype: arg.getattr(pyo3::intern!(py, "dtype"))?.unbind(),
                shape: a.shape,
                slot: None,
            };
            return Ok((obj, input));
        }
        let mut flat = Vec::with_capacity(a.numbers.len());
        for n in &a.numbers {
            flat.push(new_input(py, ty, input_bits(ty, *n)?, values)?);
        }
        let obj = container_for(py, &a.shape, flat)?;
        let slots = vec![None; a.numbers.len()];
        let input = Input::Array {
            elem: a.elem,
            dtype: arg.getattr(pyo3::intern!(py, "dtype"))?.unbind(),
            shape: a.shape,
            slots,
        };
        return Ok((obj, input));
    }
    let tuple = arg.cast::<PyTuple>().is_ok();
    if tuple || arg.cast::<PyList>().is_ok() {
        let _level = walk::enter(arg, "jit function argument")?;
        let mut objs = Vec::new();
        let mut items = Vec::new();
        for item in arg.try_iter()? {
            let (o, i) = trace_arg(&item?, values)?;
            objs.push(o);
            items.push(i);
        }
        let obj = if tuple {
            PyTuple::new(py, objs)?.into_any().unbind()
        } else {
            PyList::new(py, objs)?.into_any().unbind()
        };
        return Ok((obj, Input::Seq { tuple, items }));
    }
    if arg.is_instance_of::<PyString>()
        || arg.is_instance_of::<PyBytes>()
        || arg.is_instance_of::<PyDict>()
        || arg.is_instance_of::<PySet>()
        || arg.is_instance_of::<PyFrozenSet>()
    {
        return Err(PyTypeError::new_err(format!(
            "a jit function takes numbers, lists, tuples or NumPy arrays as arguments \
             (other objects, such as self, are passed through unchanged), got a {}",
            type_name(arg)
        )));
    }
    Ok((arg.clone().unbind(), Input::Object(arg.clone().unbind())))
}

/// The `cp.array` (the package's registered class) around array node `v`.
fn array_for(py: Python<'_>, v: Value, shape: &[usize], ty: ScalarType) -> PyResult<Py<PyAny>> {
    let node = Py::new(py, PyArrayNode::new(v))?;
    let registry = container::registry()?;
    let obj = registry
        .array
        .bind(py)
        .call1((node, PyTuple::new(py, shape)?, ty.name()))?;
    Ok(obj.unbind())
}

/// `cp.vector` for 1-D and `cp.matrix` for 2-D arrays (the package's registered classes).
fn container_for(py: Python<'_>, shape: &[usize], flat: Vec<Py<PyAny>>) -> PyResult<Py<PyAny>> {
    match shape.len() {
        1 => {
            let list = PyList::new(py, flat)?;
            Ok(container::registry()?
                .vector
                .bind(py)
                .call1((list,))?
                .unbind())
        }
        2 => {
            let cols = shape[1];
            let mut rows = Vec::with_capacity(shape[0]);
            let mut it = flat.into_iter();
            for _ in 0..shape[0] {
                rows.push(PyList::new(py, it.by_ref().take(cols).collect::<Vec<_>>())?);
            }
            let nested = PyList::new(py, rows)?;
            Ok(container::registry()?
                .matrix
                .bind(py)
                .call1((nested,))?
                .unbind())
        }
        n => Err(PyTypeError::new_err(format!(
            "a jit function takes 1-D or 2-D NumPy arrays, got a {n}-D array"
        ))),
    }
}

/// Describes a container result (see `container.rs`): an array comes back as a NumPy
/// array; a sequence as nested lists of its shape, or with `numpy` (the function was
/// called with NumPy arrays) as one NumPy array.
fn describe_container(
    c: &PyContainer,
    outputs: &mut Vec<Value>,
    py: Python<'_>,
    numpy: bool,
) -> PyResult<Output> {
    match c.contents() {
        Contents::Array { node, dtype } => {
            let v = node.get().value().clone();
            let ty = dtype.read_type(v.ty());
            outputs.push(v);
            Ok(Output::Packed {
                ty,
                shape: c.shape().to_vec(),
                offset: u32::MAX,
            })
        }
        Contents::Element(leaf) => describe_output(leaf.bind(py), outputs, numpy),
        Contents::Sequence(leaves) => {
            let flat = leaves
                .bind(py)
                .iter()
                .map(|leaf| describe_output(&leaf, outputs, numpy))
                .collect::<PyResult<Vec<_>>>()?;
            if numpy {
                if let Some(out) = ndarray_output(py, &flat, c.shape())? {
                    return Ok(out);
                }
            }
            Ok(nest(flat, c.shape()))
        }
    }
}

/// Describes the function's result; collects the values that need code. With `numpy`
/// (the function was called with NumPy arrays) vectors and matrices become NumPy arrays.
fn describe_output(
    obj: &Bound<'_, PyAny>,
    outputs: &mut Vec<Value>,
    numpy: bool,
) -> PyResult<Output> {
    if let Ok(v) = obj.cast::<PyValue>() {
        let v = v.get().value().clone();
        let ty = v.ty();
        outputs.push(v);
        // offset filled in after compilation, in the same order
        return Ok(Output::Scalar(ty, u32::MAX));
    }
    // before the number check: a container may also convert to a number
    if let Some(c) = container::describe(obj)? {
        let _level = walk::enter(obj, "jit function result")?;
        return describe_container(c.get(), outputs, obj.py(), numpy);
    }
    if obj.is_none() || number_bits(obj)?.is_some() || obj.is_instance_of::<PyString>() {
        return Ok(Output::Constant(obj.clone().unbind()));
    }
    let _level = walk::enter(obj, "jit function result")?;
    let tuple = obj.cast::<PyTuple>().is_ok();
    if tuple || obj.cast::<PyList>().is_ok() {
        let items = obj
            .try_iter()?
            .map(|i| describe_output(&i?, outputs, numpy))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Output::Seq { tuple, items });
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut keys = Vec::with_capacity(dict.len());
        let mut items = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            keys.push(k.unbind());
            items.push(describe_output(&v, outputs, numpy)?);
        }
        return Ok(Output::Dict { keys, items });
    }
    Err(PyTypeError::new_err(format!(
        "a jit function must return values, numbers, None, strings, or lists, tuples, dicts, \
         vectors, matrices and other copapy containers (`__copapy__`) of them; got a {}",
        type_name(obj)
    )))
}

/// A vector's or matrix's elements as one NumPy array, if all are numbers (computed or
/// not); its dtype as NumPy promotes the element types (bool < int32 < float32, and
/// int32 with float32 gives float64, which holds both exactly).
fn ndarray_output(py: Python<'_>, flat: &[Output], shape: &[usize]) -> PyResult<Option<Output>> {
    let mut elements = Vec::with_capacity(flat.len());
    let (mut ints, mut floats, mut bools) = (false, false, false);
    for item in flat {
        let e = match item {
            Output::Scalar(ty, offset) => Element::Data(*ty, *offset),
            Output::Constant(obj) => match number(obj.bind(py))? {
                Some(n) => {
                    let (ty, bits) = n.natural_bits()?;
                    Element::Fixed(ty, bits)
                }
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        let (Element::Data(ty, _) | Element::Fixed(ty, _)) = e;
        match ty {
            ScalarType::Bool => bools = true,
            ScalarType::Int => ints = true,
            ScalarType::Float => floats = true,
        }
        elements.push(e);
    }
    let dtype = match (bools, ints, floats) {
        (_, true, true) => OutDtype::Float64,
        (_, _, true) => OutDtype::Float32,
        (_, true, false) => OutDtype::Int32,
        (true, false, false) => OutDtype::Bool,
        (false, false, false) => OutDtype::Float32,
    };
    Ok(Some(Output::NdArray {
        dtype,
        shape: shape.to_vec(),
        elements,
    }))
}

fn nest(flat: Vec<Output>, shape: &[usize]) -> Output {
    let mut seq = |items| {
        Ok::<_, std::convert::Infallible>(Output::Seq {
            tuple: false,
            items,
        })
    };
    let mut rows = |items| {
        Ok(Output::Seq {
            tuple: false,
            items,
        })
    };
    match crate::container::nest_rows(flat, shape, &mut seq, &mut rows) {
        Ok(out) => out,
        Err(never) => match never {},
    }
}

/// Whether an argument is or contains a NumPy array (of at least one dimension).
fn has_array(input: &Input) -> bool {
    match input {
        Input::Packed { .. } | Input::Array { .. } => true,
        Input::Seq { items, .. } => items.iter().any(has_array),
        Input::Scalar(..) | Input::Object(_) => false,
    }
}

fn place_inputs(input: &mut Input, next: &mut impl Iterator<Item = Option<u32>>) {
    match input {
        Input::Scalar(_, slot) => *slot = next.next().flatten(),
        Input::Seq { items, .. } => items.iter_mut().for_each(|i| place_inputs(i, next)),
        Input::Array { slots, .. } => slots.iter_mut().for_each(|s| *s = next.next().flatten()),
        Input::Packed { slot, .. } => *slot = next.next().flatten(),
        Input::Object(_) => {}
    }
}

/// The step of the argument plan that binds what `input` describes.
fn plan_step(py: Python<'_>, input: &Input) -> ArgStep {
    match input {
        Input::Scalar(ty, slot) => ArgStep::Scalar(*ty, *slot),
        Input::Seq { tuple, items } => ArgStep::Seq {
            tuple: *tuple,
            items: items.iter().map(|i| plan_step(py, i)).collect(),
        },
        Input::Packed {
            elem,
            dtype,
            shape,
            slot,
        } => array_step(
            py,
            dtype,
            *elem,
            shape,
            slot.map_or(Dest::Unread, Dest::Run),
        ),
        Input::Array {
            elem,
            dtype,
            shape,
            slots,
        } => array_step(py, dtype, *elem, shape, Dest::of_slots(slots)),
        Input::Object(obj) => ArgStep::Object(obj.clone_ref(py)),
    }
}

fn array_step(
    py: Python<'_>,
    dtype: &Py<PyAny>,
    elem: Elem,
    shape: &[usize],
    dest: Dest,
) -> ArgStep {
    ArgStep::Array {
        exact: ExactArray::new(py, dtype, elem, shape),
        elem,
        words: elem.is_data_word(),
        dest,
    }
}

fn visit_input(input: &Input, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
    match input {
        Input::Object(obj) | Input::Packed { dtype: obj, .. } => visit.call(obj),
        Input::Seq { items, .. } => items.iter().try_for_each(|i| visit_input(i, visit)),
        Input::Array { dtype, .. } => visit.call(dtype),
        Input::Scalar(..) => Ok(()),
    }
}

/// Traces `func` on stand-ins for `args` and compiles the result. Runs without any borrow
/// of the jit function, so the traced code may call it (or other jit functions) again.
fn specialise(
    py: Python<'_>,
    func: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    placement: &Placement,
) -> PyResult<Specialisation> {
    let mut traced = Traced {
        args: Vec::new(),
        inputs: Vec::new(),
        values: Vec::new(),
    };
    for arg in args.iter() {
        let (obj, input) = trace_arg(&arg, &mut traced.values)?;
        traced.args.push(obj);
        traced.inputs.push(input);
    }
    let result = func.call1(PyTuple::new(py, &traced.args)?)?;
    let mut outputs = Vec::new();
    let numpy = traced.inputs.iter().any(has_array);
    let mut output = describe_output(&result, &mut outputs, numpy)?;
    let program = if outputs.is_empty() {
        None
    } else {
        let (compiled, program) = compile_gathered(py, placement, &outputs, &traced)?;
        let by_id: FxHashMap<usize, u32> =
            compiled.inputs.iter().map(|(v, o)| (v.id(), *o)).collect();
        let mut slots = traced.values.iter().map(|v| by_id.get(&v.id()).copied());
        for input in &mut traced.inputs {
            place_inputs(input, &mut slots);
        }
        place_outputs(&mut output, &mut compiled.outputs.iter().copied());
        compact_output(&mut output);
        Some(program)
    };
    let plan = ArgPlan {
        steps: traced.inputs.iter().map(|i| plan_step(py, i)).collect(),
    };
    Ok(Specialisation {
        inputs: traced.inputs,
        plan,
        kept: Kept::new(&output),
        output,
        program,
    })
}

/// Compiles `outputs` for `placement` together with one gathered array per NumPy array
/// argument of two or more elements (programs in this process only). The compiler places
/// the inputs an array gathers one after another in its range, at no cost in code
/// (`place_packed_inputs` in the compiler's schedule), so a call copies each array argument
/// into data memory in one piece instead of element by element to scattered slots. If an
/// array the function built itself placed some of those inputs first (gathering them again
/// would then cost code), the results are compiled alone.
fn compile_gathered(
    py: Python<'_>,
    placement: &Placement,
    outputs: &[Value],
    traced: &Traced,
) -> PyResult<(copapy_compiler::Compiled, SpecProgram)> {
    let gathered = match placement {
        Placement::Host => gather_arrays(&traced.inputs, &traced.values)?,
        // a device's data memory is written whole on every call anyway
        Placement::Device { .. } => Vec::new(),
    };
    if gathered.is_empty() {
        return compile_placed(py, placement, outputs);
    }
    let mut values = outputs.to_vec();
    values.extend(gathered.iter().map(|(array, _)| array.clone()));
    let (compiled, program) = compile_placed(py, placement, &values)?;
    let slots: FxHashMap<usize, u32> = compiled.inputs.iter().map(|(v, o)| (v.id(), *o)).collect();
    let in_place = gathered.iter().enumerate().all(|(j, (_, elements))| {
        let start = compiled.outputs.get(outputs.len() + j).copied();
        elements.iter().enumerate().all(|(k, e)| {
            let at = start.and_then(|s| s.checked_add(4 * k as u32));
            at.is_some() && slots.get(&e.id()).copied() == at
        })
    });
    if in_place {
        return Ok((compiled, program));
    }
    compile_placed(py, placement, outputs)
}

/// One gathered array (and its elements) per NumPy array argument of two or more elements
/// (`inputs`, whose input values are `values` in template order).
fn gather_arrays(inputs: &[Input], values: &[Value]) -> PyResult<Vec<(Value, Vec<Value>)>> {
    fn walk(
        input: &Input,
        next: &mut std::slice::Iter<'_, Value>,
        out: &mut Vec<(Value, Vec<Value>)>,
    ) -> PyResult<()> {
        match input {
            Input::Scalar(..) | Input::Packed { .. } => {
                next.next();
            }
            Input::Seq { items, .. } => {
                for item in items {
                    walk(item, next, out)?;
                }
            }
            Input::Array { elem, slots, .. } => {
                let elements: Vec<Value> = next.by_ref().take(slots.len()).cloned().collect();
                if elements.len() >= 2 {
                    let array = copapy_compiler::array::pack(elem.scalar_type(), &elements)
                        .map_err(|e| PyTypeError::new_err(e.message))?;
                    out.push((array, elements));
                }
            }
            Input::Object(_) => {}
        }
        Ok(())
    }
    let mut next = values.iter();
    let mut out = Vec::new();
    for input in inputs {
        walk(input, &mut next, &mut out)?;
    }
    Ok(out)
}

/// Compiles `outputs` for `placement` and installs the program there.
fn compile_placed(
    py: Python<'_>,
    placement: &Placement,
    outputs: &[Value],
) -> PyResult<(copapy_compiler::Compiled, SpecProgram)> {
    match placement {
        Placement::Host => {
            let (compiled, program) = compile_values(outputs)?;
            Ok((compiled, SpecProgram::Host(program)))
        }
        Placement::Device {
            arch,
            runner,
            imports,
        } => {
            let runner = runner.as_ref().map(|r| PyString::new(py, r).into_any());
            let (spec, connected) = resolve_placement(py, arch, runner.as_ref())?;
            let compiled = compile_for(spec, outputs)?;
            let device = make_device(
                py,
                spec,
                &compiled.program,
                connected.map(Bound::unbind),
                imports.as_ref().map(|d| d.bind(py)),
            )?;
            // the data as installed: the loader filled the import table (cp.extern), and a
            // call writes this copy back whole
            let mut data = compiled.program.data.clone();
            device.read(py, 0, &mut data)?;
            Ok((compiled, SpecProgram::Device { device, data }))
        }
    }
}

/// Binds `args` to `spec`, runs it and reads the result; `None` if they do not match.
/// `held`: array buffers acquired already (see [`signature`]), possibly none.
fn call_spec(
    py: Python<'_>,
    spec: &mut Specialisation,
    args: &Bound<'_, PyTuple>,
    held: Vec<Buffer>,
) -> PyResult<Option<Py<PyAny>>> {
    if spec.inputs.len() != args.len() {
        return Ok(None);
    }
    let mut scratch = Vec::new();
    let data = match spec.program.as_mut() {
        Some(SpecProgram::Host(p)) => p.data_mut(),
        Some(SpecProgram::Device { data, .. }) => &mut data[..],
        None => &mut scratch[..],
    };
    // arguments of the exact types traced go the planned way; any other call (or one the
    // plan cannot convert) the general way, which decides whether it matches
    let planned = spec.plan.bind(args, data);
    let mut held = held.into_iter();
    if !planned {
        for (input, arg) in spec.inputs.iter().zip(args.iter()) {
            if !bind(input, &arg, data, &mut held)? {
                return Ok(None);
            }
        }
    }
    // the buffers are released before the program runs: it reads only its own copies
    drop(held);
    let data: &[u8] = match spec.program.as_mut() {
        Some(SpecProgram::Host(p)) => {
            p.run();
            p.data()
        }
        Some(SpecProgram::Device { device, data }) => {
            device.write(py, 0, data)?;
            device.run(py)?;
            device.read(py, 0, data)?;
            data
        }
        None => &[],
    };
    Ok(Some(read_result(py, &spec.output, data, &mut spec.kept)?))
}

fn busy() -> PyErr {
    PyRuntimeError::new_err(
        "this jit function was called again while converting its own arguments (from an \
         argument's __index__ or __float__, or another thread at that moment); such \
         re-entrant calls are not supported: convert the arguments before the call",
    )
}

/// Calls the specialisation for signature `sig`, if there is one, and remembers it as the
/// last one called.
fn call_cached(
    slf: &Bound<'_, JitFunction>,
    sig: &[u64],
    args: &Bound<'_, PyTuple>,
    held: Vec<Buffer>,
) -> PyResult<Option<Py<PyAny>>> {
    let mut this = slf.try_borrow_mut().map_err(|_| busy())?;
    let Some(spec) = this.specs.get_mut(sig) else {
        return Ok(None);
    };
    call_spec(slf.py(), spec, args, held)
}

/// The fast path of a call: the arguments bound straight to the specialisation called
/// last, which checks each of them as it goes (type, dtype, shape, length, identity), so
/// no signature is built and each array's buffer is acquired once. `None` when they do
/// not match, or on any error: the full path then decides (and raises the error, if it
/// holds for the matching specialisation).
fn call_last(slf: &Bound<'_, JitFunction>, args: &Bound<'_, PyTuple>) -> Option<Py<PyAny>> {
    let mut this = slf.try_borrow_mut().ok()?;
    let spec = this.specs.last_mut()?;
    // the most common call of all: a program in this process and arguments of the exact
    // types traced, bound by the plan alone (what `call_spec` tries first), no more
    if let Some(SpecProgram::Host(p)) = spec.program.as_mut() {
        if spec.plan.bind(args, p.data_mut()) {
            p.run();
            return read_result(slf.py(), &spec.output, p.data(), &mut spec.kept).ok();
        }
    }
    call_spec(slf.py(), spec, args, Vec::new()).ok().flatten()
}

#[pymethods]
impl JitFunction {
    #[new]
    #[pyo3(signature = (func, cache_size = DEFAULT_CACHE_SIZE, arch = "native", runner = None, imports = None))]
    fn new(
        func: Py<PyAny>,
        cache_size: usize,
        arch: &str,
        runner: Option<&Bound<'_, PyAny>>,
        imports: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        if runner.is_some() && imports.is_some() {
            return Err(PyValueError::new_err(
                "imports= serves programs run here or in the emulator; a runner resolves a \
                 program's imports itself (copapy-run --plugin)",
            ));
        }
        // imported functions are served through the device path (a host device with
        // trampolines into Python), which the fast host path does not have
        let imports = imports.map(|d| d.copy()).transpose()?.map(Bound::unbind);
        if cache_size == 0 {
            return Err(PyValueError::new_err(
                "cache_size must be at least 1 (the number of specialisations kept)",
            ));
        }
        let runner = match runner {
            None => None,
            Some(r) => Some(r.extract::<String>().map_err(|_| {
                PyTypeError::new_err(
                    "a jit function's runner is an address ('tcp://HOST:PORT' or 'process'): \
                     each specialisation gets its own connection, so one device object cannot \
                     serve them; use cp.Target(runner=device) for a device object",
                )
            })?),
        };
        let placement = if arch == "native" && runner.is_none() && imports.is_none() {
            Placement::Host
        } else {
            // check the names now, so a typo fails at decoration and not at the first call
            let spec = if runner.is_none() && arch != "native" {
                Some(copapy_compiler::targets::Target::find(arch).map_err(PyValueError::new_err)?)
            } else {
                None
            };
            if imports.is_none()
                && spec.is_some_and(|s| Some(s.arch) == copapy_program::Arch::host())
            {
                Placement::Host
            } else {
                Placement::Device {
                    arch: arch.to_string(),
                    runner,
                    imports,
                }
            }
        };
        Ok(JitFunction {
            func: Some(func),
            specs: SpecCache::new(cache_size),
            placement,
        })
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if kwargs.is_some_and(|k| !k.is_empty()) {
            return Err(PyTypeError::new_err(
                "a jit function takes positional arguments only",
            ));
        }
        if let Some(r) = call_last(slf, args) {
            return Ok(r);
        }
        let func = slf
            .try_borrow()
            .map_err(|_| busy())?
            .func
            .as_ref()
            .map(|f| f.clone_ref(py))
            .ok_or_else(|| {
                PyTypeError::new_err("this jit function was cleared by the garbage collector")
            })?;
        let mut sig = Vec::with_capacity(args.len() + 2);
        let mut held = Vec::new();
        let mut plain = true;
        for arg in args.iter() {
            if !signature(&arg, &mut sig, &mut held)? {
                plain = false;
                break;
            }
        }
        if !plain {
            // called with traced values, i.e. from inside another trace: the function
            // becomes part of that trace
            let depth = INLINE_DEPTH.with(|d| d.get());
            if depth >= walk::MAX_DEPTH {
                return Err(PyRecursionError::new_err(format!(
                    "jit functions called each other with traced values more than {} levels \
                     deep; recursion on traced values never ends (use cp.iif and a loop)",
                    walk::MAX_DEPTH
                )));
            }
            INLINE_DEPTH.with(|d| d.set(depth + 1));
            let r = func.bind(py).call1(args);
            INLINE_DEPTH.with(|d| d.set(depth));
            return Ok(r?.unbind());
        }
        if let Some(r) = call_cached(slf, &sig, args, held)? {
            return Ok(r);
        }
        let placement = {
            let this = slf.try_borrow().map_err(|_| busy())?;
            match &this.placement {
                Placement::Host => Placement::Host,
                Placement::Device {
                    arch,
                    runner,
                    imports,
                } => Placement::Device {
                    arch: arch.clone(),
                    runner: runner.clone(),
                    imports: imports.as_ref().map(|d| d.clone_ref(py)),
                },
            }
        };
        let spec = specialise(py, func.bind(py), args, &placement)?;
        {
            let mut this = slf.try_borrow_mut().map_err(|_| busy())?;
            // another thread (or a nested call) may have compiled the same signature meanwhile
            if !this.specs.contains(&sig) {
                this.specs.insert(sig.clone(), spec);
            }
        }
        call_cached(slf, &sig, args, Vec::new())?.ok_or_else(|| {
            PyRuntimeError::new_err(
                "internal error: a new specialisation did not match its own arguments",
            )
        })
    }

    /// `@cp.jit` on a method: `instance.method` binds the instance as the first argument.
    fn __get__(
        slf: &Bound<'_, Self>,
        instance: Option<&Bound<'_, PyAny>>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        match instance {
            Some(obj) if !obj.is_none() => Ok(py
                .import("types")?
                .getattr("MethodType")?
                .call1((slf, obj))?
                .unbind()),
            _ => Ok(slf.clone().into_any().unbind()),
        }
    }

    /// The function (and constants in results) may refer back to this object, e.g. a
    /// module-level function calling itself through its decorated name: let the garbage
    /// collector see those references so such cycles are freed.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.func)?;
        for spec in self.specs.values() {
            visit_output(&spec.output, &visit)?;
            spec.kept.visit(&visit)?;
            spec.inputs
                .iter()
                .try_for_each(|i| visit_input(i, &visit))?;
            spec.plan.visit(&visit)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.func = None;
        self.specs.clear();
    }

    /// Number of compiled specialisations kept (one per argument signature seen, at most
    /// `cache_size`).
    #[getter]
    fn specialisations(&self) -> usize {
        self.specs.len()
    }

    /// Most specialisations kept; when a new one would exceed it, the least recently
    /// used one is dropped (and its memory unmapped).
    #[getter]
    fn cache_size(&self) -> usize {
        self.specs.capacity()
    }
}
