//! Reverse-mode differentiation as a graph transform (`cp.grad`).
//!
//! [`grad`] walks the traced graph below `y` once (iteratively: traced loops make graphs
//! hundreds of thousands of nodes deep), keeps only the float nodes on a path from `y` to
//! one of the `wrt` values, and propagates adjoints from `y` down in reverse topological
//! order. Every adjoint is built with [`crate::trace`], so the gradient is an ordinary
//! traced graph: constants fold, identities apply (`g * 1`, `x * 0`), equal subexpressions
//! merge when compiled, and it can itself be differentiated again or used in a later
//! `grad` call (gradient descent unrolled in a traced loop).
//!
//! The adjoint of a `wrt` value is the *total* derivative of `y` with respect to it: paths
//! that reach it through another `wrt` value count too (as Copapy and PyTorch do).
//!
//! Derivative rules, with `g` the adjoint of the result `r`:
//!
//! | operation | to `a` | to `b` |
//! | --- | --- | --- |
//! | `a + b`, `a - b` | `g` | `g`, `-g` |
//! | `a * b` | `g * b` | `g * a` |
//! | `a / b` | `g / b` | `-(g / b) * r` |
//! | `-a` | `-g` | |
//! | `abs(a)` | `g * float(sign(a))` (0 at 0: a subgradient) | |
//! | `sqrt(a)` | `g * (0.5 / r)` | |
//! | `sin(a)`, `cos(a)` | `g * cos(a)`, `-(g * sin(a))` | |
//! | `tan(a)` | `g * (1 + r * r)` | |
//! | `asin(a)`, `acos(a)` | `g / sqrt(1 - a * a)`, its negation | |
//! | `atan(a)` | `g / (1 + a * a)` | |
//! | `exp(a)`, `log(a)` | `g * r`, `g / a` | |
//! | `atan2(a, b)` | `(g / (a*a + b*b)) * b` | `-((g / (a*a + b*b)) * a)` |
//! | `pow(a, b)` | `g * (b * pow(a, b - 1))` | `g * (r * log(a))` |
//! | `a // b` (float) | 0 | 0 |
//! | `a % b` (float) | `g` | `-(g * (a // b))` |
//! | `minimum(a, b)` | `iif(a < b or a != a, g, 0)` | `iif(a < b or a != a, 0, g)` |
//! | `maximum(a, b)` | `iif(a > b or a != a, g, 0)` | `iif(a > b or a != a, 0, g)` |
//! | `iif(c, a, b)` | `iif(c, g, 0)` | `iif(c, 0, g)` (nothing to `c`) |
//!
//! `minimum`/`maximum` send the gradient to the operand they return (NumPy semantics:
//! `a` when it wins or is NaN, else `b`), so on a tie it goes to `b`. Integer constant
//! powers are multiplications after tracing, so the product rule covers them. Comparisons,
//! bitwise operations and everything int- or bool-valued are piecewise constant: no
//! gradient flows through them, nor through an int-to-float conversion.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::graph::{NodeKind, Op, ScalarType, Value};
use crate::trace::{self, TraceError};

const ONE: f32 = 1.0;

fn fconst(x: f32) -> Value {
    Value::constant(ScalarType::Float, x.to_bits())
}

fn is_zero(v: &Value) -> bool {
    v.ty() == ScalarType::Float && v.const_bits().is_some_and(|b| b & 0x7fff_ffff == 0)
}

/// The operands of a float node that a gradient flows into (float operands only).
fn differentiable_operands(v: &Value) -> impl Iterator<Item = &Value> {
    let (first, second): (Option<&Value>, Option<&Value>) = match v.kind() {
        _ if v.ty() != ScalarType::Float => (None, None),
        NodeKind::Const(_) | NodeKind::Input { .. } => (None, None),
        NodeKind::Unary(Op::IntToFloat, _) => (None, None),
        NodeKind::Unary(_, a) => (Some(a), None),
        NodeKind::Binary(Op::FloorDiv, _, _) => (None, None),
        NodeKind::Binary(_, a, b) => (Some(a), Some(b)),
        NodeKind::Select(_, a, b) => (Some(a), Some(b)),
    };
    first
        .into_iter()
        .chain(second)
        .filter(|o| o.ty() == ScalarType::Float)
}

fn describe(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Float => "a float",
        ScalarType::Int => "an int",
        ScalarType::Bool => "a bool",
    }
}

