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

use crate::arena::{Arena, ArenaNode, Builder, Kind, NodeId};
use crate::graph::{Op, ScalarType};

const SIGN: u32 = 0x8000_0000;
const ONE: u32 = 0x3f80_0000;
const TWO: u32 = 0x4000_0000;
const MINUS_ONE: u32 = ONE | SIGN;
/// Rounds of pinning before every product is pinned at once ([`pin_chain`] pins a whole
/// chain of products passing one negation on in one round, so few are needed).
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
        for i in 0..arena.nodes.len() {
            if pass.passes[i] && pass.made_plain[i] && !pinned[i] {
                pin_chain(&arena, &pass, &mut pinned, i);
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

/// Pins old node `start` and the nodes that passed it the negation it will now make
/// explicit before itself, and so on up: a chain of products passing one negation on is
/// pinned in one round rather than one round per product.
fn pin_chain(old: &Arena, pass: &Outcome, pinned: &mut [bool], start: usize) {
    let negated = |n: NodeId| pass.negated[n as usize];
    let is_const = |n: NodeId| matches!(old.nodes[n as usize].kind, Kind::Const(_));
    let mut todo = vec![start];
    while let Some(i) = todo.pop() {
        if std::mem::replace(&mut pinned[i], true) {
            continue;
        }
        let feeders = match old.nodes[i].kind {
            // a constant factor takes the negation instead (`Rewrite::product`)
            Kind::Binary(Op::Mul | Op::Div, a, b) if negated(a) != negated(b) => {
                let (fed, other) = if negated(a) { (a, b) } else { (b, a) };
                [(!is_const(other)).then_some(fed), None]
            }
            Kind::Binary(Op::Add, a, _) => [Some(a), None],
            Kind::Select(_, a, b) => [Some(a), Some(b)],
            _ => [None, None],
        };
        for f in feeders.into_iter().flatten() {
            if pass.passes[f as usize] && negated(f) {
                todo.push(f as usize);
            }
        }
    }
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
    /// Old nodes whose new value is negated because an operand's was (products, selects,
    /// `-a + -a`).
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
    /// Whether each old node's value is a negated new node.
    negated: Vec<bool>,
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
        r.b.arena.arrays = old.arrays.clone();
        r.b.arena.loops = old.loops.clone();
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
            negated: r.rep.iter().map(|v| v.neg).collect(),
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

    fn plain_all(&mut self, old: &[NodeId]) -> Vec<NodeId> {
        old.iter().map(|&a| self.plain(a)).collect()
    }

    /// A node no other is merged with (an array, a loop, a loop's output).
    fn push(&mut self, ty: ScalarType, kind: Kind) -> Signed {
        Signed::plain(self.b.push(ArenaNode { ty, kind }))
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
            Kind::Binary(Op::Add, a, b) if float => self.add(i, a, b),
            Kind::Binary(Op::Sub, a, b) if float => self.sub(a, b),
            Kind::Binary(op @ (Op::Mul | Op::Div), a, b) if float => self.product(i, op, a, b),
            Kind::Binary(op, a, b) => {
                let (a, b) = (self.plain(a), self.plain(b));
                Signed::plain(self.b.binary(old.ty, op, a, b))
            }
            Kind::Select(c, a, b) => self.select(i, old.ty, c, a, b),
            Kind::Input { .. } => Signed::plain(self.b.push(old)),
            // the arrays and loops keep their indices; only their operands are new
            Kind::Array(k) => {
                self.b.arena.arrays[k as usize].args =
                    self.plain_all(&self.old.arrays[k as usize].args);
                self.push(old.ty, old.kind)
            }
            Kind::Loop(k) => {
                self.b.arena.loops[k as usize].args =
                    self.plain_all(&self.old.loops[k as usize].args);
                self.push(old.ty, old.kind)
            }
            Kind::LoopOut(run, k) => {
                let run = self.rep[run as usize].node;
                self.push(old.ty, Kind::LoopOut(run, k))
            }
        }
    }

    /// `a + b` of old node `i`.
    fn add(&mut self, i: NodeId, a: NodeId, b: NodeId) -> Signed {
        let (x, y) = (self.rep[a as usize], self.rep[b as usize]);
        match (x.neg, y.neg) {
            (false, false) => self.float(Op::Add, x.node, y.node),
            (false, true) => self.float(Op::Sub, x.node, y.node),
            (true, false) => self.float(Op::Sub, y.node, x.node),
            // -a + -a is -(a + a): doubling never cancels, so no zero changes sign; it
            // passes the negation on like a product
            (true, true) if x.node == y.node && !self.pinned[i as usize] => {
                self.passes[i as usize] = true;
                Signed {
                    node: self.b.binary(ScalarType::Float, Op::Add, x.node, x.node),
                    neg: true,
                }
            }
            (true, true) if x.node == y.node => {
                let a = self.plain(a);
                self.float(Op::Add, a, a)
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Value;
    use crate::optimise::build_arena;
    use crate::trace::{binary, select, unary};

    fn input() -> Value {
        Value::input(ScalarType::Float, 0)
    }

    fn c(x: f32) -> Value {
        Value::constant(ScalarType::Float, x.to_bits())
    }

    fn neg(v: &Value) -> Value {
        unary(Op::Neg, v).unwrap()
    }

    fn bin(op: Op, a: &Value, b: &Value) -> Value {
        binary(op, a, b).unwrap()
    }

    fn count(arena: &Arena, op: Op) -> usize {
        let is = |k: &Kind| matches!(k, Kind::Unary(o, _) | Kind::Binary(o, _, _) if *o == op);
        arena.nodes.iter().filter(|n| is(&n.kind)).count()
    }

    fn steps(arena: &Arena) -> usize {
        let computed = |k: &Kind| !matches!(k, Kind::Const(_) | Kind::Input { .. });
        arena.nodes.iter().filter(|n| computed(&n.kind)).count()
    }

    fn output(arena: &Arena, k: usize) -> Kind {
        arena.nodes[arena.outputs[k] as usize].kind
    }

    /// The arena index of input `v`.
    fn id(arena: &Arena, v: &Value) -> NodeId {
        arena.inputs.iter().find(|(i, _)| i.ptr_eq(v)).unwrap().1
    }

    fn const_bits(arena: &Arena, n: NodeId) -> Option<u32> {
        match arena.nodes[n as usize].kind {
            Kind::Const(bits) => Some(bits),
            _ => None,
        }
    }

    #[test]
    fn a_sum_with_a_negation_is_a_difference() {
        let (a, b) = (input(), input());
        let arena = build_arena(&[
            bin(Op::Add, &a, &neg(&b)),
            bin(Op::Add, &neg(&a), &b),
            bin(Op::Sub, &a, &neg(&b)),
            bin(Op::Sub, &neg(&a), &neg(&b)),
        ]);
        let (ia, ib) = (id(&arena, &a), id(&arena, &b));
        assert_eq!(output(&arena, 0), Kind::Binary(Op::Sub, ia, ib));
        assert_eq!(output(&arena, 1), Kind::Binary(Op::Sub, ib, ia));
        assert_eq!(output(&arena, 2), Kind::Binary(Op::Add, ia, ib));
        assert_eq!(output(&arena, 3), Kind::Binary(Op::Sub, ib, ia));
        assert_eq!(count(&arena, Op::Neg), 0);
    }

    #[test]
    fn negations_pass_through_products_to_the_sum_that_absorbs_them() {
        // a - ((-b) * c) / d: the negation reaches the subtraction, which becomes a sum
        let (a, b, cc, d) = (input(), input(), input(), input());
        let p = bin(Op::Div, &bin(Op::Mul, &neg(&b), &cc), &d);
        let arena = build_arena(&[bin(Op::Sub, &a, &p)]);
        assert!(matches!(output(&arena, 0), Kind::Binary(Op::Add, ..)));
        assert_eq!(count(&arena, Op::Neg), 0);
        // (-a) * (-b) and -((-a) * b) need none either
        let arena = build_arena(&[
            bin(Op::Mul, &neg(&a), &neg(&b)),
            neg(&bin(Op::Mul, &neg(&a), &b)),
        ]);
        assert_eq!(count(&arena, Op::Neg), 0);
        assert_eq!(arena.outputs[0], arena.outputs[1]);
    }

    #[test]
    fn a_negation_a_reader_needs_stays_before_the_product() {
        // sin((-a) * b): passing the negation on would put it after the product (later on
        // a chain through b); it stays where it was, on a
        let (a, b) = (input(), input());
        let arena = build_arena(&[unary(Op::Sin, &bin(Op::Mul, &neg(&a), &b)).unwrap()]);
        assert_eq!(count(&arena, Op::Neg), 1);
        let neg_of_a = Kind::Unary(Op::Neg, id(&arena, &a));
        assert!(arena.nodes.iter().any(|n| n.kind == neg_of_a));
    }

    #[test]
    fn a_shared_negation_is_never_made_twice() {
        // -a read by two products whose results are needed as they are: one negation
        let (a, b, cc) = (input(), input(), input());
        let n = neg(&a);
        let outs = [bin(Op::Mul, &n, &b), bin(Op::Mul, &n, &cc)];
        let before = steps(&build_arena(&outs));
        let arena = build_arena(&outs);
        assert_eq!(count(&arena, Op::Neg), 1);
        assert_eq!(steps(&arena), before);
        // one reader absorbs it, another needs it: still one
        let outs = [bin(Op::Add, &b, &n), unary(Op::Sin, &n).unwrap()];
        let arena = build_arena(&outs);
        assert_eq!(count(&arena, Op::Neg), 1);
        assert_eq!(count(&arena, Op::Sub), 1);
    }

    #[test]
    fn a_long_chain_of_products_settles_without_giving_up_elsewhere() {
        // sin of (-a) * b1 * ... * b40 needs the negation before the first product; the
        // pinning reaches it in one round instead of forty, so the pass does not run out
        // of rounds and pin every product (which would keep d + (-a) * e a sum)
        let (a, d, e) = (input(), input(), input());
        let mut chain = neg(&a);
        for _ in 0..40 {
            chain = bin(Op::Mul, &chain, &input());
        }
        let arena = build_arena(&[
            unary(Op::Sin, &chain).unwrap(),
            bin(Op::Add, &d, &bin(Op::Mul, &neg(&a), &e)),
        ]);
        assert_eq!(count(&arena, Op::Neg), 1);
        assert_eq!(count(&arena, Op::Sub), 1);
    }

    #[test]
    fn a_sum_of_two_negations_keeps_one() {
        // -(a + b) would turn the +0 of 1 + (-1) into -0: one negation stays
        let (a, b) = (input(), input());
        for sum in [bin(Op::Add, &neg(&a), &neg(&b)), bin(Op::Sub, &neg(&a), &b)] {
            let arena = build_arena(&[sum]);
            assert_eq!(count(&arena, Op::Neg), 1);
            assert_eq!(count(&arena, Op::Sub), 1);
        }
        // -a + -a is -(a + a): exact, as a doubling never cancels
        let arena = build_arena(&[bin(Op::Mul, &bin(Op::Add, &neg(&a), &neg(&a)), &b)]);
        assert_eq!(count(&arena, Op::Neg), 1);
        assert_eq!(steps(&arena), 3);
    }

    #[test]
    fn a_constant_factor_takes_a_negation() {
        let a = input();
        let arena = build_arena(&[
            bin(Op::Mul, &neg(&a), &c(3.0)),
            bin(Op::Div, &c(5.0), &neg(&a)),
        ]);
        assert_eq!(count(&arena, Op::Neg), 0);
        let Kind::Binary(Op::Mul, _, k) = output(&arena, 0) else {
            panic!("a product")
        };
        assert_eq!(const_bits(&arena, k), Some((-3.0f32).to_bits()));
        let Kind::Binary(Op::Div, k, _) = output(&arena, 1) else {
            panic!("a quotient")
        };
        assert_eq!(const_bits(&arena, k), Some((-5.0f32).to_bits()));
    }

    #[test]
    fn times_minus_one_is_a_negation_and_cancels_with_one() {
        let (a, b) = (input(), input());
        let arena = build_arena(&[
            bin(Op::Add, &b, &bin(Op::Mul, &a, &c(-1.0))),
            bin(Op::Div, &neg(&a), &c(-1.0)),
        ]);
        assert_eq!(
            output(&arena, 0),
            Kind::Binary(Op::Sub, id(&arena, &b), id(&arena, &a))
        );
        assert_eq!(arena.outputs[1], id(&arena, &a));
    }

    #[test]
    fn select_and_abs_take_negations() {
        let (k, a, b, d) = (Value::input(ScalarType::Bool, 0), input(), input(), input());
        let s = select(&k, &neg(&a), &neg(&b)).unwrap();
        let arena = build_arena(&[bin(Op::Add, &d, &s), unary(Op::Abs, &neg(&a)).unwrap()]);
        assert_eq!(count(&arena, Op::Neg), 0);
        assert!(matches!(output(&arena, 0), Kind::Binary(Op::Sub, ..)));
        assert_eq!(output(&arena, 1), Kind::Unary(Op::Abs, id(&arena, &a)));
    }

    #[test]
    fn doublings_fold_into_constant_factors_where_exact() {
        let a = input();
        let twice = bin(Op::Add, &a, &a);
        let fold = |k: f32| {
            let arena = build_arena(&[bin(Op::Mul, &twice, &c(k))]);
            match output(&arena, 0) {
                Kind::Binary(Op::Mul, x, y) if x == id(&arena, &a) => const_bits(&arena, y),
                _ => None,
            }
        };
        assert_eq!(fold(1.8), Some(3.6f32.to_bits()));
        assert_eq!(fold(-3.0), Some((-6.0f32).to_bits()));
        assert_eq!(fold(f32::INFINITY), Some(f32::INFINITY.to_bits()));
        assert_eq!(fold(1.0e38), Some(2.0e38f32.to_bits()));
        // |c| < 1: a + a may overflow where a * 2c does not; 2c overflowing; NaN
        for k in [0.5, -0.75, 1.0e-40, 2.0e38, f32::NAN] {
            assert_eq!(fold(k), None, "{k}");
        }
        // (a + a) * 2 -> a * 4, and a * 2 is a + a
        assert_eq!(fold(2.0), Some(4.0f32.to_bits()));
        let arena = build_arena(&[bin(Op::Mul, &c(2.0), &a)]);
        let ia = id(&arena, &a);
        assert_eq!(output(&arena, 0), Kind::Binary(Op::Add, ia, ia));
        // a computed factor: no fold
        let b = input();
        let arena = build_arena(&[bin(Op::Mul, &twice, &b)]);
        assert_eq!(steps(&arena), 2);
    }

    #[test]
    fn x_plus_its_negation_stays_a_subtraction() {
        // x - x -> 0 assumes finite values (documented); x + (-x) is computed, so inf
        // and NaN give NaN as IEEE says
        let a = input();
        let arena = build_arena(&[bin(Op::Add, &a, &neg(&a))]);
        let ia = id(&arena, &a);
        assert_eq!(output(&arena, 0), Kind::Binary(Op::Sub, ia, ia));
    }

    #[test]
    fn exposed_values_and_ints_keep_their_negations() {
        let (a, b) = (input(), input());
        let n = neg(&a);
        n.expose();
        let arena = build_arena(&[bin(Op::Add, &b, &n)]);
        n.unexpose();
        assert_eq!(count(&arena, Op::Neg), 1);
        assert_eq!(count(&arena, Op::Sub), 1);
        let (i, j) = (
            Value::input(ScalarType::Int, 0),
            Value::input(ScalarType::Int, 0),
        );
        let arena = build_arena(&[bin(Op::Add, &i, &neg(&j))]);
        assert_eq!(count(&arena, Op::Neg), 1);
    }

    /// A small deterministic generator (xorshift), so the test needs no crate.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Negations and products with -1 (which become negations).
    fn negations(arena: &Arena) -> usize {
        let minus_one = |n: NodeId| const_bits(arena, n) == Some(MINUS_ONE);
        let is = |k: &Kind| match *k {
            Kind::Unary(Op::Neg, _) => true,
            Kind::Binary(Op::Mul, a, b) => minus_one(a) || minus_one(b),
            _ => false,
        };
        arena.nodes.iter().filter(|n| is(&n.kind)).count()
    }

    #[test]
    fn random_graphs_never_get_more_steps_or_negations() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let mut vals: Vec<Value> = (0..3).map(|_| input()).collect();
            for _ in 0..rng.below(20) + 2 {
                let pick = |rng: &mut Rng, vals: &[Value]| vals[rng.below(vals.len())].clone();
                let (x, y) = (pick(&mut rng, &vals), pick(&mut rng, &vals));
                let v = match rng.below(8) {
                    0 | 1 => neg(&x),
                    2 => bin(Op::Add, &x, &y),
                    3 => bin(Op::Sub, &x, &y),
                    4 => bin(Op::Mul, &x, &y),
                    5 => bin(Op::Div, &x, &y),
                    6 => bin(Op::Mul, &x, &c([2.0, -1.0, 3.0, -0.5][rng.below(4)])),
                    _ => unary(Op::Sin, &x).unwrap(),
                };
                vals.push(v);
            }
            let outs: Vec<Value> = (0..rng.below(3) + 1)
                .map(|_| vals[3 + rng.below(vals.len() - 3)].clone())
                .collect();
            let before = crate::optimise::tests::numbered(&outs);
            let after = build_arena(&outs);
            assert!(steps(&after) <= steps(&before), "{:?}", after.nodes);
            assert!(negations(&after) <= negations(&before), "{:?}", after.nodes);
        }
    }
}
