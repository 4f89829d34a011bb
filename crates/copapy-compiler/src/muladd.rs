//! Multiply-add superinstructions: `p*q ± r*s`, `t ± p*q` and `p*q - t` as one stencil
//! (`st_mul2add_f_*`, `st_addmul_f_*`, …; the `FUSED` table of `stencils/optable.py`).
//!
//! Only two float values live in registers between stencils. A sum of two products
//! computed step by step holds both products at once, so a third value that is still
//! needed (IK's gradient term while `l1*s1 + l2*s12` is formed) is stored and read back
//! on the chain. The fused stencil reads its factors where they are (registers or data
//! slots, a memory operand `k` through hole `cp_a<k>`) and writes one register, so the
//! other keeps its value. Each product and the sum are rounded as the separate steps
//! round them: the stencil's C is the op table's `op_mul_f` and `op_add_f`/`op_sub_f`,
//! compiled without contraction (`-ffp-contract=off`; `stencils/build.py` rejects any
//! fused multiply-add instruction), so the result has the separate steps' bits on every
//! target.
//!
//! A float product that only one float add or sub reads (and that is not kept: an
//! output, a value the user holds, a loop's next carry) is *deferred*: when the scheduler
//! reaches it, nothing is computed unless both of its factors live only in registers
//! (deferring would then hold two registers instead of one). Its reader then runs the
//! fused stencil for the places its operands have at that point; when the object has no
//! stencil for them, the deferred products are computed there, one step each, and the
//! sum as before (`schedule_muladd.rs`). The stencils by operand places are
//! [`crate::select::StencilTable::fused`].

use crate::graph::{Op, ScalarType};
use crate::optimise::{Arena, Kind, NodeId};

/// The float products to defer into their reader: `Mul` nodes read once, by a float
/// `Add` or `Sub` (not both operands), not kept (`keep`: outputs and held values) and
/// not pinned (a loop body's placeholders and next carries: a deferred read of a
/// carried slot could come after the slot's update), nor reading pinned nodes.
pub(crate) fn deferrable(arena: &Arena, uses: &[u32], keep: &[bool], pinned: &[bool]) -> Vec<bool> {
    let mut deferred = vec![false; arena.nodes.len()];
    let float = |n: NodeId| arena.nodes[n as usize].ty == ScalarType::Float;
    let product = |n: NodeId| match arena.nodes[n as usize].kind {
        Kind::Binary(Op::Mul, p, q) => {
            float(n)
                && uses[n as usize] == 1
                && !keep[n as usize]
                && ![n, p, q].iter().any(|&v| pinned[v as usize])
        }
        _ => false,
    };
    for (n, node) in arena.nodes.iter().enumerate() {
        let Kind::Binary(Op::Add | Op::Sub, x, y) = node.kind else {
            continue;
        };
        if x == y || node.ty != ScalarType::Float || pinned[n] {
            continue;
        }
        for v in [x, y] {
            deferred[v as usize] |= product(v);
        }
    }
    deferred
}