/// The derivatives of `y` with respect to each value of `wrt`, as traced values.
///
/// `y` must be a float value and every `wrt` entry a float value. An entry that `y` does
/// not depend on (or depends on only through int or bool operations) gets the constant 0.
pub fn grad(y: &Value, wrt: &[Value]) -> Result<Vec<Value>, TraceError> {
    if y.ty() != ScalarType::Float {
        return Err(TraceError {
            message: format!(
                "cp.grad needs a float value to differentiate, got {} value; int and bool \
                 values are piecewise constant and have no gradient",
                y.ty().name()
            ),
        });
    }
    for (i, w) in wrt.iter().enumerate() {
        if w.ty() != ScalarType::Float {
            return Err(TraceError {
                message: format!(
                    "cannot differentiate with respect to {} value (entry {i}): gradients exist \
                     only for float values; create the variable as cp.value(x, 'float')",
                    describe(w.ty())
                ),
            });
        }
    }
    let targets: FxHashSet<usize> = wrt.iter().map(Value::id).collect();
    // Nodes older than every wrt value cannot depend on any of them: the walk stops
    // there, so a gradient inside a traced loop costs its own step, not all before it.
    let oldest = wrt.iter().map(Value::seq).min().unwrap_or(u64::MAX);

    // Post-order of the float nodes below y: every operand before its users. References
    // suffice (y keeps every node below it alive), which saves two atomic operations per
    // node: in a traced loop each call walks everything traced before it.
    let mut order: Vec<&Value> = Vec::new();
    let mut relevant: Vec<bool> = Vec::new();
    let mut index: FxHashMap<usize, usize> = FxHashMap::default();
    let mut stack: Vec<(&Value, bool)> = vec![(y, false)];
    while let Some((v, expanded)) = stack.pop() {
        if !expanded {
            if index.contains_key(&v.id()) {
                continue;
            }
            stack.push((v, true));
            for o in differentiable_operands(v) {
                if o.seq() >= oldest && !index.contains_key(&o.id()) {
                    stack.push((o, false));
                }
            }
            continue;
        }
        if index.contains_key(&v.id()) {
            continue;
        }
        let reaches = targets.contains(&v.id())
            || differentiable_operands(v).any(|o| index.get(&o.id()).is_some_and(|&k| relevant[k]));
        index.insert(v.id(), order.len());
        order.push(v);
        relevant.push(reaches);
    }

    let mut adjoint: Vec<Option<Value>> = vec![None; order.len()];
    let root = index[&y.id()];
    if relevant[root] {
        adjoint[root] = Some(fconst(ONE));
    }
    for i in (0..order.len()).rev() {
        if !relevant[i] {
            continue;
        }
        let Some(g) = adjoint[i].take() else {
            continue;
        };
        let node = order[i];
        let mut acc = Accumulator {
            index: &index,
            relevant: &relevant,
            adjoint: &mut adjoint,
        };
        propagate(node, &g, &mut acc)?;
        adjoint[i] = Some(g);
    }

    Ok(wrt
        .iter()
        .map(|w| {
            index
                .get(&w.id())
                .and_then(|&i| adjoint[i].clone())
                .unwrap_or_else(|| fconst(0.0))
        })
        .collect())
}

struct Accumulator<'a> {
    index: &'a FxHashMap<usize, usize>,
    relevant: &'a [bool],
    adjoint: &'a mut [Option<Value>],
}

impl Accumulator<'_> {
    /// Whether a gradient sent to `v` can reach a `wrt` value.
    fn wants(&self, v: &Value) -> bool {
        v.ty() == ScalarType::Float && self.index.get(&v.id()).is_some_and(|&i| self.relevant[i])
    }

    /// Adds `contribution()` to the adjoint of `v`, building it only when `v` needs it.
    fn send(
        &mut self,
        v: &Value,
        contribution: impl FnOnce() -> Result<Value, TraceError>,
    ) -> Result<(), TraceError> {
        if !self.wants(v) {
            return Ok(());
        }
        let c = contribution()?;
        if is_zero(&c) {
            return Ok(());
        }
        let slot = &mut self.adjoint[self.index[&v.id()]];
        *slot = Some(match slot.take() {
            None => c,
            Some(prev) => add(&prev, &c)?,
        });
        Ok(())
    }
}

