//! `copapy.jit`: compile a Python function on first call, then call native code.
//!
//! A [`JitFunction`] keeps one compiled specialisation per call signature: the number
//! of arguments, the scalar type of each number, and the length (lists, tuples) or
//! shape and element type (NumPy arrays) of each container. A call walks its arguments
//! against a specialisation's input template, writing each number straight into the
//! program's data memory; if something does not match (another type or shape), the
//! next specialisation is tried, and if none matches the function is traced and
//! compiled again. Results are read back into the structure the function returned.
//! Everything on the call path after the first call is Rust.
//!
//! A NumPy array of more than [`PACK_THRESHOLD`] elements arrives as one `cp.array`
//! (Copapy's packing threshold): its numbers are copied into the array's data range in
//! one pass per call, and a `cp.array` result comes back as a NumPy array.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString, PyTuple};
use pyo3::PyTraverseError;
use rustc_hash::FxHashMap;

use copapy_compiler::compile::read_bits;
use copapy_compiler::{ScalarType, Value};
use copapy_runner::LoadedProgram;

use crate::array::PyArrayNode;
use crate::convert::{number_bits, to_python, type_name};
use crate::target::compile_values;
use crate::value::PyValue;

/// Element formats of NumPy arrays accepted as arguments.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Elem {
    F64,
    F32,
    I64,
    I32,
}

impl Elem {
    fn scalar_type(self) -> ScalarType {
        match self {
            Elem::F64 | Elem::F32 => ScalarType::Float,
            Elem::I64 | Elem::I32 => ScalarType::Int,
        }
    }
}

/// NumPy arguments with more elements than this arrive as one `cp.array`.
pub const PACK_THRESHOLD: usize = 64;

/// How one argument looks, and where its numbers go in data memory.
enum Input {
    /// A NumPy array (C order) passed as one `cp.array` stored at `slot`.
    Packed {
        elem: Elem,
        shape: Vec<usize>,
        slot: Option<u32>,
    },
    /// A number of this type; `None` when the program does not read it.
    Scalar(ScalarType, Option<u32>),
    /// A list or tuple with exactly these items.
    Seq { tuple: bool, items: Vec<Input> },
    /// A NumPy array (C order) of this element format and shape.
    Array {
        elem: Elem,
        shape: Vec<usize>,
        slots: Vec<Option<u32>>,
    },
}

/// How the result is rebuilt from data memory.
enum Output {
    Scalar(ScalarType, u32),
    /// A `cp.array` result, returned as a NumPy array of this shape.
    Packed {
        ty: ScalarType,
        shape: Vec<usize>,
        offset: u32,
    },
    /// A value the function returned that needs no code (a number, None, …).
    Constant(Py<PyAny>),
    Seq {
        tuple: bool,
        items: Vec<Output>,
    },
    /// A dict: its keys (kept as given) and the result for each.
    Dict {
        keys: Vec<Py<PyAny>>,
        items: Vec<Output>,
    },
}

struct Specialisation {
    inputs: Vec<Input>,
    output: Output,
    /// `None` when the function's result needs no code at all.
    program: Option<LoadedProgram>,
}

/// A function compiled on first call for each argument signature (`@cp.jit`).
#[pyclass(module = "copapy", name = "jit_function", dict)]
pub struct JitFunction {
    /// The Python function; `None` only after the garbage collector cleared a cycle.
    func: Option<Py<PyAny>>,
    specs: Vec<Specialisation>,
    /// The specialisation that matched last (tried first).
    last: usize,
}

fn array_elem(obj: &Bound<'_, PyAny>) -> Option<(Elem, Vec<usize>)> {
    if !obj.hasattr("__array_interface__").unwrap_or(false) {
        return None;
    }
    if let Ok(b) = PyBuffer::<f64>::get(obj) {
        return Some((Elem::F64, b.shape().to_vec()));
    }
    if let Ok(b) = PyBuffer::<f32>::get(obj) {
        return Some((Elem::F32, b.shape().to_vec()));
    }
    if let Ok(b) = PyBuffer::<i64>::get(obj) {
        return Some((Elem::I64, b.shape().to_vec()));
    }
    if let Ok(b) = PyBuffer::<i32>::get(obj) {
        return Some((Elem::I32, b.shape().to_vec()));
    }
    None
}

