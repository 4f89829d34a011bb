//! Exact sign and doubling folds: negations move to where they cost nothing.
//!
//! Reverse-mode gradients are full of negations (`d cos(t)/dt = -sin(t)`,
//! `d(a - b)/db = -1`) and doublings (`d(x*x)/dx = x + x`); each is a step on a chain of
//! dependent operations. This pass rewrites a numbered arena into a new one where every
//! float value of the old arena is a node of the new one *or its negation*, and a
//! negation is resolved where a reader takes it for free:
//!
//! | reader | with a negated operand | is |
//! | --- | --- | --- |
//! | `-(-a)` | | `a` |
//! | `a + (-b)`, `(-a) + b` | | `a - b`, `b - a` |
//! | `a - (-b)`, `(-a) - (-b)` | | `a + b`, `b - a` |
//! | `(-a) + (-a)` | | `-(a + a)` |
//! | `(-a) * (-b)`, `(-a) / (-b)` | | `a * b`, `a / b` |
//! | `(-a) * b`, `a / (-b)`, … | | `-(a * b)`, `-(a / b)`: passed on to the readers |
//! | `(-a) * c`, `(-a) / c` (constant `c`) | | `a * (-c)`, `a / (-c)` |
//! | `select(k, -a, -b)` | | `-select(k, a, b)` |
//! | `abs(-a)` | | `abs(a)` |
//! | `a * -1`, `a / -1` | | `-a` |
//!
//! and doublings fold into a constant factor:
//!
//! | expression | is |
//! | --- | --- |
//! | `a * 2` | `a + a` (one form, so the two merge) |
//! | `(a + a) * c`, constant `c` with `1 <= abs(c)` and `2c` finite, or `c = ±inf` | `a * (2c)` |
//!
//! Every rewrite gives the same bits as the operations it replaces, for every input
//! (infinities, NaN, signed zeros, subnormals, overflow), up to the sign and payload of
//! a NaN result, which copapy leaves unspecified (README "Semantics"): negation is exact
//! and round-to-nearest is symmetric in the sign, `a - b` *is* `a + (-b)` in IEEE 754,
//! and a sum of two equal operands is never an exact cancellation. The doubling fold:
//! `a + a` is `2a` exactly or overflows (`abs(a) >= 2^127`); without overflow both sides
//! round the same real number `2ac`; with it, `(a + a) * c` is `±inf` and so is
//! `a * (2c)`, because `abs(2ac) >= 2^128` when `abs(c) >= 1` (for `abs(c) < 1`, or
//! `c = 0`, the two differ and the fold is not made; `(a + a) * b` with a computed `b`
//! neither). Not made either, because signed zeros make them inexact: `-(a + b)` for
//! `(-a) + (-b)` and for `(-a) - b` (`1 + (-1)` is `+0`, `-(1 - 1)` is `-0`), and a
//! negation moved across a subtraction (`-(a - b)` is not `b - a` when `a = b`). There
//! one negation stays; `x - x` uncovered here (from `x + (-x)`) stays a subtraction (the
//! documented `x - x → 0` assumes finite values). Only float values carry negations.
//!
//! Never more steps: a negation passed on by a product (or a select) that some reader
//! needs as a plain value after all is computed before the product instead ("pinned"),
//! and the pass runs again until no passed-on negation is made explicit. Then every
//! explicit negation left is one of an old explicit negation (or a `* -1`), so there are
//! at most as many as before; every other old operation is at most one new one.

use crate::arena::{Arena, ArenaArray, ArenaLoop, ArenaNode, Builder, Kind, NodeId};
use crate::graph::{Op, ScalarType};

const SIGN: u32 = 0x8000_0000;
const ONE: u32 = 0x3f80_0000;
const TWO: u32 = 0x4000_0000;
const MINUS_ONE: u32 = ONE | SIGN;
/// Rounds of pinning before every product is pinned at once (a chain of products
/// passing one negation on pins one more product per round at most).
const MAX_ROUNDS: usize = 24;

/// A value of the old arena in the new one: `-node` when `neg`, else `node`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Signed {
    node: NodeId,
    neg: bool,
}

impl Signed {
    fn plain(node: NodeId) -> Signed {
        Signed { node, neg: false }
    }
}

