//! From the traced graph to a numbered, deduplicated arena of operations.
//!
//! The traced graph holds only what Python objects still reference; this pass walks it
//! from the requested outputs (so unused nodes are dropped), numbers every node in
//! post-order (a valid evaluation order that computes operands right before their user),
//! and merges structurally equal nodes (hash-consing), so a common subexpression is
//! computed once however many times it was traced. A few identities that only become
//! visible after merging (`x - x`, `x ^ x`) are applied here.

use rustc_hash::FxHashMap;

use crate::graph::{LoopNode, NodeKind, Op, ScalarType, Value};

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
#[derive(Debug)]
pub struct ArenaLoop {
    pub body: std::sync::Arc<LoopNode>,
    pub args: Vec<NodeId>,
}

/// An array node of the arena: the traced node (operation, length, initial data) and
/// the arena indices of its operands.
#[derive(Debug)]
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

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Const(ScalarType, u32),
    /// Inputs are identified by the address of their traced node.
    Input(usize),
    Op(ScalarType, Op, NodeId, NodeId),
    Select(NodeId, NodeId, NodeId),
    LoopOut(NodeId, u32),
}

struct Builder {
    arena: Arena,
    interned: FxHashMap<Key, NodeId>,
}

impl Builder {
    fn intern(&mut self, key: Key, node: ArenaNode) -> NodeId {
        if let Some(&id) = self.interned.get(&key) {
            return id;
        }
        let id = self.arena.nodes.len() as NodeId;
        self.arena.nodes.push(node);
        self.interned.insert(key, id);
        id
    }

    fn constant(&mut self, ty: ScalarType, bits: u32) -> NodeId {
        self.intern(
            Key::Const(ty, bits),
            ArenaNode {
                ty,
                kind: Kind::Const(bits),
            },
        )
    }

    fn unary(&mut self, ty: ScalarType, op: Op, a: NodeId) -> NodeId {
        let key = Key::Op(ty, op, a, NodeId::MAX);
        self.intern(
            key,
            ArenaNode {
                ty,
                kind: Kind::Unary(op, a),
            },
        )
    }

