//! Building graph nodes: type promotion, constant folding and algebraic identities.
//!
//! Every Python operator on a `cp.value` ends up in [`unary`] or [`binary`]. Types follow
//! Copapy: an int (or bool) meeting a float is converted to float first, `/` is always
//! float, comparisons give bool, bitwise operations take ints and bools only. Constants
//! are folded immediately with the same semantics as the stencils ([`crate::fold`]).
//!
//! Identities applied here are exact for every input except the ones the README documents:
//! `x * 0 → 0` and `x - x → 0` assume finite values (they are what make sparse
//! matrices cheap), and `x * 0` is `+0.0` also where IEEE gives `-0.0` (negative `x`).
//! The sum with a zero goes the same way, so the structural zeros `x * 0` leaves (and
//! the zero entries of constant matrices) vanish from sums too: `x + 0.0 → x` and
//! `0.0 - x → -x` give IEEE's value except for the sign of a zero result (`-0.0 + 0.0`
//! is `+0.0`, and `0.0 - 0.0` is not `-0.0`). Every other rewrite keeps the result type
//! and the sign of zero; `-(-x)` cancels only when `x` has the result type (not for a bool).
//! Negations and doublings that need the whole graph to see (`a + (-b)`, `(-a) * b` read
//! by a sum, `(a + a) * c`) are folded after numbering, exactly, by `signs.rs`.

use std::fmt;

use crate::fold;
use crate::graph::{NodeKind, Op, ScalarType, Value};

/// A user error found while tracing: the operation does not exist for these types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TraceError {}

const ONE_F: u32 = 0x3f80_0000;

fn is_float(v: &Value) -> bool {
    v.ty() == ScalarType::Float
}

/// Converts an int or bool value to float (round to nearest); floats pass through.
pub fn to_float(v: &Value) -> Value {
    if is_float(v) {
        return v.clone();
    }
    make_unary(Op::IntToFloat, ScalarType::Float, v)
}

fn make_unary(op: Op, result: ScalarType, a: &Value) -> Value {
    if let Some(bits) = a.const_bits() {
        if let Some(r) = fold::unary(op, a.ty(), bits) {
            return Value::constant(result, r);
        }
    }
    Value::new(result, NodeKind::Unary(op, a.clone()))
}

/// `op(a)` for a unary operation, with promotion and folding.
pub fn unary(op: Op, a: &Value) -> Result<Value, TraceError> {
    match op {
        Op::Neg => {
            // -(-x) is x only if x already has the result type: -(-True) is the int 1
            if let NodeKind::Unary(Op::Neg, inner) = a.kind() {
                if inner.ty() == a.ty() {
                    return Ok(inner.clone());
                }
            }
            Ok(make_unary(op, arith_type(a.ty()), a))
        }
        Op::Abs => Ok(make_unary(op, arith_type(a.ty()), a)),
        Op::Sqrt
        | Op::Sin
        | Op::Cos
        | Op::Tan
        | Op::Asin
        | Op::Acos
        | Op::Atan
        | Op::Exp
        | Op::Log
        | Op::Tanh
        | Op::Sigmoid => Ok(make_unary(op, ScalarType::Float, &to_float(a))),
        Op::IntToFloat => Ok(to_float(a)),
        Op::FloatToInt if is_float(a) => Ok(make_unary(op, ScalarType::Int, a)),
        Op::ToByte => Ok(make_unary(op, ScalarType::Int, a)),
        _ => Err(TraceError {
            message: format!("{op:?} is not a unary operation"),
        }),
    }
}

/// `v` converted to `ty` (`cp.cast`): int to float rounds to nearest; float to int
/// truncates toward 0, NaN gives 0 and out-of-range values saturate; to bool is
/// `v != 0` (so NaN is true, as NumPy); bool to int keeps the 0/1.
pub fn cast(v: &Value, ty: ScalarType) -> Result<Value, TraceError> {
    match (v.ty(), ty) {
        (from, to) if from == to => Ok(v.clone()),
        (_, ScalarType::Float) => Ok(to_float(v)),
        (ScalarType::Float, ScalarType::Int) => unary(Op::FloatToInt, v),
        // bool + 0 is the int 0/1 (an operand of the result type is never returned as is)
        (_, ScalarType::Int) => binary(Op::Add, v, &Value::constant(ScalarType::Int, 0)),
        (from, ScalarType::Bool) => binary(Op::Ne, v, &Value::constant(from, 0)),
    }
}