/// The arena with negations moved to their absorbing readers and doublings folded.
pub fn fold_signs(arena: Arena) -> Arena {
    if !arena.nodes.iter().any(|n| could_fold(&arena, n)) {
        return arena;
    }
    let mut pinned = vec![false; arena.nodes.len()];
    for _ in 0..MAX_ROUNDS {
        let pass = Rewrite::run(&arena, &pinned);
        let mut changed = false;
        for (i, pin) in pinned.iter_mut().enumerate() {
            if pass.passes[i] && pass.made_plain[i] && !*pin {
                *pin = true;
                changed = true;
            }
        }
        if !changed {
            return prune(pass.arena);
        }
    }
    pinned.fill(true);
    prune(Rewrite::run(&arena, &pinned).arena)
}

/// Whether node `n` gives this pass anything to do: a float negation, or a float
/// product or quotient with a constant operand.
fn could_fold(arena: &Arena, n: &ArenaNode) -> bool {
    let is_const = |i: NodeId| matches!(arena.nodes[i as usize].kind, Kind::Const(_));
    n.ty == ScalarType::Float
        && match n.kind {
            Kind::Unary(Op::Neg, _) => true,
            Kind::Binary(Op::Mul | Op::Div, a, b) => is_const(a) || is_const(b),
            _ => false,
        }
}

/// Whether `(a + a) * c` is `a * (2c)` for every `a` (module docs).
fn doubling_folds(c: u32) -> bool {
    let c = f32::from_bits(c);
    c.is_infinite() || (c.abs() >= 1.0 && (c * 2.0).is_finite())
}

/// One rewrite of the old arena, with the products in `pinned` not passing a negation on.
struct Rewrite<'a> {
    old: &'a Arena,
    pinned: &'a [bool],
    b: Builder,
    /// Each old node's value in the new arena.
    rep: Vec<Signed>,
    /// Old nodes whose new value is negated because an operand's was (products, selects).
    passes: Vec<bool>,
    /// Old nodes with a negated value some reader needed as it is (an explicit negation).
    made_plain: Vec<bool>,
}

/// What one rewrite made: the new arena, and for each old node whether it passed a
/// negation on ([`Rewrite::passes`]) and whether a reader needed it made explicit.
struct Outcome {
    arena: Arena,
    passes: Vec<bool>,
    made_plain: Vec<bool>,
}

impl<'a> Rewrite<'a> {
    fn run(old: &'a Arena, pinned: &'a [bool]) -> Outcome {
        let n = old.nodes.len();
        let mut r = Rewrite {
            old,
            pinned,
            b: Builder::new(false),
            rep: Vec::with_capacity(n),
            passes: vec![false; n],
            made_plain: vec![false; n],
        };
        for i in 0..n as NodeId {
            let value = r.node(i);
            r.rep.push(value);
        }
        r.b.arena.inputs = old
            .inputs
            .iter()
            .map(|(v, id)| (v.clone(), r.rep[*id as usize].node))
            .collect();
        r.b.arena.outputs = old.outputs.iter().map(|&o| r.plain(o)).collect();
        r.b.arena.exposed = old
            .exposed
            .iter()
            .map(|(v, id)| (v.clone(), r.plain(*id)))
            .collect();
        r.b.arena.stored = old.stored.iter().map(|&s| r.plain(s)).collect();
        Outcome {
            arena: r.b.arena,
            passes: r.passes,
            made_plain: r.made_plain,
        }
    }

    /// Old node `i`'s value as a new node (an explicit negation if it is negated).
    fn plain(&mut self, i: NodeId) -> NodeId {
        let v = self.rep[i as usize];
        if !v.neg {
            return v.node;
        }
        self.made_plain[i as usize] = true;
        self.b.unary(ScalarType::Float, Op::Neg, v.node)
    }

    fn const_bits(&self, node: NodeId) -> Option<u32> {
        match self.b.arena.nodes[node as usize].kind {
            Kind::Const(bits) => Some(bits),
            _ => None,
        }
    }

    /// `-v`: a constant's sign bit flips, anything else is marked negated.
    fn negate(&mut self, v: Signed) -> Signed {
        match self.const_bits(v.node) {
            Some(bits) if !v.neg => Signed::plain(self.b.constant(ScalarType::Float, bits ^ SIGN)),
            _ => Signed {
                node: v.node,
                neg: !v.neg,
            },
        }
    }

    fn float(&mut self, op: Op, a: NodeId, b: NodeId) -> Signed {
        Signed::plain(self.b.binary(ScalarType::Float, op, a, b))
    }

