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
//! sum as before.

use crate::graph::{Fused, Op, ScalarType};
use crate::link::Step;
use crate::optimise::{Arena, Kind, NodeId};
use crate::schedule::Scheduler;
use crate::select::{Class, MissingStencil, Place};
use crate::stencil_db::{StencilId, ARG_HOLES};

/// The most operands a fused stencil reads.
const MAX_OPERANDS: usize = 4;
/// Place combinations of up to [`MAX_OPERANDS`] operands (three places each).
const COMBOS: usize = 81;

/// The fused stencils of an object by (superinstruction, operand places, destination).
pub(crate) struct FusedTable(Vec<Option<StencilId>>);

fn index(fused: Fused, places: &[Place], dst: usize) -> usize {
    let combo = places.iter().fold(0, |acc, &p| acc * 3 + p as usize);
    ((fused as usize) * COMBOS + combo) * 2 + dst
}

fn name(fused: Fused, places: &[Place], dst: usize) -> String {
    let codes: String = places.iter().map(|p| p.code()).collect();
    format!("st_{}_f_{codes}_r{dst}", fused.stencil_name())
}

impl FusedTable {
    pub(crate) fn new(lookup: impl Fn(&str) -> Option<StencilId>) -> FusedTable {
        let mut ids = vec![None; Fused::ALL.len() * COMBOS * 2];
        for fused in Fused::ALL {
            let arity = fused.arity();
            for combo in 0..3usize.pow(arity as u32) {
                let places: Vec<Place> = (0..arity)
                    .rev()
                    .map(|k| Place::ALL[combo / 3usize.pow(k as u32) % 3])
                    .collect();
                for dst in 0..2 {
                    ids[index(fused, &places, dst)] = lookup(&name(fused, &places, dst));
                }
            }
        }
        FusedTable(ids)
    }

    /// Whether the object has any fused stencil (targets built before them have none).
    pub(crate) fn any(&self) -> bool {
        self.0.iter().any(Option::is_some)
    }

    pub(crate) fn get(&self, fused: Fused, places: &[Place], dst: usize) -> Option<StencilId> {
        self.0[index(fused, places, dst)]
    }
}

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

/// One side of a sum: a deferred product's factors, or a value.
#[derive(Clone, Copy)]
enum Term {
    Product(NodeId, NodeId),
    Value(NodeId),
}

impl Scheduler<'_> {
    /// Called when the scheduler reaches deferred product `n = p * q`: `true` if it
    /// stays deferred (its reader computes it), `false` if it is computed now because
    /// both factors live only in registers.
    pub(crate) fn keep_deferred(&mut self, p: NodeId, q: NodeId) -> bool {
        let register_only =
            |v: NodeId| !self.in_memory(v) && self.place(Class::Float, v) != Place::Mem;
        !(p != q && register_only(p) && register_only(q))
    }

    fn term(&self, v: NodeId) -> Term {
        match self.arena.nodes[v as usize].kind {
            Kind::Binary(Op::Mul, p, q) if self.deferred[v as usize] => Term::Product(p, q),
            _ => Term::Value(v),
        }
    }

    /// The superinstruction for `x op y` and its operand orders to try (products
    /// commute; so do the terms of a sum), or `None` if neither term is a deferred
    /// product.
    fn fused_candidates(&self, op: Op, x: NodeId, y: NodeId) -> Option<(Fused, Vec<Vec<NodeId>>)> {
        let swaps = |p: NodeId, q: NodeId| [[p, q], [q, p]];
        let mut out = Vec::new();
        let fused = match (self.term(x), self.term(y), op) {
            (Term::Product(p, q), Term::Product(r, s), _) => {
                for a in swaps(p, q) {
                    for b in swaps(r, s) {
                        out.push([a, b].concat());
                        if op == Op::Add {
                            out.push([b, a].concat());
                        }
                    }
                }
                if op == Op::Add {
                    Fused::Mul2Add
                } else {
                    Fused::Mul2Sub
                }
            }
            (Term::Value(t), Term::Product(p, q), _)
            | (Term::Product(p, q), Term::Value(t), Op::Add) => {
                out.extend(swaps(p, q).map(|f| [[t].as_slice(), &f].concat()));
                if op == Op::Add {
                    Fused::AddMul
                } else {
                    Fused::SubMul
                }
            }
            (Term::Product(p, q), Term::Value(t), _) => {
                out.extend(swaps(p, q).map(|f| [f.as_slice(), &[t]].concat()));
                Fused::MulSub
            }
            (Term::Value(_), Term::Value(_), _) => return None,
        };
        Some((fused, out))
    }

    /// Schedules `n = x op y` (float add or sub) with deferred product operands: one
    /// fused step when the object has the form for the operands' places, else the
    /// products one step each. Returns `false` when neither operand was deferred (the
    /// caller schedules `n` as a plain binary op).
    pub(crate) fn schedule_fused(
        &mut self,
        n: NodeId,
        op: Op,
        x: NodeId,
        y: NodeId,
    ) -> Result<bool, MissingStencil> {
        let Some((fused, orders)) = self.fused_candidates(op, x, y) else {
            return Ok(false);
        };
        let found = orders.into_iter().find_map(|operands| {
            let places: Vec<Place> = operands
                .iter()
                .map(|&v| self.place(Class::Float, v))
                .collect();
            self.table
                .fused
                .get(fused, &places, 0)
                .map(|_| (operands, places))
        });
        let Some((operands, places)) = found else {
            // no stencil for these places: the products one step each, then the sum
            for v in [x, y] {
                if let Kind::Binary(Op::Mul, p, q) = self.arena.nodes[v as usize].kind {
                    if self.deferred[v as usize] {
                        self.deferred[v as usize] = false;
                        self.schedule_binary(v, Op::Mul, p, q)?;
                    }
                }
            }
            return Ok(false);
        };
        debug_assert!(operands.len() <= MAX_OPERANDS && MAX_OPERANDS <= ARG_HOLES);
        // the sum reads its products (now spent) and the stencil every factor and value
        for v in [x, y] {
            if matches!(self.term(v), Term::Product(..)) {
                self.uses[v as usize] -= 1;
            }
        }
        for &v in &operands {
            self.uses[v as usize] -= 1;
        }
        let mut args = [0u32; ARG_HOLES];
        for (k, (&v, &p)) in operands.iter().zip(&places).enumerate() {
            if p == Place::Mem {
                args[k] = self.slot[v as usize];
            }
        }
        let dst = self.claim_for(n, Class::Float)?;
        let stencil = self
            .table
            .fused
            .get(fused, &places, dst)
            .ok_or_else(|| MissingStencil(name(fused, &places, dst)))?;
        self.steps.push(Step {
            args,
            ..Step::new(stencil, None)
        });
        self.set_reg(Class::Float, dst, n);
        Ok(true)
    }
}
