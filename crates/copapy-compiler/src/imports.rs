//! Calls of imported functions (`cp.extern`): functions the runner provides, found by
//! name when a program is loaded.
//!
//! A call is an array node ([`ArrayOp::Call`]) with a scalar result and its arguments as
//! operands, so it is never merged with another call (array nodes are keyed by identity)
//! and never folded. Calls must also run in the order they were traced, which data
//! dependencies alone do not give: [`calls_in_trace_order`] finds the calls the outputs
//! reach and `optimise::build_arena` numbers them first, oldest first, so the scheduler
//! (which follows arena order) emits them in trace order. This ordering chain is weak: a
//! call no output depends on is dropped, and calls traced for another program never
//! join this one.
//!
//! Signatures are strings: the result code, then the argument codes in brackets
//! (`"f(if)"`: float result, an int and a float argument). Codes: `f` float, `i` int32,
//! `b` bool, `v` void (result only), and for array arguments `F` (a float32 buffer) and
//! `I` (an int32 buffer), each passed as a pointer and an int32 element count. The same
//! string is in the program file and in the runner's import table (`copapy_runner.h`,
//! `struct copapy_import`).
//!
//! An array argument reaches the function in a buffer of the call's own: a copy of the
//! array made at the call (or the array's own memory when this call is the last to read a
//! temporary), so the function may write it without changing any array of the program.
//! [`filled`] gives what the function left in that buffer as a new array ([`ArrayOp::Filled`]),
//! read after the call: a sensor that fills several channels.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::array::ArrayOp;
use crate::graph::{ArrayNode, NodeKind, ScalarType, Value};
use crate::trace::TraceError;

/// Most float and most int arguments a call takes: every one is in a register on every
/// target, and the call stencils pass exactly this many of each.
pub const MAX_ARGS_PER_CLASS: usize = 4;
/// Longest import name (the program format stores the length in a byte).
pub const MAX_NAME: usize = 63;

/// Set once any call was traced, so programs without calls skip the extra graph walk.
static CALLS_TRACED: AtomicBool = AtomicBool::new(false);

/// The signature code of a value type.
pub fn type_code(ty: ScalarType) -> char {
    match ty {
        ScalarType::Float => 'f',
        ScalarType::Int => 'i',
        ScalarType::Bool => 'b',
    }
}

/// Whether `name` is a C identifier: an ASCII letter or `_`, then letters, digits or `_`.
pub fn is_c_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn err(message: String) -> TraceError {
    TraceError { message }
}

/// Int registers an argument takes: a buffer passes its address and its length.
fn int_registers(a: &Value) -> usize {
    match crate::array::len_of(a) {
        Some(_) => 2,
        None if a.ty() == ScalarType::Float => 0,
        None => 1,
    }
}

/// The signature code of argument `a` (`k`-th of a call of `name`): a scalar's type, or
/// `F`/`I` for a float/int array; bool and byte arrays are refused.
fn argument_code(name: &str, k: usize, a: &Value) -> Result<char, TraceError> {
    if crate::array::len_of(a).is_none() {
        return Ok(type_code(a.ty()));
    }
    if crate::array::is_bytes(a) || a.ty() == ScalarType::Bool {
        return Err(err(format!(
            "argument {k} of the call of {name} is a {} array: an array argument is a \
             float32 or int32 buffer, so convert it first (cp.to_int / cp.to_float)",
            if crate::array::is_bytes(a) {
                "byte"
            } else {
                "bool"
            }
        )));
    }
    Ok(if a.ty() == ScalarType::Float {
        'F'
    } else {
        'I'
    })
}

/// Traces a call of the import `name` with `args` (scalars, or float/int arrays passed as
/// a buffer and its length); `result` is the result type, or None for a function without
/// result (the value returned is then an effect token: an int that is always 0, to be
/// passed to `compile` among the outputs).
pub fn call(name: &str, args: &[Value], result: Option<ScalarType>) -> Result<Value, TraceError> {
    if !is_c_identifier(name) || name.len() > MAX_NAME {
        return Err(err(format!(
            "import name {name:?} is not a C identifier of at most {MAX_NAME} characters \
             (a letter or _, then letters, digits or _): the runner finds the function by \
             this name"
        )));
    }
    let mut signature = String::with_capacity(args.len() + 3);
    signature.push(result.map_or('v', type_code));
    signature.push('(');
    for (k, a) in args.iter().enumerate() {
        signature.push(argument_code(name, k, a)?);
    }
    signature.push(')');
    let floats = args.iter().filter(|a| int_registers(a) == 0).count();
    let ints: usize = args.iter().map(int_registers).sum();
    if floats > MAX_ARGS_PER_CLASS || ints > MAX_ARGS_PER_CLASS {
        return Err(err(format!(
            "call of {name} ({signature}) needs {floats} float and {ints} integer registers \
             (an int or bool takes one, an array two: its address and length): at most \
             {MAX_ARGS_PER_CLASS} of each, so every argument is passed in a register"
        )));
    }
    CALLS_TRACED.store(true, Ordering::Relaxed);
    let node = ArrayNode {
        op: ArrayOp::Call {
            name: Arc::from(name),
            signature: Arc::from(signature.as_str()),
        },
        args: args.to_vec(),
        len: 0,
        bytes: false,
    };
    Ok(Value::new(
        result.unwrap_or(ScalarType::Int),
        NodeKind::Array(Box::new(node)),
    ))
}

