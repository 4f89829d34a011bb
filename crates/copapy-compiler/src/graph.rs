//! The traced graph: immutable, reference-counted nodes built by Python operator overloads.
//!
//! A [`Value`] is a cheap handle (`Arc`) to a [`Node`]. Nodes never change once built, so
//! the graph is a DAG that many Python objects can share. Identity matters only for
//! inputs (two `cp.value(1.0)` calls are two different variables); everything else is
//! compared structurally when the optimiser numbers values (see [`crate::optimise`]).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

pub use copapy_program::ScalarType;

pub use crate::ops_generated::{Fused, Op};

/// What a node computes.
#[derive(Debug)]
pub enum NodeKind {
    /// A constant, stored as its 32-bit pattern (float bits or two's complement int).
    Const(u32),
    /// A variable: lives in data memory, starts at `init` (bit pattern), can be written between runs.
    Input {
        init: u32,
    },
    Unary(Op, Value),
    Binary(Op, Value, Value),
    /// `cond ? a : b` for floats, by bit selection: the value not taken never matters,
    /// so a NaN or inf in it cannot leak. `cond` is a bool.
    Select(Value, Value, Value),
    /// An array, or a scalar computed from arrays (see [`crate::array`]).
    Array(Box<ArrayNode>),
    /// Carried value `k` after a fixed-trip-count loop (see [`crate::loops`]); every
    /// output of one loop shares its [`LoopNode`].
    Loop(Arc<LoopNode>, u32),
}

/// A loop whose body was traced once: `trips` runs of `nexts = body(index, carries)`.
///
/// The body is a graph of its own over placeholder inputs: `index` (the int counter,
/// `start` in the first run), `carries` (this run's carried values) and `captures`
/// (values computed before the loop, which the body reads but does not change). The
/// outer graph reaches the loop only through `operands`: the initial carries, then the
/// captured values in the order of `captures`.
#[derive(Debug)]
pub struct LoopNode {
    /// Runs of the body (at least 1).
    pub trips: u32,
    /// The counter's value in the first run; it grows by 1 per run.
    pub start: i32,
    /// The counter as the body reads it (an int placeholder).
    pub index: Value,
    /// Placeholders for the carried values.
    pub carries: Vec<Value>,
    /// Placeholders for the loop-invariant values the body reads.
    pub captures: Vec<Value>,
    /// The next carried values, computed from the placeholders.
    pub nexts: Vec<Value>,
    /// Initial carries, then the outer values of `captures`.
    pub operands: Vec<Value>,
}

/// A node of the traced graph: its result type and what it computes.
#[derive(Debug)]
pub struct Node {
    pub ty: ScalarType,
    pub kind: NodeKind,
    /// Creation order. A node can only depend on nodes created before it, so a graph
    /// walk looking for a given node can skip everything older (see `autodiff`).
    pub seq: u64,
    /// How many handles the user holds (Python `value` objects). A compiled program stores
    /// every value the user can still name, so `read_value` works on intermediates too.
    exposed: AtomicU32,
}

static NEXT_SEQ: AtomicU64 = AtomicU64::new(0);

/// Shared handle to a graph node. Cloning is a reference-count increment.
#[derive(Clone, Debug)]
pub struct Value(Arc<Node>);

impl Value {
    pub fn new(ty: ScalarType, kind: NodeKind) -> Value {
        let seq = NEXT_SEQ.fetch_add(1, Ordering::Relaxed);
        Value(Arc::new(Node {
            ty,
            kind,
            seq,
            exposed: AtomicU32::new(0),
        }))
    }

    /// Marks one more user-visible handle (a Python object) on this node.
    pub fn expose(&self) {
        self.0.exposed.fetch_add(1, Ordering::Relaxed);
    }

    /// Releases a handle counted by [`Value::expose`].
    pub fn unexpose(&self) {
        self.0.exposed.fetch_sub(1, Ordering::Relaxed);
    }