    fn node(&mut self, i: NodeId) -> Signed {
        let old = self.old.nodes[i as usize];
        let float = old.ty == ScalarType::Float;
        let is_float = |n: NodeId| self.old.nodes[n as usize].ty == ScalarType::Float;
        match old.kind {
            Kind::Const(bits) => Signed::plain(self.b.constant(old.ty, bits)),
            Kind::Unary(Op::Neg, a) if float && is_float(a) => self.negate(self.rep[a as usize]),
            Kind::Unary(Op::Abs, a) if float && is_float(a) => {
                let a = self.rep[a as usize].node;
                Signed::plain(self.b.unary(old.ty, Op::Abs, a))
            }
            Kind::Unary(op, a) => {
                let a = self.plain(a);
                Signed::plain(self.b.unary(old.ty, op, a))
            }
            Kind::Binary(Op::Add, a, b) if float => self.add(a, b),
            Kind::Binary(Op::Sub, a, b) if float => self.sub(a, b),
            Kind::Binary(op @ (Op::Mul | Op::Div), a, b) if float => self.product(i, op, a, b),
            Kind::Binary(op, a, b) => {
                let (a, b) = (self.plain(a), self.plain(b));
                Signed::plain(self.b.binary(old.ty, op, a, b))
            }
            Kind::Select(c, a, b) => self.select(i, old.ty, c, a, b),
            Kind::Input { .. } => Signed::plain(self.b.push(old)),
            Kind::Array(k) => {
                let from = &self.old.arrays[k as usize];
                let args = from.args.iter().map(|&a| self.plain(a)).collect();
                let node = from.node.clone();
                let k = self.b.arena.arrays.len() as u32;
                self.b.arena.arrays.push(ArenaArray { node, args });
                Signed::plain(self.b.push(ArenaNode {
                    ty: old.ty,
                    kind: Kind::Array(k),
                }))
            }
            Kind::Loop(k) => {
                let from = &self.old.loops[k as usize];
                let args = from.args.iter().map(|&a| self.plain(a)).collect();
                let body = from.body.clone();
                let k = self.b.arena.loops.len() as u32;
                self.b.arena.loops.push(ArenaLoop { body, args });
                Signed::plain(self.b.push(ArenaNode {
                    ty: old.ty,
                    kind: Kind::Loop(k),
                }))
            }
            Kind::LoopOut(run, k) => {
                let run = self.rep[run as usize].node;
                Signed::plain(self.b.push(ArenaNode {
                    ty: old.ty,
                    kind: Kind::LoopOut(run, k),
                }))
            }
        }
    }

    fn add(&mut self, a: NodeId, b: NodeId) -> Signed {
        let (x, y) = (self.rep[a as usize], self.rep[b as usize]);
        match (x.neg, y.neg) {
            (false, false) => self.float(Op::Add, x.node, y.node),
            (false, true) => self.float(Op::Sub, x.node, y.node),
            (true, false) => self.float(Op::Sub, y.node, x.node),
            // -a + -a is -(a + a): doubling never cancels, so no zero changes sign
            (true, true) if x.node == y.node => Signed {
                node: self.b.binary(ScalarType::Float, Op::Add, x.node, x.node),
                neg: true,
            },
            // -(a + b) would be -0 where IEEE gives +0: one negation stays, preferably
            // one a product passed on (the next round computes it before the product)
            (true, true) if self.passes[a as usize] && !self.passes[b as usize] => {
                let a = self.plain(a);
                self.float(Op::Sub, a, y.node)
            }
            (true, true) => {
                let b = self.plain(b);
                self.float(Op::Sub, b, x.node)
            }
        }
    }

    fn sub(&mut self, a: NodeId, b: NodeId) -> Signed {
        let (x, y) = (self.rep[a as usize], self.rep[b as usize]);
        match (x.neg, y.neg) {
            (false, false) => self.float(Op::Sub, x.node, y.node),
            (false, true) => self.float(Op::Add, x.node, y.node),
            (true, true) => self.float(Op::Sub, y.node, x.node),
            // -a - b is not -(a + b) (signed zeros): the negation of a stays
            (true, false) => {
                let a = self.plain(a);
                self.float(Op::Sub, a, y.node)
            }
        }
    }

