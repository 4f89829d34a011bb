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
//! `b` bool, `v` void (result only). The same string is in the program file and in the
//! runner's import table (`copapy_runner.h`, `struct copapy_import`).

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

/// Traces a call of the import `name` with `args`; `result` is the result type, or None
/// for a function without result (the value returned is then an effect token: an int
/// that is always 0, to be passed to `compile` among the outputs).
pub fn call(name: &str, args: &[Value], result: Option<ScalarType>) -> Result<Value, TraceError> {
    if !is_c_identifier(name) || name.len() > MAX_NAME {
        return Err(err(format!(
            "import name {name:?} is not a C identifier of at most {MAX_NAME} characters \
             (a letter or _, then letters, digits or _): the runner finds the function by \
             this name"
        )));
    }
    let floats = args.iter().filter(|a| a.ty() == ScalarType::Float).count();
    if floats > MAX_ARGS_PER_CLASS || args.len() - floats > MAX_ARGS_PER_CLASS {
        return Err(err(format!(
            "call of {name} has {floats} float and {} int/bool arguments: at most \
             {MAX_ARGS_PER_CLASS} of each (so every argument is passed in a register)",
            args.len() - floats
        )));
    }
    if let Some(a) = args.iter().find(|a| crate::array::len_of(a).is_some()) {
        let _ = a;
        return Err(err(format!(
            "call of {name}: array arguments are not supported yet; pass the elements"
        )));
    }
    let mut signature = String::with_capacity(args.len() + 3);
    signature.push(result.map_or('v', type_code));
    signature.push('(');
    signature.extend(args.iter().map(|a| type_code(a.ty())));
    signature.push(')');
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
