//! The scheduler's side of the multiply-add superinstructions ([`crate::muladd`]): a
//! sum whose operands are deferred products runs one fused stencil for the places its
//! operands have, or computes the products one step each when the object has no form
//! for them.

use crate::graph::{Fused, Op};
use crate::link::Step;
use crate::optimise::{Kind, NodeId};
use crate::schedule::Scheduler;
use crate::select::{fused_name, Class, MissingStencil, Place, MAX_FUSED_OPERANDS};
use crate::stencil_db::ARG_HOLES;

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
                .fused(fused, &places, 0)
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
        debug_assert!(operands.len() <= MAX_FUSED_OPERANDS && MAX_FUSED_OPERANDS <= ARG_HOLES);
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
            .fused(fused, &places, dst)
            .ok_or_else(|| MissingStencil(fused_name(fused, &places, dst)))?;
        self.steps.push(Step {
            args,
            ..Step::new(stencil, None)
        });
        self.set_reg(Class::Float, dst, n);
        Ok(true)
    }
}