/// Result type of arithmetic on a single type: bool behaves as int, as in Python.
fn arith_type(t: ScalarType) -> ScalarType {
    match t {
        ScalarType::Bool => ScalarType::Int,
        t => t,
    }
}

/// `op(a, b)` for a binary operation, with promotion, folding and identities.
pub fn binary(op: Op, a: &Value, b: &Value) -> Result<Value, TraceError> {
    let (operands, result) = promote(op, a.ty(), b.ty())?;
    let (a, b) = if operands == ScalarType::Float {
        (to_float(a), to_float(b))
    } else {
        (a.clone(), b.clone())
    };
    Ok(simplify_binary(op, result, &a, &b))
}

/// The type promotion of binary `op` on operands of types `a` and `b`: the type both
/// operands are converted to and the result's type, read from the op table
/// (`stencils/optable.py`: its stencil types and flags). A float operand makes both
/// float, which needs float stencils (bitwise operations have none: an error); ints and
/// bools stay ints where the op has int stencils and become floats where it has not
/// (`/`, `atan2`, `pow`). Comparisons give a bool; two bools give a bool for the ops
/// that keep bools (`&`, `|`, `^`, `minimum`, `maximum`), an int otherwise.
pub fn promote(
    op: Op,
    a: ScalarType,
    b: ScalarType,
) -> Result<(ScalarType, ScalarType), TraceError> {
    if !Op::BINARY.contains(&op) {
        return Err(TraceError {
            message: format!("{op:?} is not a binary operation"),
        });
    }
    let any_float = a == ScalarType::Float || b == ScalarType::Float;
    let operands = if any_float || !op.takes_int() {
        if !op.takes_float() {
            return Err(TraceError {
                message: format!(
                    "bitwise operation '{}' needs int or bool operands, got {} and {}; \
                     convert floats explicitly or use comparisons",
                    op.python(),
                    a.name(),
                    b.name()
                ),
            });
        }
        ScalarType::Float
    } else {
        ScalarType::Int
    };
    let both_bool = a == ScalarType::Bool && b == ScalarType::Bool;
    let result =
        if op.is_comparison() || (operands == ScalarType::Int && both_bool && op.keeps_bool()) {
            ScalarType::Bool
        } else {
            operands
        };
    Ok((operands, result))
}

/// Constant folding and identities on operands that already have matching types.
fn simplify_binary(op: Op, result: ScalarType, a: &Value, b: &Value) -> Value {
    let operand_ty = a.ty();
    if let (Some(x), Some(y)) = (a.const_bits(), b.const_bits()) {
        if let Some(r) = fold::binary(op, operand_ty, x, y) {
            return Value::constant(result, r);
        }
    }
    if let Some(v) = identity(op, result, a, b) {
        return v;
    }
    Value::new(result, NodeKind::Binary(op, a.clone(), b.clone()))
}

