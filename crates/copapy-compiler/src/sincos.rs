//! Fused sin and cos: when a program computes both `sin(x)` and `cos(x)` of one node,
//! the first of the two to be scheduled runs one `st_sincos_*` / `st_cossin_*` stencil
//! (`stencils/gen_stencils.py`): one range reduction gives both results, the first in a
//! register and the other in its data slot. The helper behind it is the body of
//! `cpm_sinf` and `cpm_cosf` (`stencils/mathlib.c`), so the pair has the bits of the
//! separate calls. Float arrays fuse the same way into one `st_arr_sincos_f_a` step.

use rustc_hash::FxHashMap;

use crate::array::ArrayOp;
use crate::graph::{NodeKind, Op, ScalarType};
use crate::optimise::{Arena, Kind, NodeId};

/// Each sin or cos node whose partner (cos or sin of the same operand) exists, mapped
/// to that partner.
pub(crate) fn partners(arena: &Arena) -> FxHashMap<NodeId, NodeId> {
    let mut sin_of: FxHashMap<NodeId, NodeId> = FxHashMap::default();
    let mut cos_of: FxHashMap<NodeId, NodeId> = FxHashMap::default();
    for (n, node) in arena.nodes.iter().enumerate() {
        let (op, x) = match node.kind {
            Kind::Unary(op, x) => (op, x),
            // element-wise sin / cos of a float array: st_arr_sincos_f_a
            Kind::Array(i) => match arena.arrays[i as usize].node.kind() {
                NodeKind::Array(a) => match (&a.op, arena.arrays[i as usize].args.first()) {
                    (ArrayOp::Unary(op), Some(&x))
                        if arena.nodes[x as usize].ty == ScalarType::Float =>
                    {
                        (*op, x)
                    }
                    _ => continue,
                },
                _ => continue,
            },
            _ => continue,
        };
        match op {
            Op::Sin => {
                sin_of.entry(x).or_insert(n as NodeId);
            }
            Op::Cos => {
                cos_of.entry(x).or_insert(n as NodeId);
            }
            _ => {}
        }
    }
    let mut pairs = FxHashMap::default();
    for (x, s) in sin_of {
        if let Some(&c) = cos_of.get(&x) {
            pairs.insert(s, c);
            pairs.insert(c, s);
        }
    }
    pairs
}
