//! From the traced graph to a numbered, deduplicated arena of operations.
//!
//! The traced graph holds only what Python objects still reference; this pass walks it
//! from the requested outputs (so unused nodes are dropped), numbers every node in
//! post-order (a valid evaluation order that computes operands right before their user),
//! and merges structurally equal nodes (hash-consing), so a common subexpression is
//! computed once however many times it was traced. A few identities that only become
//! visible after merging (`x - x`, `x ^ x`) are applied here. The numbered arena then
//! goes through `crate::signs`, which moves negations to where an addition,
//! subtraction or another negation absorbs them and folds doublings into constant
//! factors, exactly.

use rustc_hash::FxHashMap;

pub use crate::arena::{Arena, ArenaArray, ArenaLoop, ArenaNode, Kind, NodeId};
use crate::arena::{Builder, Key};
use crate::graph::{NodeKind, ScalarType, Value};

/// Numbers, deduplicates and prunes the graph reachable from `outputs`, then removes
/// the negations and doublings exact algebra can remove (`crate::signs`).
pub fn build_arena(outputs: &[Value]) -> Arena {
    crate::signs::fold_signs(number_graph(outputs))
}

/// The graph reachable from `outputs`, numbered and deduplicated.
fn number_graph(outputs: &[Value]) -> Arena {
    let mut b = Builder::new(true);
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
                    let run = match b.lookup(&key) {
                        Some(run) => run,
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
pub(crate) mod tests {
    use super::*;

    /// The arena before `crate::signs`, to compare with.
    pub(crate) fn numbered(outputs: &[Value]) -> Arena {
        number_graph(outputs)
    }
    use crate::graph::Op;
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
        let three = Value::constant(ScalarType::Float, 3f32.to_bits());
        let a = binary(Op::Mul, &x, &three).unwrap();
        let b = binary(Op::Mul, &x, &three).unwrap();
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