    /// `a * b` or `a / b` of old node `i`.
    fn product(&mut self, i: NodeId, op: Op, a: NodeId, b: NodeId) -> Signed {
        let (mut x, mut y) = (self.rep[a as usize], self.rep[b as usize]);
        if x.neg != y.neg && self.pinned[i as usize] {
            // the negation may not pass this node: a constant operand takes it, else
            // the negated operand is computed as it is
            if self.const_bits(y.node).is_some() && x.neg {
                (x, y) = (Signed::plain(x.node), self.negate(y));
            } else if self.const_bits(x.node).is_some() && y.neg {
                (x, y) = (self.negate(x), Signed::plain(y.node));
            } else if x.neg {
                x = Signed::plain(self.plain(a));
            } else {
                y = Signed::plain(self.plain(b));
            }
        }
        let passed = x.neg != y.neg;
        let mut v = match (op, self.const_bits(x.node), self.const_bits(y.node)) {
            (Op::Mul, None, Some(c)) => self.times_const(x.node, c),
            (Op::Mul, Some(c), None) => self.times_const(y.node, c),
            (Op::Div, _, Some(MINUS_ONE)) => Signed {
                node: x.node,
                neg: true,
            },
            _ => self.float(op, x.node, y.node),
        };
        v.neg ^= passed;
        self.passes[i as usize] = passed && v.neg;
        v
    }

    /// `x * c` for a constant `c`: `x`, `-x`, `x + x`, or a doubling folded into `c`.
    fn times_const(&mut self, x: NodeId, c: u32) -> Signed {
        match c {
            ONE => return Signed::plain(x),
            MINUS_ONE => return Signed { node: x, neg: true },
            _ => {}
        }
        if let Kind::Binary(Op::Add, p, q) = self.b.arena.nodes[x as usize].kind {
            if p == q && doubling_folds(c) {
                let twice = (f32::from_bits(c) * 2.0).to_bits();
                return self.times_const(p, twice);
            }
        }
        if c == TWO {
            return self.float(Op::Add, x, x);
        }
        let c = self.b.constant(ScalarType::Float, c);
        self.float(Op::Mul, x, c)
    }

    fn select(&mut self, i: NodeId, ty: ScalarType, c: NodeId, a: NodeId, b: NodeId) -> Signed {
        let c = self.plain(c);
        let (x, y) = (self.rep[a as usize], self.rep[b as usize]);
        if x.neg && y.neg && !self.pinned[i as usize] {
            self.passes[i as usize] = true;
            return Signed {
                node: self.b.select(ty, c, x.node, y.node),
                neg: true,
            };
        }
        let (a, b) = (self.plain(a), self.plain(b));
        Signed::plain(self.b.select(ty, c, a, b))
    }
}

/// Drops the nodes no output, exposed value, input, array or loop needs any more (a
/// doubling folded into its product, a constant that took a negation), keeping the order.
fn prune(mut arena: Arena) -> Arena {
    let n = arena.nodes.len();
    let mut live = vec![false; n];
    let roots = arena.outputs.iter().chain(&arena.stored);
    for &r in roots.chain(arena.exposed.iter().map(|(_, id)| id)) {
        live[r as usize] = true;
    }
    for i in (0..n).rev() {
        let kept = !matches!(
            arena.nodes[i].kind,
            Kind::Const(_) | Kind::Unary(..) | Kind::Binary(..) | Kind::Select(..)
        );
        if live[i] || kept {
            live[i] = true;
            arena.for_each_operand(i as NodeId, |a| live[a as usize] = true);
        }
    }
    if live.iter().all(|&l| l) {
        return arena;
    }
    let mut new_id = vec![NodeId::MAX; n];
    let mut nodes = Vec::with_capacity(n);
    for (i, node) in arena.nodes.iter().enumerate() {
        if !live[i] {
            continue;
        }
        new_id[i] = nodes.len() as NodeId;
        let m = |a: NodeId| new_id[a as usize];
        let kind = match node.kind {
            Kind::Unary(op, a) => Kind::Unary(op, m(a)),
            Kind::Binary(op, a, b) => Kind::Binary(op, m(a), m(b)),
            Kind::Select(c, a, b) => Kind::Select(m(c), m(a), m(b)),
            Kind::LoopOut(run, k) => Kind::LoopOut(m(run), k),
            k @ (Kind::Const(_) | Kind::Input { .. } | Kind::Array(_) | Kind::Loop(_)) => k,
        };
        nodes.push(ArenaNode { ty: node.ty, kind });
    }
    let m = |a: &mut NodeId| *a = new_id[*a as usize];
    arena.nodes = nodes;
    arena.outputs.iter_mut().for_each(m);
    arena.stored.iter_mut().for_each(m);
    arena.inputs.iter_mut().for_each(|(_, id)| m(id));
    arena.exposed.iter_mut().for_each(|(_, id)| m(id));
    for args in arena.arrays.iter_mut().map(|a| &mut a.args) {
        args.iter_mut().for_each(m);
    }
    for args in arena.loops.iter_mut().map(|l| &mut l.args) {
        args.iter_mut().for_each(m);
    }
    arena
}