/// Rewrites that need no new arithmetic; `None` when none applies.
fn identity(op: Op, result: ScalarType, a: &Value, b: &Value) -> Option<Value> {
    let float = a.ty() == ScalarType::Float;
    let one_bits = if float { ONE_F } else { 1 };
    let is = |v: &Value, bits: u32| v.const_bits() == Some(bits);
    // +0.0 or -0.0 for floats, 0 otherwise
    let is_zero = |v: &Value| match v.const_bits() {
        Some(bits) if float => bits & 0x7fff_ffff == 0,
        Some(bits) => bits == 0,
        None => false,
    };
    // Keeps the result type when an operand is returned as it is (bool & bool stays bool,
    // but bool + 0 must become int).
    let same = |v: &Value| -> Option<Value> {
        if v.ty() == result {
            Some(v.clone())
        } else {
            None
        }
    };
    let zero = || Some(Value::constant(result, 0));
    match op {
        Op::Add => {
            // x + (-0.0) == x for every x, including -0.0 and NaN; x + 0.0 == x except
            // that -0.0 + 0.0 is +0.0: a structural zero (`0 * x`, a zero entry of a
            // constant matrix, the 0 that starts `sum`) vanishes like `x * 0`, documented
            // with it (the sign of a zero result may differ from IEEE)
            if is_zero(b) {
                return same(a);
            }
            if is_zero(a) {
                return same(b);
            }
            None
        }
        Op::Sub => {
            if is_zero(b) {
                return same(a);
            }
            if a.ptr_eq(b) {
                return zero();
            }
            // 0 - x is -x; for floats up to the sign of a zero result (0.0 - 0.0 is +0.0)
            if is_zero(a) {
                return unary(Op::Neg, b).ok();
            }
            None
        }
        Op::Mul => {
            if is(b, one_bits) {
                return same(a);
            }
            if is(a, one_bits) {
                return same(b);
            }
            if is_zero(a) || is_zero(b) {
                return zero();
            }
            None
        }
        Op::Div | Op::FloorDiv if !float || op == Op::Div => {
            if is(b, one_bits) {
                return same(a);
            }
            None
        }
        Op::Mod if !float && is(b, 1) => zero(),
        Op::And if is(a, 0) || is(b, 0) => zero(),
        Op::Or | Op::Xor => {
            if is(b, 0) {
                return same(a);
            }
            if is(a, 0) {
                return same(b);
            }
            if op == Op::Xor && a.ptr_eq(b) {
                return zero();
            }
            None
        }
        Op::Shl | Op::Shr if is(b, 0) => same(a),
        // pow(x, 1) == x and pow(x, 0) == 1 for every x, NaN included (C99 F.10.4.4)
        Op::Pow if is(b, ONE_F) => same(a),
        Op::Pow if is(b, 0) || is(b, 0x8000_0000) => Some(Value::constant(result, ONE_F)),
        Op::Min | Op::Max if a.ptr_eq(b) => same(a),
        _ => None,
    }
}

/// `cond ? a : b` without branching (Copapy's `iif`): `cond` is any value, true when
/// non-zero. Operands are promoted as in arithmetic. For floats the result is a bit
/// selection, so a NaN or inf in the operand not taken never reaches the result; ints
/// use `b ^ ((a ^ b) & -cond)`, which is exact.
pub fn select(cond: &Value, a: &Value, b: &Value) -> Result<Value, TraceError> {
    let cond = if cond.ty() == ScalarType::Bool {
        cond.clone()
    } else {
        let zero = Value::constant(cond.ty(), 0);
        binary(Op::Ne, cond, &zero)?
    };
    let any_float = is_float(a) || is_float(b);
    let both_bool = a.ty() == ScalarType::Bool && b.ty() == ScalarType::Bool;
    let (a, b) = if any_float {
        (to_float(a), to_float(b))
    } else {
        (a.clone(), b.clone())
    };
    if let Some(c) = cond.const_bits() {
        let picked = if c != 0 { a } else { b };
        return Ok(
            if any_float || both_bool || picked.ty() == ScalarType::Int {
                picked
            } else {
                // a bool picked where the other side is an int: the result is an int
                binary(Op::Add, &picked, &Value::constant(ScalarType::Int, 0))?
            },
        );
    }
    if a.ptr_eq(&b) {
        return Ok(a);
    }
    if any_float {
        return Ok(Value::new(ScalarType::Float, NodeKind::Select(cond, a, b)));
    }
    if both_bool {
        let not_cond = binary(Op::Xor, &cond, &Value::constant(ScalarType::Bool, 1))?;
        let take_a = binary(Op::And, &a, &cond)?;
        let take_b = binary(Op::And, &b, &not_cond)?;
        return binary(Op::Or, &take_a, &take_b);
    }
    let mask = unary(Op::Neg, &cond)?; // 0 or -1
    let diff = binary(Op::Xor, &a, &b)?;
    let picked = binary(Op::And, &diff, &mask)?;
    binary(Op::Xor, &b, &picked)
}

/// Sign of `x` as an int: 1, 0 or -1 (0 for NaN), as Copapy's `sign`.
pub fn sign(x: &Value) -> Result<Value, TraceError> {
    let zero = Value::constant(x.ty(), 0);
    let pos = binary(Op::Gt, x, &zero)?;
    let neg = binary(Op::Lt, x, &zero)?;
    binary(Op::Sub, &pos, &neg)
}