/// Copies a NumPy array's numbers (as f64 or i64) in C order.
fn array_numbers(obj: &Bound<'_, PyAny>, elem: Elem) -> PyResult<ArrayNumbers> {
    let py = obj.py();
    Ok(match elem {
        Elem::F64 => ArrayNumbers::Float(PyBuffer::<f64>::get(obj)?.to_vec(py)?),
        Elem::F32 => ArrayNumbers::Float(
            PyBuffer::<f32>::get(obj)?
                .to_vec(py)?
                .into_iter()
                .map(f64::from)
                .collect(),
        ),
        Elem::I64 => ArrayNumbers::Int(PyBuffer::<i64>::get(obj)?.to_vec(py)?),
        Elem::I32 => ArrayNumbers::Int(
            PyBuffer::<i32>::get(obj)?
                .to_vec(py)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
    })
}

/// The array's numbers if it has exactly this element format and shape.
fn array_numbers_if(obj: &Bound<'_, PyAny>, elem: Elem, shape: &[usize]) -> Option<ArrayNumbers> {
    let py = obj.py();
    fn take<T: pyo3::buffer::Element + Copy>(
        obj: &Bound<'_, PyAny>,
        shape: &[usize],
        py: Python<'_>,
    ) -> Option<Vec<T>> {
        let b = PyBuffer::<T>::get(obj).ok()?;
        if b.shape() != shape {
            return None;
        }
        b.to_vec(py).ok()
    }
    Some(match elem {
        Elem::F64 => ArrayNumbers::Float(take::<f64>(obj, shape, py)?),
        Elem::F32 => ArrayNumbers::Float(
            take::<f32>(obj, shape, py)?
                .into_iter()
                .map(f64::from)
                .collect(),
        ),
        Elem::I64 => ArrayNumbers::Int(take::<i64>(obj, shape, py)?),
        Elem::I32 => ArrayNumbers::Int(
            take::<i32>(obj, shape, py)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
    })
}

enum ArrayNumbers {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

impl ArrayNumbers {
    fn bits(&self, k: usize) -> PyResult<u32> {
        match self {
            ArrayNumbers::Float(v) => Ok((v[k] as f32).to_bits()),
            ArrayNumbers::Int(v) => i32::try_from(v[k]).map(|i| i as u32).map_err(|_| {
                pyo3::exceptions::PyOverflowError::new_err(format!(
                    "array element {} does not fit in int32",
                    v[k]
                ))
            }),
        }
    }
}

/// Copies the elements of a C-contiguous buffer of `T` into `out` as 4-byte patterns.
fn copy_elements<T: pyo3::buffer::Element + Copy>(
    arg: &Bound<'_, PyAny>,
    shape: &[usize],
    out: &mut [u8],
    bits: impl Fn(T) -> PyResult<u32>,
) -> PyResult<bool> {
    let Ok(buf) = PyBuffer::<T>::get(arg) else {
        return Ok(false);
    };
    if buf.shape() != shape {
        return Ok(false);
    }
    let py = arg.py();
    if buf.is_c_contiguous() {
        // SAFETY: `buf` holds the exporter's buffer (kept alive and unchanged while we hold
        // the GIL, which we do), C-contiguous with `item_count` elements of `T` (PyBuffer
        // checked the format and item size when it was acquired).
        let items =
            unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const T, buf.item_count()) };
        for (dst, &x) in out.chunks_exact_mut(4).zip(items) {
            dst.copy_from_slice(&bits(x)?.to_le_bytes());
        }
    } else {
        for (dst, x) in out.chunks_exact_mut(4).zip(buf.to_vec(py)?) {
            dst.copy_from_slice(&bits(x)?.to_le_bytes());
        }
    }
    Ok(true)
}

fn int32_bits(x: i64) -> PyResult<u32> {
    i32::try_from(x).map(|i| i as u32).map_err(|_| {
        pyo3::exceptions::PyOverflowError::new_err(format!(
            "array element {x} does not fit in int32"
        ))
    })
}

/// Writes `arg` into `data` if it matches `input`; `Ok(false)` on a mismatch.
fn bind(input: &Input, arg: &Bound<'_, PyAny>, data: &mut [u8]) -> PyResult<bool> {
    match input {
        Input::Packed { elem, shape, slot } => {
            let count: usize = shape.iter().product();
            let mut scratch = Vec::new();
            let out = match slot {
                Some(o) => &mut data[*o as usize..*o as usize + 4 * count],
                None => {
                    scratch.resize(4 * count, 0);
                    &mut scratch[..]
                }
            };
            match elem {
                Elem::F32 => copy_elements::<f32>(arg, shape, out, |x| Ok(x.to_bits())),
                Elem::F64 => copy_elements::<f64>(arg, shape, out, |x| Ok((x as f32).to_bits())),
                Elem::I32 => copy_elements::<i32>(arg, shape, out, |x| Ok(x as u32)),
                Elem::I64 => copy_elements::<i64>(arg, shape, out, int32_bits),
            }
        }
        Input::Scalar(ty, slot) => {
            // fast path: a Python float for a float input
            let given = if *ty == ScalarType::Float && arg.is_exact_instance_of::<PyFloat>() {
                let x = arg.cast::<PyFloat>().expect("checked").value();
                Some((ScalarType::Float, (x as f32).to_bits()))
            } else if arg.cast::<PyValue>().is_ok() {
                return Ok(false);
            } else {
                number_bits(arg)?
            };
            match given {
                Some((given, bits)) if given == *ty => {
                    if let Some(o) = slot {
                        let o = *o as usize;
                        data[o..o + 4].copy_from_slice(&bits.to_le_bytes());
                    }
                    Ok(true)
                }
                _ => Ok(false),
            }
        }
        Input::Seq { tuple, items } => {
            if *tuple {
                match arg.cast::<PyTuple>() {
                    Ok(t) if t.len() == items.len() => {
                        for (item, a) in items.iter().zip(t.iter_borrowed()) {
                            if !bind(item, &a, data)? {
                                return Ok(false);
                            }
                        }
                        Ok(true)
                    }
                    _ => Ok(false),
                }
            } else {
                match arg.cast::<PyList>() {
                    Ok(l) if l.len() == items.len() => {
                        for (item, a) in items.iter().zip(l.iter()) {
                            if !bind(item, &a, data)? {
                                return Ok(false);
                            }
                        }
                        Ok(true)
                    }
                    _ => Ok(false),
                }
            }
        }
        Input::Array { elem, shape, slots } => {
            let Some(numbers) = array_numbers_if(arg, *elem, shape) else {
                return Ok(false);
            };
            for (k, slot) in slots.iter().enumerate() {
                if let Some(o) = slot {
                    let o = *o as usize;
                    data[o..o + 4].copy_from_slice(&numbers.bits(k)?.to_le_bytes());
                }
            }
            Ok(true)
        }
    }
}

fn read(py: Python<'_>, output: &Output, data: &[u8]) -> PyResult<Py<PyAny>> {
    Ok(match output {
        Output::Scalar(ty, offset) => to_python(py, *ty, read_bits(data, *offset)),
        Output::Packed { ty, shape, offset } => {
            let count: usize = shape.iter().product();
            let bytes = pyo3::types::PyBytes::new(
                py,
                &data[*offset as usize..*offset as usize + 4 * count],
            );
            let dtype = if *ty == ScalarType::Float {
                "<f4"
            } else {
                "<i4"
            };
            let np = py.import(pyo3::intern!(py, "numpy"))?;
            let flat = np.call_method1(pyo3::intern!(py, "frombuffer"), (bytes, dtype))?;
            let arr = flat.call_method1(pyo3::intern!(py, "reshape"), (shape.clone(),))?;
            if *ty == ScalarType::Bool {
                arr.call_method1(pyo3::intern!(py, "astype"), ("bool",))?
                    .unbind()
            } else {
                // a writable copy the caller owns, in the machine's byte order
                arr.call_method1(
                    pyo3::intern!(py, "astype"),
                    (if *ty == ScalarType::Float {
                        "float32"
                    } else {
                        "int32"
                    },),
                )?
                .unbind()
            }
        }
        Output::Constant(obj) => obj.clone_ref(py),
        Output::Seq { tuple, items } => {
            let objs = items
                .iter()
                .map(|i| read(py, i, data))
                .collect::<PyResult<Vec<_>>>()?;
            if *tuple {
                PyTuple::new(py, objs)?.into_any().unbind()
            } else {
                PyList::new(py, objs)?.into_any().unbind()
            }
        }
        Output::Dict { keys, items } => {
            let dict = PyDict::new(py);
            for (k, i) in keys.iter().zip(items) {
                dict.set_item(k, read(py, i, data)?)?;
            }
            dict.into_any().unbind()
        }
    })
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
/// lists and tuples keep their type, NumPy arrays become `cp.vector` / `cp.matrix`.
fn trace_arg(arg: &Bound<'_, PyAny>, values: &mut Vec<Value>) -> PyResult<(Py<PyAny>, Input)> {
    let py = arg.py();
    if let Some((elem, shape)) = array_elem(arg).filter(|(_, shape)| !shape.is_empty()) {
        let numbers = array_numbers(arg, elem)?;
        let count: usize = shape.iter().product();
        if count > PACK_THRESHOLD {
            let ty = elem.scalar_type();
            let init = (0..count)
                .map(|k| numbers.bits(k))
                .collect::<PyResult<Vec<_>>>()?;
            let v = copapy_compiler::array::data(ty, init)
                .map_err(|e| PyTypeError::new_err(e.message))?;
            values.push(v.clone());
            let node = Py::new(py, PyArrayNode::new(v))?;
            let array = py.import("copapy._ndarray")?.getattr("array")?;
            let obj = array.call_method1("_of", (node, PyTuple::new(py, &shape)?, ty.name()))?;
            let slot = None;
            return Ok((obj.unbind(), Input::Packed { elem, shape, slot }));
        }
        let ty = elem.scalar_type();
        let mut flat = Vec::with_capacity(count);
        for k in 0..count {
            flat.push(new_input(py, ty, numbers.bits(k)?, values)?);
        }
        let obj = container_for(py, &shape, flat)?;
        let slots = vec![None; count];
        return Ok((obj, Input::Array { elem, shape, slots }));
    }
    if let Some((ty, bits)) = number_bits(arg)? {
        let obj = new_input(py, ty, bits, values)?;
        return Ok((obj, Input::Scalar(ty, None)));
    }
    let tuple = arg.cast::<PyTuple>().is_ok();
    if tuple || arg.cast::<PyList>().is_ok() {
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
    Err(PyTypeError::new_err(format!(
        "a jit function takes numbers, lists, tuples or NumPy arrays as arguments, got {}",
        type_name(arg)
    )))
}

/// `cp.vector` for 1-D and `cp.matrix` for 2-D arrays (nested lists where those are absent).
fn container_for(py: Python<'_>, shape: &[usize], flat: Vec<Py<PyAny>>) -> PyResult<Py<PyAny>> {
    let copapy = py.import("copapy")?;
    match shape.len() {
        1 => {
            let list = PyList::new(py, flat)?;
            match copapy.getattr("vector") {
                Ok(vector) => Ok(vector.call1((list,))?.unbind()),
                Err(_) => Ok(list.into_any().unbind()),
            }
        }
        2 => {
            let cols = shape[1];
            let mut rows = Vec::with_capacity(shape[0]);
            let mut it = flat.into_iter();
            for _ in 0..shape[0] {
                rows.push(PyList::new(py, it.by_ref().take(cols).collect::<Vec<_>>())?);
            }
            let nested = PyList::new(py, rows)?;
            match copapy.getattr("matrix") {
                Ok(matrix) => Ok(matrix.call1((nested,))?.unbind()),
                Err(_) => Ok(nested.into_any().unbind()),
            }
        }
        n => Err(PyTypeError::new_err(format!(
            "a jit function takes 1-D or 2-D NumPy arrays, got a {n}-D array"
        ))),
    }
}

/// Describes the function's result; collects the values that need code.
fn describe_output(obj: &Bound<'_, PyAny>, outputs: &mut Vec<Value>) -> PyResult<Output> {
    if let Ok(v) = obj.cast::<PyValue>() {
        let v = v.get().value().clone();
        let ty = v.ty();
        outputs.push(v);
        // offset filled in after compilation, in the same order
        return Ok(Output::Scalar(ty, u32::MAX));
    }
    if let Ok(node) = obj.getattr("_cp_node") {
        if let Ok(node) = node.cast::<PyArrayNode>() {
            let v = node.get().value().clone();
            let shape: Vec<usize> = obj.getattr("shape")?.extract()?;
            let ty = if obj.getattr("dtype")?.extract::<String>()? == "bool" {
                ScalarType::Bool
            } else {
                v.ty()
            };
            outputs.push(v);
            return Ok(Output::Packed {
                ty,
                shape,
                offset: u32::MAX,
            });
        }
    }
    let tuple = obj.cast::<PyTuple>().is_ok();
    if tuple || obj.cast::<PyList>().is_ok() {
        let items = obj
            .try_iter()?
            .map(|i| describe_output(&i?, outputs))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Output::Seq { tuple, items });
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut keys = Vec::with_capacity(dict.len());
        let mut items = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            keys.push(k.unbind());
            items.push(describe_output(&v, outputs)?);
        }
        return Ok(Output::Dict { keys, items });
    }
    // vectors and matrices come back as (nested) lists
    if let (Ok(values), Ok(shape)) = (obj.getattr("values"), obj.getattr("shape")) {
        let shape: Vec<usize> = shape.extract()?;
        let flat = values
            .try_iter()?
            .map(|i| describe_output(&i?, outputs))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(nest(flat, &shape));
    }
    if obj.is_none() || number_bits(obj)?.is_some() || obj.is_instance_of::<PyString>() {
        return Ok(Output::Constant(obj.clone().unbind()));
    }
    Err(PyTypeError::new_err(format!(
        "a jit function must return values, numbers, None, strings, or lists, tuples, dicts, \
         vectors and matrices of them; got a {}",
        type_name(obj)
    )))
}

fn nest(flat: Vec<Output>, shape: &[usize]) -> Output {
    if shape.len() <= 1 {
        return Output::Seq {
            tuple: false,
            items: flat,
        };
    }
    let inner: usize = shape[1..].iter().product();
    let mut it = flat.into_iter();
    let items = (0..shape[0])
        .map(|_| nest(it.by_ref().take(inner).collect(), &shape[1..]))
        .collect();
    Output::Seq {
        tuple: false,
        items,
    }
}

fn place_inputs(input: &mut Input, next: &mut impl Iterator<Item = Option<u32>>) {
    match input {
        Input::Scalar(_, slot) => *slot = next.next().flatten(),
        Input::Seq { items, .. } => items.iter_mut().for_each(|i| place_inputs(i, next)),
        Input::Array { slots, .. } => slots.iter_mut().for_each(|s| *s = next.next().flatten()),
        Input::Packed { slot, .. } => *slot = next.next().flatten(),
    }
}

fn visit_output(output: &Output, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
    match output {
        Output::Scalar(..) | Output::Packed { .. } => Ok(()),
        Output::Constant(obj) => visit.call(obj),
        Output::Seq { items, .. } => items.iter().try_for_each(|i| visit_output(i, visit)),
        Output::Dict { keys, items } => {
            keys.iter().try_for_each(|k| visit.call(k))?;
            items.iter().try_for_each(|i| visit_output(i, visit))
        }
    }
}

fn place_outputs(output: &mut Output, next: &mut impl Iterator<Item = u32>) {
    match output {
        Output::Scalar(_, offset) | Output::Packed { offset, .. } => {
            *offset = next.next().expect("one offset per output")
        }
        Output::Seq { items, .. } | Output::Dict { items, .. } => {
            items.iter_mut().for_each(|i| place_outputs(i, next))
        }
        Output::Constant(_) => {}
    }
}

impl JitFunction {
    fn specialise(&mut self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<usize> {
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
        let func = self.func.as_ref().ok_or_else(|| {
            PyTypeError::new_err("this jit function was cleared by the garbage collector")
        })?;
        let result = func.bind(py).call1(PyTuple::new(py, &traced.args)?)?;
        let mut outputs = Vec::new();
        let mut output = describe_output(&result, &mut outputs)?;
        let program = if outputs.is_empty() {
            None
        } else {
            let (compiled, program) = compile_values(&outputs)?;
            let by_id: FxHashMap<usize, u32> =
                compiled.inputs.iter().map(|(v, o)| (v.id(), *o)).collect();
            let mut slots = traced.values.iter().map(|v| by_id.get(&v.id()).copied());
            for input in &mut traced.inputs {
                place_inputs(input, &mut slots);
            }
            place_outputs(&mut output, &mut compiled.outputs.iter().copied());
            Some(program)
        };
        self.specs.push(Specialisation {
            inputs: traced.inputs,
            output,
            program,
        });
        Ok(self.specs.len() - 1)
    }

    /// Binds `args` to specialisation `k`, runs it and reads the result.
    fn try_call(
        &mut self,
        py: Python<'_>,
        k: usize,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let spec = &mut self.specs[k];
        if spec.inputs.len() != args.len() {
            return Ok(None);
        }
        let mut scratch = Vec::new();
        let data = match spec.program.as_mut() {
            Some(p) => p.data_mut(),
            None => &mut scratch[..],
        };
        for (input, arg) in spec.inputs.iter().zip(args.iter()) {
            if !bind(input, &arg, data)? {
                return Ok(None);
            }
        }
        let data: &[u8] = match spec.program.as_mut() {
            Some(p) => {
                p.run();
                p.data()
            }
            None => &[],
        };
        Ok(Some(read(py, &spec.output, data)?))
    }
}

#[pymethods]
impl JitFunction {
    #[new]
    fn new(func: Py<PyAny>) -> Self {
        JitFunction {
            func: Some(func),
            specs: Vec::new(),
            last: 0,
        }
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &mut self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        if kwargs.is_some_and(|k| !k.is_empty()) {
            return Err(PyTypeError::new_err(
                "a jit function takes positional arguments only",
            ));
        }
        if self.last < self.specs.len() {
            if let Some(r) = self.try_call(py, self.last, args)? {
                return Ok(r);
            }
        }
        for k in 0..self.specs.len() {
            if k != self.last {
                if let Some(r) = self.try_call(py, k, args)? {
                    self.last = k;
                    return Ok(r);
                }
            }
        }
        let k = self.specialise(py, args)?;
        self.last = k;
        self.try_call(py, k, args)?.ok_or_else(|| {
            PyTypeError::new_err(
                "internal error: a new specialisation did not match its own arguments",
            )
        })
    }

    /// The function (and constants in results) may refer back to this object, e.g. a
    /// module-level function calling itself through its decorated name: let the garbage
    /// collector see those references so such cycles are freed.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.func)?;
        for spec in &self.specs {
            visit_output(&spec.output, &visit)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.func = None;
        self.specs.clear();
        self.last = 0;
    }

    /// Number of compiled specialisations (one per argument signature seen).
    #[getter]
    fn specialisations(&self) -> usize {
        self.specs.len()
    }
}