    /// Whether the user still holds a handle to this node.
    pub fn is_exposed(&self) -> bool {
        self.0.exposed.load(Ordering::Relaxed) > 0
    }

    /// Creation order of this node (older nodes have smaller numbers).
    pub fn seq(&self) -> u64 {
        self.0.seq
    }

    /// A new input variable with the given initial bit pattern.
    pub fn input(ty: ScalarType, init: u32) -> Value {
        Value::new(ty, NodeKind::Input { init })
    }

    pub fn constant(ty: ScalarType, bits: u32) -> Value {
        Value::new(ty, NodeKind::Const(bits))
    }

    pub fn ty(&self) -> ScalarType {
        self.0.ty
    }

    pub fn kind(&self) -> &NodeKind {
        &self.0.kind
    }

    /// Node identity: the same for clones of one handle, different for distinct nodes
    /// while both are alive.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    pub fn const_bits(&self) -> Option<u32> {
        match self.0.kind {
            NodeKind::Const(bits) => Some(bits),
            _ => None,
        }
    }

    pub fn is_input(&self) -> bool {
        matches!(self.0.kind, NodeKind::Input { .. })
    }

    pub fn ptr_eq(&self, other: &Value) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The nodes this one reads (a loop output: the loop's operands).
    pub fn operands(&self) -> Vec<&Value> {
        match self.kind() {
            NodeKind::Const(_) | NodeKind::Input { .. } => Vec::new(),
            NodeKind::Unary(_, a) => vec![a],
            NodeKind::Binary(_, a, b) => vec![a, b],
            NodeKind::Select(c, a, b) => vec![c, a, b],
            NodeKind::Array(n) => n.args.iter().collect(),
            NodeKind::Loop(l, _) => l.operands.iter().collect(),
        }
    }
}

impl Drop for Node {
    /// Frees long chains iteratively: a graph traced in a Python loop can be millions of
    /// nodes deep, and the default recursive drop would overflow the stack.
    fn drop(&mut self) {
        let mut pending: Vec<Value> = Vec::new();
        take_children(&mut self.kind, &mut pending);
        while let Some(value) = pending.pop() {
            if let Ok(mut node) = Arc::try_unwrap(value.0) {
                take_children(&mut node.kind, &mut pending);
            }
        }
    }
}

fn take_children(kind: &mut NodeKind, pending: &mut Vec<Value>) {
    let leaf = NodeKind::Const(0);
    match std::mem::replace(kind, leaf) {
        NodeKind::Unary(_, a) => pending.push(a),
        NodeKind::Binary(_, a, b) => {
            pending.push(a);
            pending.push(b);
        }
        NodeKind::Select(c, a, b) => {
            pending.push(c);
            pending.push(a);
            pending.push(b);
        }
        NodeKind::Array(a) => pending.extend(a.args),
        NodeKind::Loop(l, _) => {
            if let Ok(l) = Arc::try_unwrap(l) {
                pending.extend(l.operands);
                pending.extend(l.nexts);
            }
        }
        NodeKind::Const(_) | NodeKind::Input { .. } => {}
    }
}

/// Whether each operand of an element-wise operation is an array (`A`) or a scalar
/// broadcast to every element (`S`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Array, array.
    AA,
    /// Array, scalar.
    AS,
    /// Scalar, array.
    SA,
    /// Scalar, scalar (only the two values of a select; the condition is an array).
    SS,
}

impl Form {
    /// The form's code in stencil names.
    pub const fn code(self) -> &'static str {
        match self {
            Form::AA => "aa",
            Form::AS => "as",
            Form::SA => "sa",
            Form::SS => "ss",
        }
    }

    pub(crate) fn of(a: bool, b: bool) -> Form {
        match (a, b) {
            (true, true) => Form::AA,
            (true, false) => Form::AS,
            (false, true) => Form::SA,
            (false, false) => Form::SS,
        }
    }
}

/// Largest number of elements of one array: offsets stay far inside the 4 GiB of
/// the program format.
pub const MAX_LEN: usize = 1 << 26;