    fn binary(&mut self, ty: ScalarType, op: Op, a: NodeId, b: NodeId) -> NodeId {
        if a == b {
            let operand_is_int = self.arena.nodes[a as usize].ty != ScalarType::Float;
            match op {
                // assumes finite values for floats, as documented for `x - x`
                Op::Sub | Op::Xor => return self.constant(ty, 0),
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
}

impl Builder {
    fn select(&mut self, ty: ScalarType, c: NodeId, a: NodeId, b: NodeId) -> NodeId {
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
}

/// Numbers, deduplicates and prunes the graph reachable from `outputs`.
pub fn build_arena(outputs: &[Value]) -> Arena {
    let mut b = Builder {
        arena: Arena::default(),
        interned: FxHashMap::default(),
    };
    // traced node address -> arena index
    let mut seen: FxHashMap<usize, NodeId> = FxHashMap::default();
    let mut stack: Vec<(&Value, bool)> = Vec::new();
    // imported-function calls first, oldest first: post-order numbering then puts them
    // (and the scheduler emits them) in trace order (`crate::imports`)
    let calls = crate::imports::calls_in_trace_order(outputs);
    let roots = calls
        .iter()
        .map(|c| (c, false))
        .chain(outputs.iter().map(|o| (o, true)));
    for (out, is_output) in roots {
        stack.push((out, false));
        while let Some((v, expanded)) = stack.pop() {
            if seen.contains_key(&v.id()) {
                continue;
            }
            let id = match v.kind() {
                NodeKind::Const(bits) => b.constant(v.ty(), *bits),
                NodeKind::Input { init } => {
                    let id = b.intern(
                        Key::Input(v.id()),
                        ArenaNode {
                            ty: v.ty(),
                            kind: Kind::Input { init: *init },
                        },
                    );
                    b.arena.inputs.push((v.clone(), id));
                    id
                }
                NodeKind::Unary(op, a) => {
                    if !expanded {
                        stack.push((v, true));
                        stack.push((a, false));
                        continue;
                    }
                    let a = seen[&a.id()];
                    b.unary(v.ty(), *op, a)
                }
                NodeKind::Binary(op, x, y) => {
                    if !expanded {
                        stack.push((v, true));
                        stack.push((y, false));
                        stack.push((x, false));
                        continue;
                    }
                    let (x, y) = (seen[&x.id()], seen[&y.id()]);
                    b.binary(v.ty(), *op, x, y)
                }
                NodeKind::Array(n) => {
                    if !expanded {
                        stack.push((v, true));
                        for a in n.args.iter().rev() {
                            stack.push((a, false));
                        }
                        continue;
                    }
                    let args = n.args.iter().map(|a| seen[&a.id()]).collect();
                    // arrays are identified by their node: no merging (inputs must stay
                    // distinct, and equal array expressions are rare)
                    let index = b.arena.arrays.len() as u32;
                    let id = b.intern(
                        Key::Input(v.id()),
                        ArenaNode {
                            ty: v.ty(),
                            kind: Kind::Array(index),
                        },
                    );
                    b.arena.arrays.push(ArenaArray {
                        node: v.clone(),
                        args,
                    });
                    if matches!(n.op, crate::array::ArrayOp::Data(_)) {
                        b.arena.inputs.push((v.clone(), id));
                    }
                    id
                }
                NodeKind::Loop(l, k) => {
                    if !expanded {
                        stack.push((v, true));
                        for a in l.operands.iter().rev() {
                            stack.push((a, false));
                        }
                        continue;
                    }
                    // one loop node for all the loop's outputs, keyed by the loop
                    let key = Key::Input(std::sync::Arc::as_ptr(l) as usize);
                    let run = match b.interned.get(&key) {
                        Some(&run) => run,
                        None => {
                            let args = l.operands.iter().map(|a| seen[&a.id()]).collect();
                            let index = b.arena.loops.len() as u32;
                            b.arena.loops.push(ArenaLoop {
                                body: l.clone(),
                                args,
                            });
                            let node = ArenaNode {
                                ty: ScalarType::Int,
                                kind: Kind::Loop(index),
                            };
                            b.intern(key, node)
                        }
                    };
                    let node = ArenaNode {
                        ty: v.ty(),
                        kind: Kind::LoopOut(run, *k),
                    };
                    b.intern(Key::LoopOut(run, *k), node)
                }
                NodeKind::Select(c, x, y) => {
                    if !expanded {
                        stack.push((v, true));
                        stack.push((y, false));
                        stack.push((x, false));
                        stack.push((c, false));
                        continue;
                    }
                    let (c, x, y) = (seen[&c.id()], seen[&x.id()], seen[&y.id()]);
                    b.select(v.ty(), c, x, y)
                }
            };
            if v.is_exposed() && !v.is_input() {
                b.arena.exposed.push((v.clone(), id));
            }
            seen.insert(v.id(), id);
        }
        if is_output {
            let id = seen[&out.id()];
            b.arena.outputs.push(id);
        }
    }
    b.arena
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::binary;

    #[test]
    fn equal_subexpressions_are_computed_once() {
        let x = Value::input(ScalarType::Float, 0);
        let y = Value::input(ScalarType::Float, 0);
        let s1 = binary(Op::Add, &x, &y).unwrap();
        let s2 = binary(Op::Add, &y, &x).unwrap(); // commutative: same node
        let p = binary(Op::Mul, &s1, &s2).unwrap();
        let arena = build_arena(&[p]);
        // x, y, x+y, (x+y)*(x+y)
        assert_eq!(arena.nodes.len(), 4);
        assert_eq!(arena.inputs.len(), 2);
    }

    #[test]
    fn two_inputs_with_the_same_value_stay_distinct() {
        let x = Value::input(ScalarType::Float, 7);
        let y = Value::input(ScalarType::Float, 7);
        let arena = build_arena(&[binary(Op::Sub, &x, &y).unwrap()]);
        assert_eq!(arena.nodes.len(), 3);
    }

    #[test]
    fn merged_operands_expose_x_minus_x() {
        let x = Value::input(ScalarType::Int, 0);
        let one = Value::constant(ScalarType::Int, 1);
        let a = binary(Op::Add, &x, &one).unwrap();
        let b = binary(Op::Add, &x, &one).unwrap();
        let d = binary(Op::Sub, &a, &b).unwrap();
        let arena = build_arena(&[d]);
        let out = arena.nodes[arena.outputs[0] as usize];
        assert_eq!(out.kind, Kind::Const(0));
    }

    #[test]
    fn self_comparisons_fold_for_ints_but_not_for_floats() {
        // x == x is false for a NaN float, so only int and bool comparisons fold
        let cases = [
            (Op::Eq, 1),
            (Op::Le, 1),
            (Op::Ge, 1),
            (Op::Ne, 0),
            (Op::Lt, 0),
            (Op::Gt, 0),
        ];
        for ty in [ScalarType::Int, ScalarType::Bool] {
            let x = Value::input(ty, 0);
            let one = Value::constant(ScalarType::Int, 1);
            for (op, want) in cases {
                // two separately traced x + 1 merge here, not at trace time
                let a = binary(Op::Add, &x, &one).unwrap();
                let b = binary(Op::Add, &x, &one).unwrap();
                let arena = build_arena(&[binary(op, &a, &b).unwrap()]);
                let out = arena.nodes[arena.outputs[0] as usize];
                assert_eq!(out.kind, Kind::Const(want), "{ty:?} {op:?}");
            }
        }
        let x = Value::input(ScalarType::Float, 0);
        let one = Value::constant(ScalarType::Float, 1f32.to_bits());
        for (op, _) in cases {
            let a = binary(Op::Add, &x, &one).unwrap();
            let b = binary(Op::Add, &x, &one).unwrap();
            let arena = build_arena(&[binary(op, &a, &b).unwrap()]);
            let out = arena.nodes[arena.outputs[0] as usize];
            assert!(
                matches!(out.kind, Kind::Binary(o, _, _) if o == op),
                "float {op:?}"
            );
        }
    }

    #[test]
    fn a_select_between_equal_operands_is_that_operand_only() {
        let c = Value::input(ScalarType::Bool, 1);
        let x = Value::input(ScalarType::Float, 0);
        let y = Value::input(ScalarType::Float, 0);
        let two = Value::constant(ScalarType::Float, 2f32.to_bits());
        let a = binary(Op::Mul, &x, &two).unwrap();
        let b = binary(Op::Mul, &x, &two).unwrap();
        let same = crate::trace::select(&c, &a, &b).unwrap();
        let arena = build_arena(&[same]);
        let out = arena.nodes[arena.outputs[0] as usize];
        assert!(matches!(out.kind, Kind::Binary(Op::Mul, _, _)));
        let differ = crate::trace::select(&c, &x, &y).unwrap();
        let arena = build_arena(&[differ]);
        let out = arena.nodes[arena.outputs[0] as usize];
        assert!(matches!(out.kind, Kind::Select(..)));
    }

    #[test]
    fn exposed_computed_nodes_are_listed_but_inputs_are_not() {
        let x = Value::input(ScalarType::Float, 0);
        let one = Value::constant(ScalarType::Float, 1f32.to_bits());
        let held = binary(Op::Add, &x, &one).unwrap();
        let dropped = binary(Op::Mul, &x, &x).unwrap();
        let out = binary(Op::Sub, &held, &dropped).unwrap();
        x.expose();
        held.expose();
        let arena = build_arena(&[out]);
        assert_eq!(arena.exposed.len(), 1);
        assert!(arena.exposed[0].0.ptr_eq(&held));
        assert_eq!(arena.inputs.len(), 1);
        x.unexpose();
        held.unexpose();
    }

    #[test]
    fn operands_come_before_users() {
        let x = Value::input(ScalarType::Float, 0);
        let mut acc = x.clone();
        for _ in 0..100 {
            acc = binary(Op::Mul, &acc, &x).unwrap();
        }
        let arena = build_arena(&[acc]);
        for (i, n) in arena.nodes.iter().enumerate() {
            if let Kind::Binary(_, a, b) = n.kind {
                assert!((a as usize) < i && (b as usize) < i);
            }
        }
    }
}
