//! `copapy._core`: the Rust side of the Python package.
//!
//! `value` (module `value.rs`) traces operations into the compiler's graph; `Target`
//! (`target.rs`) compiles, loads and runs programs; `jit_function` (`jit.rs`) is
//! `@cp.jit`; `autograd.rs` is `cp.grad`. The Python package (`python/copapy`)
//! re-exports these and adds the functions that also accept plain numbers.

// `deny`, not `forbid`: numpy_buffer.rs reads the CPython buffer protocol (arrays of any
// dtype, byte order and layout, without copying) and NumPy's array struct, which have no
// safe binding; call_buffers.rs copies the buffers of import calls (`cp.extern` arrays) in
// and out of a running program's data memory, by the address the program passes.
#![deny(unsafe_code)]

use pyo3::prelude::*;

use copapy_compiler::Op;

mod array_ops;
mod autograd;
mod call_buffers;
mod container;
mod convert;
mod device;
mod flatten;
mod imports;
mod jit;
mod loops;
mod names;
mod ndcore;
#[allow(unsafe_code)]
mod numpy_buffer;
mod prelinked;
mod runner_cli;
mod shape;
mod snapshot;
mod spec_cache;
mod structural;
mod symbols;
mod target;
mod trail;
mod value;
mod walk;

use value::PyValue;

/// `op(x)` for a value, where `op` is a float math function of the op table (one float
/// operand, float result: `sqrt`, `sin`, ... `tanh`): the entry point of every
/// `cp.<name>` that `python/copapy/_math.py` makes from the table.
#[pyfunction]
#[pyo3(signature = (op, x))]
fn math_unary(py: Python<'_>, op: &str, x: &Bound<'_, PyValue>) -> PyResult<Py<PyAny>> {
    match Op::from_name(op) {
        Some(o) if is_float_function(o) => value::math_unary(py, x, o),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{op:?} is not a float math function of the op table (stencils/optable.py)"
        ))),
    }
}

/// A unary op on floats only that gradients flow through: the table's math functions.
fn is_float_function(op: Op) -> bool {
    Op::UNARY.contains(&op) && op.takes_float() && !op.takes_int() && op.is_differentiable()
}

macro_rules! binary_functions {
    ($($name:ident => $op:expr, $doc:literal;)*) => {
        $(
            #[doc = $doc]
            #[pyfunction]
            #[pyo3(signature = (x, y))]
            fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                value::math_binary(py, x, y, $op, stringify!($name))
            }
        )*
    };
}

binary_functions! {
    atan2 => Op::Atan2, "`atan2(x, y)`: C's `atan2f(x, y)`, the angle of the point (y, x) (Copapy's names).";
    minimum => Op::Min, "Smaller of two values (NumPy `minimum`: NaN propagates).";
    maximum => Op::Max, "Larger of two values (NumPy `maximum`: NaN propagates).";
}

/// `pow(x, y)`: integer constant exponents become multiplications, others `powf`.
#[pyfunction]
#[pyo3(signature = (x, y))]
fn pow(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if let Ok(v) = x.cast::<PyValue>() {
        return value::power(py, v.get().value(), y);
    }
    value::math_binary(py, x, y, Op::Pow, "pow")
}

/// `x` converted to `dtype` ('float', 'int', 'bool'), as `cp.cast`: float to int
/// truncates toward 0 (NaN 0, saturating), to bool is `x != 0`.
#[pyfunction]
fn cast_value(py: Python<'_>, x: &Bound<'_, PyValue>, dtype: &str) -> PyResult<Py<PyAny>> {
    let ty = convert::parse_dtype(dtype)?;
    let v = copapy_compiler::trace::cast(x.get().value(), ty)
        .map_err(|e| pyo3::exceptions::PyTypeError::new_err(e.message))?;
    Ok(Py::new(py, PyValue::from_graph(v))?.into_any())
}

/// `x` as a byte value 0..255 (an int value), saturating; floats truncate toward 0, NaN 0.
#[pyfunction]
fn to_byte_value(py: Python<'_>, x: &Bound<'_, PyValue>) -> PyResult<Py<PyAny>> {
    value::math_unary(py, x, Op::ToByte)
}