fn add(a: &Value, b: &Value) -> Result<Value, TraceError> {
    trace::binary(Op::Add, a, b)
}
fn sub(a: &Value, b: &Value) -> Result<Value, TraceError> {
    trace::binary(Op::Sub, a, b)
}
fn mul(a: &Value, b: &Value) -> Result<Value, TraceError> {
    trace::binary(Op::Mul, a, b)
}
fn div(a: &Value, b: &Value) -> Result<Value, TraceError> {
    trace::binary(Op::Div, a, b)
}
fn neg(a: &Value) -> Result<Value, TraceError> {
    trace::unary(Op::Neg, a)
}
fn call(op: Op, a: &Value) -> Result<Value, TraceError> {
    trace::unary(op, a)
}
fn square(a: &Value) -> Result<Value, TraceError> {
    mul(a, a)
}

/// `g` where `cond`, else 0, and the other way round.
fn split(cond: &Value, g: &Value) -> Result<(Value, Value), TraceError> {
    let zero = fconst(0.0);
    Ok((
        trace::select(cond, g, &zero)?,
        trace::select(cond, &zero, g)?,
    ))
}

/// Sends the adjoint `g` of node `r` to its operands.
fn propagate(r: &Value, g: &Value, acc: &mut Accumulator<'_>) -> Result<(), TraceError> {
    match r.kind() {
        NodeKind::Const(_) | NodeKind::Input { .. } => Ok(()),
        NodeKind::Unary(op, a) => {
            let a = a.clone();
            match op {
                Op::Neg => acc.send(&a, || neg(g)),
                Op::Abs => acc.send(&a, || mul(g, &trace::to_float(&trace::sign(&a)?))),
                Op::Sqrt => acc.send(&a, || mul(g, &div(&fconst(0.5), r)?)),
                Op::Sin => acc.send(&a, || mul(g, &call(Op::Cos, &a)?)),
                Op::Cos => acc.send(&a, || neg(&mul(g, &call(Op::Sin, &a)?)?)),
                Op::Tan => acc.send(&a, || mul(g, &add(&fconst(ONE), &square(r)?)?)),
                Op::Asin | Op::Acos => acc.send(&a, || {
                    let root = call(Op::Sqrt, &sub(&fconst(ONE), &square(&a)?)?)?;
                    let d = div(g, &root)?;
                    if *op == Op::Acos {
                        neg(&d)
                    } else {
                        Ok(d)
                    }
                }),
                Op::Atan => acc.send(&a, || div(g, &add(&fconst(ONE), &square(&a)?)?)),
                Op::Exp => acc.send(&a, || mul(g, r)),
                Op::Log => acc.send(&a, || div(g, &a)),
                Op::Tanh => acc.send(&a, || mul(g, &sub(&fconst(ONE), &square(r)?)?)),
                // int source (or not a float operation): no gradient
                _ => Ok(()),
            }
        }
        NodeKind::Binary(op, a, b) => {
            let (a, b) = (a.clone(), b.clone());
            match op {
                Op::Add => {
                    acc.send(&a, || Ok(g.clone()))?;
                    acc.send(&b, || Ok(g.clone()))
                }
                Op::Sub => {
                    acc.send(&a, || Ok(g.clone()))?;
                    acc.send(&b, || neg(g))
                }
                Op::Mul => {
                    acc.send(&a, || mul(g, &b))?;
                    acc.send(&b, || mul(g, &a))
                }
                Op::Div => {
                    let g_over_b = div(g, &b)?;
                    acc.send(&a, || Ok(g_over_b.clone()))?;
                    acc.send(&b, || neg(&mul(&g_over_b, r)?))
                }
                Op::Mod => {
                    acc.send(&a, || Ok(g.clone()))?;
                    acc.send(&b, || neg(&mul(g, &trace::binary(Op::FloorDiv, &a, &b)?)?))
                }
                Op::Atan2 => {
                    if !acc.wants(&a) && !acc.wants(&b) {
                        return Ok(());
                    }
                    let g_over_d = div(g, &add(&square(&a)?, &square(&b)?)?)?;
                    acc.send(&a, || mul(&g_over_d, &b))?;
                    acc.send(&b, || neg(&mul(&g_over_d, &a)?))
                }
                Op::Pow => {
                    acc.send(&a, || {
                        let lower = sub(&b, &fconst(ONE))?;
                        let p = trace::binary(Op::Pow, &a, &lower)?;
                        mul(g, &mul(&b, &p)?)
                    })?;
                    acc.send(&b, || mul(g, &mul(r, &call(Op::Log, &a)?)?))
                }
                Op::Min | Op::Max => {
                    if !acc.wants(&a) && !acc.wants(&b) {
                        return Ok(());
                    }
                    let cmp = if *op == Op::Min { Op::Lt } else { Op::Gt };
                    let wins = trace::binary(cmp, &a, &b)?;
                    let nan = trace::binary(Op::Ne, &a, &a)?;
                    let takes_a = trace::binary(Op::Or, &wins, &nan)?;
                    let (ga, gb) = split(&takes_a, g)?;
                    acc.send(&a, || Ok(ga))?;
                    acc.send(&b, || Ok(gb))
                }
                // FloorDiv and everything not float-valued: piecewise constant
                _ => Ok(()),
            }
        }
        NodeKind::Select(c, a, b) => {
            if !acc.wants(a) && !acc.wants(b) {
                return Ok(());
            }
            let (ga, gb) = split(c, g)?;
            acc.send(a, || Ok(ga))?;
            acc.send(b, || Ok(gb))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold;

    fn input(x: f32) -> Value {
        Value::input(ScalarType::Float, x.to_bits())
    }

    /// Evaluates a graph on the host where every op can be folded or has a std equivalent.
    fn eval(v: &Value) -> f32 {
        let mut memo: FxHashMap<usize, u32> = FxHashMap::default();
        let mut stack = vec![(v.clone(), false)];
        while let Some((n, expanded)) = stack.pop() {
            if memo.contains_key(&n.id()) {
                continue;
            }
            let children: Vec<Value> = match n.kind() {
                NodeKind::Const(_) | NodeKind::Input { .. } => vec![],
                NodeKind::Unary(_, a) => vec![a.clone()],
                NodeKind::Binary(_, a, b) => vec![a.clone(), b.clone()],
                NodeKind::Select(c, a, b) => vec![c.clone(), a.clone(), b.clone()],
            };
            if !expanded {
                stack.push((n.clone(), true));
                for c in children {
                    stack.push((c, false));
                }
                continue;
            }
            let bits = match n.kind() {
                NodeKind::Const(b) => *b,
                NodeKind::Input { init } => *init,
                NodeKind::Unary(op, a) => {
                    let x = memo[&a.id()];
                    fold::unary(*op, a.ty(), x).unwrap_or_else(|| {
                        let f = f32::from_bits(x);
                        match op {
                            Op::Sin => f.sin(),
                            Op::Cos => f.cos(),
                            Op::Log => f.ln(),
                            Op::Exp => f.exp(),
                            Op::Tanh => f.tanh(),
                            _ => panic!("no host evaluation of {op:?}"),
                        }
                        .to_bits()
                    })
                }
                NodeKind::Binary(op, a, b) => {
                    let (x, y) = (memo[&a.id()], memo[&b.id()]);
                    fold::binary(*op, a.ty(), x, y).unwrap_or_else(|| {
                        let (x, y) = (f32::from_bits(x), f32::from_bits(y));
                        match op {
                            Op::Pow => x.powf(y),
                            Op::Atan2 => x.atan2(y),
                            _ => panic!("no host evaluation of {op:?}"),
                        }
                        .to_bits()
                    })
                }
                NodeKind::Select(c, a, b) => {
                    fold::select(memo[&c.id()], memo[&a.id()], memo[&b.id()])
                }
            };
            memo.insert(n.id(), bits);
        }
        f32::from_bits(memo[&v.id()])
    }

    fn b(op: Op, x: &Value, y: &Value) -> Value {
        trace::binary(op, x, y).unwrap()
    }

    #[test]
    fn product_and_quotient() {
        let (x, y) = (input(3.0), input(-2.0));
        let f = b(Op::Div, &b(Op::Mul, &x, &x), &y); // x^2 / y
        let g = grad(&f, &[x.clone(), y.clone()]).unwrap();
        assert_eq!(eval(&g[0]), 2.0 * 3.0 / -2.0);
        assert_eq!(eval(&g[1]), -9.0 / 4.0);
    }

    #[test]
    fn negation_and_subtraction_flip_the_sign() {
        let x = input(1.5);
        let f = b(Op::Sub, &fconst(2.0), &trace::unary(Op::Neg, &x).unwrap()); // 2 - (-x)
        assert_eq!(eval(&grad(&f, std::slice::from_ref(&x)).unwrap()[0]), 1.0);
        let h = trace::unary(Op::Neg, &b(Op::Mul, &x, &x)).unwrap();
        assert_eq!(eval(&grad(&h, &[x]).unwrap()[0]), -3.0);
    }

    #[test]
    fn atan2_takes_y_first() {
        let (y, x) = (input(1.0), input(2.0));
        let f = b(Op::Atan2, &y, &x);
        let g = grad(&f, &[y, x]).unwrap();
        assert!((eval(&g[0]) - 2.0 / 5.0).abs() < 1e-6);
        assert!((eval(&g[1]) + 1.0 / 5.0).abs() < 1e-6);
    }

    #[test]
    fn unrelated_and_constant_gradients_fold() {
        let (x, z) = (input(1.0), input(2.0));
        let f = b(Op::Mul, &x, &fconst(3.0));
        let g = grad(&f, &[x, z]).unwrap();
        assert_eq!(g[0].const_bits(), Some(3.0f32.to_bits()));
        assert_eq!(g[1].const_bits(), Some(0));
        // y itself
        let w = input(5.0);
        assert_eq!(
            grad(&w, std::slice::from_ref(&w)).unwrap()[0].const_bits(),
            Some(1.0f32.to_bits())
        );
    }

    #[test]
    fn int_paths_stop_the_gradient() {
        let x = input(2.5);
        let i = b(Op::FloorDiv, &x, &fconst(1.0));
        let as_int = b(Op::Lt, &x, &fconst(3.0)); // bool
        let f = b(Op::Add, &i, &trace::to_float(&as_int));
        assert_eq!(grad(&f, &[x]).unwrap()[0].const_bits(), Some(0));
    }

    #[test]
    fn int_and_bool_values_are_errors() {
        let x = input(1.0);
        let n = Value::input(ScalarType::Int, 3);
        let err = grad(&n, std::slice::from_ref(&x)).unwrap_err();
        assert!(
            err.message.contains("needs a float value"),
            "{}",
            err.message
        );
        let f = b(Op::Mul, &x, &trace::to_float(&n));
        let err = grad(&f, &[x, n]).unwrap_err();
        assert!(
            err.message.contains("with respect to an int value"),
            "{}",
            err.message
        );
    }

    #[test]
    fn total_derivative_through_another_wrt_value() {
        let x = input(0.5);
        let s = trace::unary(Op::Sin, &x).unwrap();
        let f = b(Op::Mul, &s, &x); // x sin x
        let g = grad(&f, &[x.clone(), s.clone()]).unwrap();
        let want = 0.5f32.sin() + 0.5 * 0.5f32.cos();
        assert!((eval(&g[0]) - want).abs() < 1e-6);
        assert_eq!(eval(&g[1]), 0.5);
    }

    #[test]
    fn deep_graphs_do_not_overflow_the_stack() {
        let x = input(1.0);
        let mut acc = x.clone();
        for _ in 0..200_000 {
            acc = b(
                Op::Add,
                &b(Op::Mul, &acc, &fconst(1.0000001)),
                &fconst(1e-7),
            );
        }
        // every local derivative is a constant, so the whole gradient folds
        let g = grad(&acc, std::slice::from_ref(&x)).unwrap();
        assert!(g[0].const_bits().is_some());
        let y = input(1.0);
        let mut acc = y.clone();
        for _ in 0..200_000 {
            acc = b(Op::Mul, &acc, &y);
        }
        let g = grad(&acc, std::slice::from_ref(&y)).unwrap();
        drop(acc);
        drop(g);
    }

    #[test]
    fn gradient_of_a_gradient() {
        let x = input(0.7);
        let f = trace::unary(Op::Sin, &b(Op::Mul, &x, &x)).unwrap(); // sin(x^2)
        let d1 = grad(&f, std::slice::from_ref(&x)).unwrap().remove(0);
        let d2 = grad(&d1, std::slice::from_ref(&x)).unwrap().remove(0);
        let x2 = 0.49f32;
        let want = 2.0 * x2.cos() - 4.0 * x2 * x2.sin();
        assert!((eval(&d2) - want).abs() < 1e-5, "{} vs {want}", eval(&d2));
    }
}
