//! `copapy._core`: the Rust side of the Python package.
//!
//! `value` (module `value.rs`) traces operations into the compiler's graph; `Target`
//! (`target.rs`) compiles, loads and runs programs; `jit_function` (`jit.rs`) is
//! `@cp.jit`; `autograd.rs` is `cp.grad`. The Python package (`python/copapy`)
//! re-exports these and adds the functions that also accept plain numbers.

// `deny`, not `forbid`: numpy_buffer.rs reads the CPython buffer protocol (arrays of any
// dtype, byte order and layout, without copying) and NumPy's array struct, which have no
// safe binding; call_buffers.rs copies the buffers of import calls (`cp.extern` arrays) in
// and out of a running program's data memory, by the address the program passes;
// py_build.rs fills a new result tuple or list in place and compares a list's items by
// pointer (CPython's C API).
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
mod jit_args;
mod jit_output;
mod loops;
mod names;
mod ndcore;
#[allow(unsafe_code)]
mod numpy_buffer;
mod prelinked;
#[allow(unsafe_code)]
mod py_build;
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

/// `op(x, y)` where `op` is a binary op of the table that Python calls as a function
/// (`Op::MATH_BINARY`: `atan2`, `pow`, `min`, `max`): the entry point of every binary
/// `cp.<name>` that `python/copapy/_math.py` makes from the table. An op with an integer
/// power rule (`pow`) turns an integer constant exponent into multiplications.
#[pyfunction]
#[pyo3(signature = (op, x, y))]
fn math_binary(
    py: Python<'_>,
    op: &str,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let Some(o) = Op::from_name(op).filter(|o| Op::MATH_BINARY.contains(o)) else {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{op:?} is not a binary math function of the op table (stencils/optable.py)"
        )));
    };
    if o.has_int_power() {
        if let Ok(v) = x.cast::<PyValue>() {
            return value::power(py, v.get().value(), y);
        }
    }
    let what = o.function_name().unwrap_or(op);
    value::math_binary(py, x, y, o, what)
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
    m.add_function(wrap_pyfunction!(cast_value, m)?)?;
    m.add_function(wrap_pyfunction!(to_byte_value, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_element, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_elements, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_of_elements, m)?)?;
    m.add_function(wrap_pyfunction!(array_ops::array_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(convert::check_dtype, m)?)?;
    m.add("ARRAY_MAX_LEN", copapy_compiler::array::MAX_LEN)?;
    ndcore::register(m)?;
    m.add_class::<container::PyContainer>()?;
    m.add_function(wrap_pyfunction!(container::register_containers, m)?)?;
    m.add_function(wrap_pyfunction!(targets, m)?)?;
    m.add_function(wrap_pyfunction!(isas, m)?)?;
    m.add_class::<target::Target>()?;
    m.add_class::<jit::JitFunction>()?;
    m.add_function(wrap_pyfunction!(math_unary, m)?)?;
    m.add_function(wrap_pyfunction!(math_binary, m)?)?;
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

/// How a library names an instruction set: architecture constant, mode constants.
type LibModeRow = (&'static str, Vec<&'static str>);

/// How a program calls an imported function: float and int argument registers, float and
/// int result registers, the return instruction's bytes, NaN-boxed singles.
type CallRow = (
    Vec<&'static str>,
    Vec<&'static str>,
    &'static str,
    &'static str,
    Vec<u8>,
    bool,
);

/// How unicorn runs an instruction set: its names, the register constants' module, the
/// program counter, stack pointer and return address registers, the FPU writes
/// (register, bits, or them in), the calls of imported functions.
type UnicornRow = (
    LibModeRow,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    Vec<(&'static str, u64, bool)>,
    CallRow,
);

/// One row of the instruction set table (`copapy_program::isas::ISAS`): name, the
/// relocations stencils may contain, tail-jump relocation, call relocations, square root
/// instruction, disassembler, how unicorn runs it and capstone's names for it.
type IsaRow = (
    &'static str,
    Vec<&'static str>,
    &'static str,
    Vec<&'static str>,
    &'static str,
    &'static str,
    UnicornRow,
    LibModeRow,
);

/// Every instruction set copapy knows: the emulator reads how unicorn runs each and
/// capstone's names for it from here instead of keeping its own list.
#[pyfunction]
fn isas() -> Vec<IsaRow> {
    let mode = |m: &copapy_program::isas::LibMode| (m.arch, m.modes.to_vec());
    copapy_program::isas::ISAS
        .iter()
        .map(|i| {
            (
                i.arch.name(),
                i.relocs.to_vec(),
                i.tail_reloc,
                i.call_relocs.to_vec(),
                i.sqrt_insn,
                i.objdump,
                (
                    mode(&i.unicorn.mode),
                    i.unicorn.consts,
                    i.unicorn.pc,
                    i.unicorn.sp,
                    i.unicorn.return_address,
                    i.unicorn
                        .fpu
                        .iter()
                        .map(|w| (w.register, w.bits, w.keep))
                        .collect(),
                    call_row(&i.unicorn.call),
                ),
                mode(&i.capstone),
            )
        })
        .collect()
}

fn call_row(c: &copapy_program::isas::CallAbi) -> CallRow {
    (
        c.float_args.to_vec(),
        c.int_args.to_vec(),
        c.float_result,
        c.int_result,
        c.return_insn.to_vec(),
        c.nan_boxed,
    )
}