/// `iif(expression, true_result, false_result)`: `true_result` where `expression` is
/// non-zero, else `false_result`, without branching (Copapy's names).
#[pyfunction]
#[pyo3(signature = (expression, true_result, false_result))]
fn iif(
    py: Python<'_>,
    expression: &Bound<'_, PyAny>,
    true_result: &Bound<'_, PyAny>,
    false_result: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    value::iif(py, expression, true_result, false_result)
}

/// `sign(x)`: 1, 0 or -1 as an int value (0 for NaN).
#[pyfunction]
#[pyo3(signature = (x))]
fn sign(py: Python<'_>, x: &Bound<'_, PyValue>) -> PyResult<Py<PyAny>> {
    value::sign(py, x)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyValue>()?;
    m.add_class::<array_ops::PyArrayNode>()?;
    m.add_function(wrap_pyfunction!(array_ops::array_data, m)?)?;
    m.add_function(wrap_pyfunction!(loops::loop_begin, m)?)?;
    m.add_function(wrap_pyfunction!(loops::loop_end, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_pack, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_binary, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_unary, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_select, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_cast, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(cast_value, m)?)?;
    m.add_function(wrap_pyfunction!(to_byte_value, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_sum, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_dot, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_element, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_elements, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_index, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_extreme, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_matmul, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_strided, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_of_elements, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_sort, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_solve, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_det, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_rows_extreme, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_conv2d, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_pool2d, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_gather, m)?)?;
    m.add_function(wrap_pyfunction!(convert::check_dtype, m)?)?;
    m.add("ARRAY_MAX_LEN", copapy_compiler::array::MAX_LEN)?;
    ndcore::register(m)?;
    m.add_class::<container::PyContainer>()?;
    m.add_function(wrap_pyfunction!(container::register_containers, m)?)?;
    m.add_function(wrap_pyfunction!(targets, m)?)?;
    m.add_class::<target::Target>()?;
    m.add_class::<jit::JitFunction>()?;
    m.add_function(wrap_pyfunction!(math_unary, m)?)?;
    m.add_function(wrap_pyfunction!(atan2, m)?)?;
    m.add_function(wrap_pyfunction!(minimum, m)?)?;
    m.add_function(wrap_pyfunction!(maximum, m)?)?;
    m.add_function(wrap_pyfunction!(pow, m)?)?;
    m.add_function(wrap_pyfunction!(iif, m)?)?;
    m.add_function(wrap_pyfunction!(sign, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::grad, m)?)?;
    m.add_function(wrap_pyfunction!(device::place_program, m)?)?;
    m.add_function(wrap_pyfunction!(prelinked::program_placement, m)?)?;
    m.add_function(wrap_pyfunction!(imports::extern_call, m)?)?;
    m.add_function(wrap_pyfunction!(imports::extern_filled, m)?)?;
    m.add_function(wrap_pyfunction!(imports::program_imports, m)?)?;
    m.add_function(wrap_pyfunction!(runner_cli::run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(runner_cli::runner_version, m)?)?;
    Ok(())
}

/// One row of the shared target table, as `copapy._targets` reads it: name, aliases,
/// instruction set, feature names, machines, qemu-user binary and CPU, unicorn CPU,
/// stencil compiler flags.
type TargetRow = (
    &'static str,
    Vec<&'static str>,
    &'static str,
    Vec<&'static str>,
    &'static str,
    Option<(&'static str, &'static str)>,
    Option<&'static str>,
    Vec<&'static str>,
);

/// Every target copapy knows (`copapy_program::targets::TARGETS`): Python reads names,
/// aliases, features and emulators from here instead of keeping a second list.
#[pyfunction]
fn targets() -> Vec<TargetRow> {
    copapy_program::targets::TARGETS
        .iter()
        .map(|t| {
            let features = copapy_program::Features::NAMED
                .iter()
                .filter(|(f, _)| f.0 & t.features.0 != 0)
                .map(|(_, n)| *n)
                .collect();
            (
                t.name,
                t.aliases.to_vec(),
                t.arch.name(),
                features,
                t.machines,
                t.qemu_user.map(|q| (q.binary, q.cpu)),
                t.unicorn_cpu,
                t.cflags.to_vec(),
            )
        })
        .collect()
}
