//! Fused sin and cos: when a program computes both `sin(x)` and `cos(x)` of one node,
//! the first of the two to be scheduled runs one `st_sincos_*` / `st_cossin_*` stencil
//! (`stencils/gen_stencils.py`): one range reduction gives both results, the first in a
//! register and the other in its data slot. The helper behind it is the body of
//! `cpm_sinf` and `cpm_cosf` (`stencils/mathlib.c`), so the pair has the bits of the
//! separate calls.

use rustc_hash::FxHashMap;

use crate::graph::Op;
use crate::optimise::{Arena, Kind, NodeId};

/// Each sin or cos node whose partner (cos or sin of the same operand) exists, mapped
/// to that partner.
pub(crate) fn partners(arena: &Arena) -> FxHashMap<NodeId, NodeId> {
    let mut sin_of: FxHashMap<NodeId, NodeId> = FxHashMap::default();
    let mut cos_of: FxHashMap<NodeId, NodeId> = FxHashMap::default();
    for (n, node) in arena.nodes.iter().enumerate() {
        match node.kind {
            Kind::Unary(Op::Sin, x) => {
                sin_of.entry(x).or_insert(n as NodeId);
            }
            Kind::Unary(Op::Cos, x) => {
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