/// `x ** n` for an integer constant `n`, as multiplications.
///
/// `n` from 1 to 7 multiplies left to right (`((x*x)*x)…`), exactly as Copapy does, so
/// float results match it bit for bit; larger `n` uses square-and-multiply (fewer
/// operations). `x ** 0` is 1 of x's type; a negative `n` gives `1 / x ** -n` (float).
pub fn powi(x: &Value, n: i64) -> Result<Value, TraceError> {
    if n < 0 {
        let denom = powi(x, n.checked_neg().ok_or_else(|| too_large(n))?)?;
        let one = Value::constant(ScalarType::Float, ONE_F);
        return binary(Op::Div, &one, &denom);
    }
    if n == 0 {
        return Ok(if is_float(x) {
            Value::constant(ScalarType::Float, ONE_F)
        } else {
            Value::constant(ScalarType::Int, 1)
        });
    }
    if n > i64::from(u32::MAX) {
        return Err(too_large(n));
    }
    if n == 1 && x.ty() == ScalarType::Bool {
        // True ** 1 is the int 1, as in Python
        return binary(Op::Add, x, &Value::constant(ScalarType::Int, 0));
    }
    if n < 8 {
        let mut acc = x.clone();
        for _ in 1..n {
            acc = binary(Op::Mul, &acc, x)?;
        }
        return Ok(acc);
    }
    let mut result: Option<Value> = None;
    let mut base = x.clone();
    let mut e = n;
    loop {
        if e & 1 == 1 {
            result = Some(match result {
                None => base.clone(),
                Some(r) => binary(Op::Mul, &r, &base)?,
            });
        }
        e >>= 1;
        if e == 0 {
            break;
        }
        base = binary(Op::Mul, &base, &base)?;
    }
    Ok(result.expect("n >= 8 has a set bit"))
}