/// The most parameter words a row-backed operation ([`ArrayOp::Kernel`]) keeps: a
/// convolution's 15.
pub const KERNEL_PARAMS: usize = 15;

/// What an array node computes. Operands are in [`ArrayNode::args`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ArrayOp {
    /// A structural operation declared by row `row` of `crate::array_kernels::KERNELS`
    /// (its shape rule, parameter words, stencil and adjoint all come from the row) with
    /// the parameter words its rule checked and stored (sizes, walks, windows; signed
    /// words as their two's complement bits), zeros past the row's count. The row is an
    /// index so that this module, the graph's data model, stays a leaf.
    Kernel {
        /// Index of the row in `KERNELS`.
        row: u8,
        /// The row's parameter words (`crate::array_kernels::Params`).
        prm: [u32; KERNEL_PARAMS],
    },
    /// Elements stored in data memory with these initial bit patterns; an input the
    /// user can overwrite between runs (as `cp.value(1.0)` is for scalars).
    Data(Vec<u32>),
    /// The scalar operands gathered into an array, one store per element.
    Pack,
    /// Element `k` of the array operand: a scalar that is read from the array's
    /// memory, no code.
    Element(u32),
    /// Element-wise `x op y`; operands as the form says.
    Binary(Op, Form),
    /// Element-wise `op(x)`.
    Unary(Op),
    /// Element-wise `c ? x : y` (a selection of 32-bit patterns, so one kernel serves
    /// float, int and bool results) with an array condition; the form is that of `x`
    /// and `y`.
    Select(Form),
    /// A call of the imported function `name` (`crate::imports`): the operands are the
    /// arguments (scalars, and arrays passed as a buffer of the call's own), the result
    /// a scalar (an effect token for a void function).
    Call {
        /// The import's name, a C identifier.
        name: std::sync::Arc<str>,
        /// Its signature, e.g. `"f(if)"`.
        signature: std::sync::Arc<str>,
    },
    /// What the call that is the only operand left in the buffer of its array argument
    /// number `k` (`cp.extern(..., fills=k)`): an array aliasing that buffer, read after
    /// the call.
    Filled(u32),
}

/// An array node: the operation, its operands and the number of elements of the
/// result (0 when the result is a scalar).
#[derive(Debug)]
pub struct ArrayNode {
    /// What the node computes.
    pub op: ArrayOp,
    /// Operands, in the order of the stencil's holes `cp_a1`, `cp_a2`, `cp_a3`.
    pub args: Vec<Value>,
    /// Number of elements; 0 for the scalar results of reductions and elements.
    pub len: u32,
    /// One byte per element in data memory (a `'byte'` array: [`crate::array::data_bytes`],
    /// [`crate::array::to_bytes`]) instead of four; operations read it through the `widen_b` row.
    pub bytes: bool,
}

impl ArrayNode {
    /// The 4-byte data slots the node's elements occupy.
    pub fn slots(&self) -> u32 {
        if self.bytes {
            self.len.div_ceil(4)
        } else {
            self.len
        }
    }
}

/// Whether call signature `sig` (`crate::imports`) passes buffers (an `F` or `I`
/// argument).
pub fn call_has_buffers(sig: &str) -> bool {
    sig.bytes().any(|c| c.is_ascii_uppercase())
}

/// The stencil of a call of signature `sig`: `st_call_<result>`, with `_p` when it passes
/// buffers (`stencils/gen_calls.py`).
pub fn call_stencil_name(sig: &str) -> String {
    let suffix = if call_has_buffers(sig) { "_p" } else { "" };
    format!("st_call_{}{suffix}", &sig[..1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_a_deep_chain_does_not_overflow_the_stack() {
        let x = Value::input(ScalarType::Float, 0);
        let mut acc = x.clone();
        for _ in 0..1_000_000 {
            acc = Value::new(ScalarType::Float, NodeKind::Binary(Op::Add, acc, x.clone()));
        }
        drop(acc);
    }
}