/// What the call `call` (from [`call`]) left in the buffer of its array argument `k`:
/// an array of the argument's type and length, read after the call.
pub fn filled(call: &Value, k: usize) -> Result<Value, TraceError> {
    let NodeKind::Array(node) = call.kind() else {
        return Err(err("filled() needs a call of an imported function".into()));
    };
    let ArrayOp::Call { name, .. } = &node.op else {
        return Err(err("filled() needs a call of an imported function".into()));
    };
    let Some(arg) = node.args.get(k) else {
        return Err(err(format!(
            "fills={k}: the call of {name} has {} arguments",
            node.args.len()
        )));
    };
    let Some(len) = crate::array::len_of(arg) else {
        return Err(err(format!(
            "fills={k}: argument {k} of the call of {name} is a scalar, not an array: only \
             an array argument is passed as a buffer the function can fill"
        )));
    };
    Ok(crate::array::new_node(
        arg.ty(),
        ArrayOp::Filled(k as u32),
        vec![call.clone()],
        len,
    ))
}

pub use crate::graph::{call_has_buffers as has_buffers, call_stencil_name as stencil_name};

/// The call nodes reachable from `outputs`, oldest (first traced) first.
pub fn calls_in_trace_order(outputs: &[Value]) -> Vec<Value> {
    let mut calls = calls_traced_since(outputs, 0);
    calls.sort_by_key(Value::seq);
    calls
}

/// The call nodes below `roots` among those traced since creation number `first_seq`
/// (older nodes are not walked), in no particular order. `crate::loops::make_loop` uses
/// it to find calls traced inside a loop body.
pub fn calls_traced_since(roots: &[Value], first_seq: u64) -> Vec<Value> {
    if !CALLS_TRACED.load(Ordering::Relaxed) {
        return Vec::new();
    }
    let mut seen: FxHashSet<usize> = FxHashSet::default();
    let mut stack: Vec<&Value> = roots.iter().collect();
    let mut calls = Vec::new();
    while let Some(v) = stack.pop() {
        if v.seq() < first_seq || !seen.insert(v.id()) {
            continue;
        }
        if let NodeKind::Array(n) = v.kind() {
            if matches!(n.op, ArrayOp::Call { .. }) {
                calls.push(v.clone());
            }
        }
        // a loop's operands are its initial carries and captures: calls traced before
        // the loop (a body itself never calls, see `crate::loops::make_loop`)
        stack.extend(v.operands());
    }
    calls
}

/// An import a compiled program calls: its name, signature and the data offset of its
/// 8-byte entry in the import table (the loader writes the function's address there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportSlot {
    pub name: Arc<str>,
    pub signature: Arc<str>,
    pub slot: u32,
}

/// Two calls of one import with different signatures in one program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureConflict {
    pub name: Arc<str>,
    pub first: Arc<str>,
    pub second: Arc<str>,
}

impl std::fmt::Display for SignatureConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the program calls import {} with two signatures, {} and {}: one function has one \
             C signature, so pass arguments of the same types (convert with cp.float / int) and \
             give the same returns=",
            self.name, self.first, self.second
        )
    }
}

impl std::error::Error for SignatureConflict {}

#[cfg(test)]
mod tests {
    use super::*;

    fn signature(v: &Value) -> String {
        match v.kind() {
            NodeKind::Array(n) => match &n.op {
                ArrayOp::Call { signature, .. } => signature.to_string(),
                _ => panic!("not a call"),
            },
            _ => panic!("not a call"),
        }
    }

    #[test]
    fn array_arguments_take_two_integer_registers_and_have_upper_case_codes() {
        let floats = crate::array::data(ScalarType::Float, vec![0; 3]).unwrap();
        let ints = crate::array::data(ScalarType::Int, vec![0; 2]).unwrap();
        let i = Value::input(ScalarType::Int, 0);
        let f = Value::input(ScalarType::Float, 0);
        let c = call(
            "scan",
            &[floats.clone(), f, ints.clone()],
            Some(ScalarType::Int),
        )
        .unwrap();
        assert_eq!(signature(&c), "i(FfI)");
        assert_eq!(stencil_name(&signature(&c)), "st_call_i_p");
        assert!(call("scan", &[floats.clone(), i.clone(), i.clone()], None).is_ok());
        let e = call("scan", &[floats.clone(), i.clone(), i.clone(), i], None).unwrap_err();
        assert!(e.message.contains("5 integer registers"), "{}", e.message);
        let filled = filled(&c, 2).unwrap();
        assert_eq!(crate::array::len_of(&filled), Some(2));
        assert_eq!(filled.ty(), ScalarType::Int);
        assert!(filled_err(&c, 1).contains("is a scalar"));
        assert!(filled_err(&c, 3).contains("has 3 arguments"));
        let bools = crate::array::data(ScalarType::Bool, vec![0; 2]).unwrap();
        assert!(call("scan", &[bools], None)
            .unwrap_err()
            .message
            .contains("bool array"));
    }

    fn filled_err(c: &Value, k: usize) -> String {
        filled(c, k).unwrap_err().message
    }
}