fn too_large(n: i64) -> TraceError {
    TraceError {
        message: format!("exponent {n} is too large; use an exponent below 2**32 in magnitude"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The promotion the table gives, spelled out for every binary op as NumPy's rules
    /// for float32/int32/bool would have it.
    #[test]
    fn promotion_follows_the_numpy_rules() {
        use ScalarType::{Bool as B, Float as F, Int as I};
        let want = |op: Op, a: ScalarType, b: ScalarType| -> Option<(ScalarType, ScalarType)> {
            let float = a == F || b == F;
            let both_bool = a == B && b == B;
            Some(match op {
                Op::Add | Op::Sub | Op::Mul | Op::FloorDiv | Op::Mod => {
                    if float {
                        (F, F)
                    } else {
                        (I, I)
                    }
                }
                Op::Div | Op::Atan2 | Op::Pow => (F, F),
                Op::Min | Op::Max if float => (F, F),
                Op::Min | Op::Max => (I, if both_bool { B } else { I }),
                Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne => {
                    (if float { F } else { I }, B)
                }
                _ if float => return None,
                Op::And | Op::Or | Op::Xor => (I, if both_bool { B } else { I }),
                _ => (I, I),
            })
        };
        for op in Op::BINARY {
            for a in [F, I, B] {
                for b in [F, I, B] {
                    assert_eq!(promote(op, a, b).ok(), want(op, a, b), "{op:?} {a:?} {b:?}");
                }
            }
        }
        assert!(promote(Op::Neg, F, F).is_err());
    }

    fn f(x: f32) -> Value {
        Value::constant(ScalarType::Float, x.to_bits())
    }

    #[test]
    fn constants_fold() {
        let v = binary(Op::Add, &f(1.5), &f(2.25)).unwrap();
        assert_eq!(v.const_bits(), Some(3.75f32.to_bits()));
    }

    #[test]
    fn int_meets_float_becomes_float() {
        let i = Value::input(ScalarType::Int, 3);
        let v = binary(Op::Add, &i, &f(0.5)).unwrap();
        assert_eq!(v.ty(), ScalarType::Float);
        assert!(
            matches!(v.kind(), NodeKind::Binary(Op::Add, a, _) if matches!(a.kind(), NodeKind::Unary(Op::IntToFloat, _)))
        );
    }

    #[test]
    fn multiply_by_one_and_zero() {
        let x = Value::input(ScalarType::Float, 0);
        assert!(binary(Op::Mul, &x, &f(1.0)).unwrap().ptr_eq(&x));
        assert_eq!(binary(Op::Mul, &f(0.0), &x).unwrap().const_bits(), Some(0));
    }

    #[test]
    fn structural_zeros_vanish_from_sums() {
        let x = Value::input(ScalarType::Float, 0);
        for zero in [f(0.0), f(-0.0)] {
            assert!(binary(Op::Add, &x, &zero).unwrap().ptr_eq(&x));
            assert!(binary(Op::Add, &zero, &x).unwrap().ptr_eq(&x));
            assert!(binary(Op::Sub, &x, &zero).unwrap().ptr_eq(&x));
        }
        // the zero a product with a constant zero left behind
        let y = Value::input(ScalarType::Float, 0);
        let product = binary(Op::Mul, &f(0.0), &y).unwrap();
        assert!(binary(Op::Add, &x, &product).unwrap().ptr_eq(&x));
        // an int 0 (Python's `sum` starts with one) meeting a float
        let int_zero = Value::constant(ScalarType::Int, 0);
        assert!(binary(Op::Add, &int_zero, &x).unwrap().ptr_eq(&x));
    }

    #[test]
    fn double_negation_cancels() {
        let x = Value::input(ScalarType::Float, 0);
        let n = unary(Op::Neg, &unary(Op::Neg, &x).unwrap()).unwrap();
        assert!(n.ptr_eq(&x));
        let i = Value::input(ScalarType::Int, 0);
        let n = unary(Op::Neg, &unary(Op::Neg, &i).unwrap()).unwrap();
        assert!(n.ptr_eq(&i));
    }

    #[test]
    fn double_negation_of_a_bool_is_an_int() {
        let b = Value::input(ScalarType::Bool, 1);
        let n = unary(Op::Neg, &unary(Op::Neg, &b).unwrap()).unwrap();
        assert_eq!(n.ty(), ScalarType::Int);
        assert!(!n.ptr_eq(&b));
        assert_eq!(powi(&b, 1).unwrap().ty(), ScalarType::Int);
    }

    #[test]
    fn zero_minus_x_is_a_negation() {
        let x = Value::input(ScalarType::Float, 0);
        let d = binary(Op::Sub, &f(0.0), &x).unwrap();
        assert!(matches!(d.kind(), NodeKind::Unary(Op::Neg, _)));
        // 0 - (-x) is x
        assert!(binary(Op::Sub, &f(0.0), &d).unwrap().ptr_eq(&x));
        let i = Value::input(ScalarType::Int, 0);
        let d = binary(Op::Sub, &Value::constant(ScalarType::Int, 0), &i).unwrap();
        assert!(matches!(d.kind(), NodeKind::Unary(Op::Neg, _)));
    }

    #[test]
    fn identities_that_would_change_the_type_are_not_applied() {
        let b = Value::input(ScalarType::Bool, 1);
        let int = |v: i32| Value::constant(ScalarType::Int, v as u32);
        for (op, c) in [
            (Op::Mul, 1),
            (Op::Or, 0),
            (Op::Xor, 0),
            (Op::Shl, 0),
            (Op::Shr, 0),
            (Op::FloorDiv, 1),
        ] {
            let v = binary(op, &b, &int(c)).unwrap();
            assert_eq!(v.ty(), ScalarType::Int, "{op:?}");
            assert!(!v.ptr_eq(&b), "{op:?}");
        }
    }

    #[test]
    fn x_minus_x_and_xor_self_are_zero() {
        let x = Value::input(ScalarType::Int, 0);
        assert_eq!(binary(Op::Sub, &x, &x).unwrap().const_bits(), Some(0));
        assert_eq!(binary(Op::Xor, &x, &x).unwrap().const_bits(), Some(0));
    }

    #[test]
    fn bool_identities_keep_the_result_type() {
        let b = Value::input(ScalarType::Bool, 1);
        let zero = Value::constant(ScalarType::Int, 0);
        let v = binary(Op::Add, &b, &zero).unwrap();
        assert_eq!(v.ty(), ScalarType::Int);
    }

    #[test]
    fn bitwise_on_floats_is_an_error() {
        let x = Value::input(ScalarType::Float, 0);
        let err = binary(Op::And, &x, &x).unwrap_err();
        assert!(err.message.contains("int or bool"));
    }

    #[test]
    fn small_powers_multiply_left_to_right() {
        let x = Value::input(ScalarType::Float, 0);
        let p = powi(&x, 3).unwrap();
        match p.kind() {
            NodeKind::Binary(Op::Mul, l, r) => {
                assert!(r.ptr_eq(&x));
                assert!(matches!(l.kind(), NodeKind::Binary(Op::Mul, _, _)));
            }
            _ => panic!("expected a multiplication"),
        }
        assert_eq!(powi(&x, 0).unwrap().const_bits(), Some(ONE_F));
    }
}
