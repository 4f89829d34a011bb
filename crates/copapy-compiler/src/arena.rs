//! The arena: the numbered graph the compiler schedules, and the interning builder
//! that makes structurally equal nodes one.
//!
//! [`crate::optimise`] numbers the traced graph into an arena; `crate::signs` rewrites
//! one arena into another with the same builder, so both merge equal nodes alike.

use rustc_hash::FxHashMap;

use crate::graph::{LoopNode, Op, ScalarType, Value};

/// Index of a node in an [`Arena`].
pub type NodeId = u32;

/// What an arena node computes; operands are indices of earlier nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Const(u32),
    /// An input variable; `init` is its initial bit pattern.
    Input {
        init: u32,
    },
    Unary(Op, NodeId),
    Binary(Op, NodeId, NodeId),
    /// `cond ? a : b` (floats, bit selection).
    Select(NodeId, NodeId, NodeId),
    /// An array node or a scalar computed from arrays: index into [`Arena::arrays`].
    Array(u32),
    /// A whole loop (index into [`Arena::loops`]): runs it, has no value itself.
    Loop(u32),
    /// Carried value `k` of the loop node after the loop.
    LoopOut(NodeId, u32),
}

/// A loop of the arena: the traced loop and the arena indices of its operands
/// ([`crate::graph::LoopNode::operands`]).
#[derive(Clone, Debug)]
pub struct ArenaLoop {
    pub body: std::sync::Arc<LoopNode>,
    pub args: Vec<NodeId>,
}

/// An array node of the arena: the traced node (operation, length, initial data) and
/// the arena indices of its operands.
#[derive(Clone, Debug)]
pub struct ArenaArray {
    pub node: Value,
    pub args: Vec<NodeId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArenaNode {
    pub ty: ScalarType,
    pub kind: Kind,
}

/// The optimised graph: nodes in evaluation order, each operand before its users.
#[derive(Debug, Default)]
pub struct Arena {
    pub nodes: Vec<ArenaNode>,
    /// Arena index of each requested output, in the order given.
    pub outputs: Vec<NodeId>,
    /// Every input variable reachable from the outputs, with its arena index.
    pub inputs: Vec<(Value, NodeId)>,
    /// Every other reachable node the user still holds (see [`Value::is_exposed`]): the
    /// program stores these too, so they can be read after a run.
    pub exposed: Vec<(Value, NodeId)>,
    /// The array nodes, referred to by [`Kind::Array`].
    pub arrays: Vec<ArenaArray>,
    /// The loops, referred to by [`Kind::Loop`].
    pub loops: Vec<ArenaLoop>,
    /// Inputs a step stores into (the states an update copies the next value into at
    /// the end of a run, `crate::compile`): a packed step never reads them with one
    /// 16-byte load (`crate::schedule_packs`). Empty unless the compiler sets it.
    pub stored: Vec<NodeId>,
}

impl Arena {
    /// Calls `f` with each node that node `n` reads, in operand order.
    pub fn for_each_operand(&self, n: NodeId, mut f: impl FnMut(NodeId)) {
        match self.nodes[n as usize].kind {
            Kind::Const(_) | Kind::Input { .. } => {}
            Kind::Unary(_, a) => f(a),
            Kind::Binary(_, a, b) => {
                f(a);
                f(b);
            }
            Kind::Select(c, a, b) => {
                f(c);
                f(a);
                f(b);
            }
            Kind::Array(i) => self.arrays[i as usize].args.iter().for_each(|&a| f(a)),
            Kind::Loop(i) => self.loops[i as usize].args.iter().for_each(|&a| f(a)),
            Kind::LoopOut(run, _) => f(run),
        }
    }
}

/// What makes two arena nodes the same node.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Const(ScalarType, u32),
    /// Inputs are identified by the address of their traced node.
    Input(usize),
    Op(ScalarType, Op, NodeId, NodeId),
    Select(NodeId, NodeId, NodeId),
    LoopOut(NodeId, u32),
}

/// Builds an arena node by node, merging structurally equal nodes.
pub(crate) struct Builder {
    pub(crate) arena: Arena,
    interned: FxHashMap<Key, NodeId>,
    /// Whether `x - x` of floats folds to 0 (documented: assumes finite values). The
    /// first numbering applies it; `crate::signs` keeps a float `x - x` it uncovers
    /// (from `x + (-x)`) as a subtraction, so its rewrites stay exact.
    fold_float_self_sub: bool,
}

impl Builder {
    pub(crate) fn new(fold_float_self_sub: bool) -> Builder {
        Builder {
            arena: Arena::default(),
            interned: FxHashMap::default(),
            fold_float_self_sub,
        }
    }

    /// The node `key` already names, if any.
    pub(crate) fn lookup(&self, key: &Key) -> Option<NodeId> {
        self.interned.get(key).copied()
    }

    pub(crate) fn intern(&mut self, key: Key, node: ArenaNode) -> NodeId {
        if let Some(&id) = self.interned.get(&key) {
            return id;
        }
        let id = self.arena.nodes.len() as NodeId;
        self.arena.nodes.push(node);
        self.interned.insert(key, id);
        id
    }

    pub(crate) fn constant(&mut self, ty: ScalarType, bits: u32) -> NodeId {
        self.intern(
            Key::Const(ty, bits),
            ArenaNode {
                ty,
                kind: Kind::Const(bits),
            },
        )
    }

    pub(crate) fn unary(&mut self, ty: ScalarType, op: Op, a: NodeId) -> NodeId {
        let key = Key::Op(ty, op, a, NodeId::MAX);
        self.intern(
            key,
            ArenaNode {
                ty,
                kind: Kind::Unary(op, a),
            },
        )
    }

    pub(crate) fn binary(&mut self, ty: ScalarType, op: Op, a: NodeId, b: NodeId) -> NodeId {
        if a == b {
            let operand_is_int = self.arena.nodes[a as usize].ty != ScalarType::Float;
            match op {
                // assumes finite values for floats, as documented for `x - x`
                Op::Sub if operand_is_int || self.fold_float_self_sub => {
                    return self.constant(ty, 0)
                }
                Op::Xor => return self.constant(ty, 0),
                Op::Eq | Op::Le | Op::Ge if operand_is_int => return self.constant(ty, 1),
                Op::Ne | Op::Lt | Op::Gt if operand_is_int => return self.constant(ty, 0),
                _ => {}
            }
        }
        let (ka, kb) = if op.is_commutative() && b < a {
            (b, a)
        } else {
            (a, b)
        };
        let key = Key::Op(ty, op, ka, kb);
        self.intern(
            key,
            ArenaNode {
                ty,
                kind: Kind::Binary(op, a, b),
            },
        )
    }

    pub(crate) fn select(&mut self, ty: ScalarType, c: NodeId, a: NodeId, b: NodeId) -> NodeId {
        if a == b {
            return a;
        }
        self.intern(
            Key::Select(c, a, b),
            ArenaNode {
                ty,
                kind: Kind::Select(c, a, b),
            },
        )
    }

    /// Appends a node that is never merged with another (an input, an array, a loop and
    /// its outputs: the numbering already made each of them one node).
    pub(crate) fn push(&mut self, node: ArenaNode) -> NodeId {
        let id = self.arena.nodes.len() as NodeId;
        self.arena.nodes.push(node);
        id
    }
}
