//! Scalar semantics on the host, used to fold constants at trace time.
//!
//! These must give the same bits as the stencils (`stencils/`), which follow NumPy
//! float32/int32: a folded expression and a compiled one may never disagree.
//! Transcendental functions (sin, cos) are not folded: their bits come from our
//! own math library, which only exists as stencil code.

use crate::graph::{Op, ScalarType};

/// Folds `op(a)` on constant bits. `None` when the operation is not folded on the host.
pub fn unary(op: Op, ty: ScalarType, a: u32) -> Option<u32> {
    match ty {
        ScalarType::Float => float_unary(op, a),
        ScalarType::Int | ScalarType::Bool => int_unary(op, a as i32),
    }
}

// Every op is named in these matches (no `_` arm), so an op added to the table
// (stencils/optable.py) does not build until someone decides how it folds.

fn float_unary(op: Op, a: u32) -> Option<u32> {
    let x = f32::from_bits(a);
    let r = match op {
        Op::Neg => return Some(a ^ 0x8000_0000),
        Op::Abs => return Some(a & 0x7fff_ffff),
        Op::Sqrt => x.sqrt(),
        // Rust's float to int `as` is the documented rule: toward 0, NaN 0, saturating
        Op::FloatToInt => return Some((x as i32) as u32),
        Op::ToByte => return Some(u32::from(x as u8)),
        // our own math library: its bits exist only as stencil code
        Op::Sin | Op::Cos | Op::Tan | Op::Asin | Op::Acos | Op::Atan | Op::Exp | Op::Log => {
            return None
        }
        Op::Tanh | Op::Sigmoid => return None,
        // int operand only, or binary
        Op::IntToFloat
        | Op::Add
        | Op::Sub
        | Op::Mul
        | Op::Div
        | Op::FloorDiv
        | Op::Mod
        | Op::And
        | Op::Or
        | Op::Xor
        | Op::Shl
        | Op::Shr
        | Op::Atan2
        | Op::Pow
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Eq
        | Op::Ne
        | Op::Min
        | Op::Max => return None,
    };
    Some(r.to_bits())
}

fn int_unary(op: Op, x: i32) -> Option<u32> {
    match op {
        Op::Neg => Some(x.wrapping_neg() as u32),
        Op::Abs => Some(x.wrapping_abs() as u32),
        Op::IntToFloat => Some((x as f32).to_bits()),
        Op::ToByte => Some(x.clamp(0, 255) as u32),
        // float operand only, or binary
        Op::FloatToInt
        | Op::Sqrt
        | Op::Sin
        | Op::Cos
        | Op::Tan
        | Op::Asin
        | Op::Acos
        | Op::Atan
        | Op::Exp
        | Op::Log
        | Op::Tanh
        | Op::Sigmoid
        | Op::Add
        | Op::Sub
        | Op::Mul
        | Op::Div
        | Op::FloorDiv
        | Op::Mod
        | Op::And
        | Op::Or
        | Op::Xor
        | Op::Shl
        | Op::Shr
        | Op::Atan2
        | Op::Pow
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Eq
        | Op::Ne
        | Op::Min
        | Op::Max => None,
    }
}

/// `cond ? a : b` on bit patterns.
pub fn select(cond: u32, a: u32, b: u32) -> u32 {
    if cond != 0 {
        a
    } else {
        b
    }
}

/// Folds `op(a, b)` where both operands have type `ty` (the operand type, not the result type).
pub fn binary(op: Op, ty: ScalarType, a: u32, b: u32) -> Option<u32> {
    match ty {
        ScalarType::Float => float_binary(op, f32::from_bits(a), f32::from_bits(b)),
        ScalarType::Int | ScalarType::Bool => int_binary(op, a as i32, b as i32).map(|v| v as u32),
    }
}

fn float_binary(op: Op, x: f32, y: f32) -> Option<u32> {
    let bool_bits = |c: bool| Some(c as u32);
    let r = match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div => x / y,
        Op::FloorDiv => divmod(x, y).0,
        Op::Mod => divmod(x, y).1,
        Op::Lt => return bool_bits(x < y),
        Op::Le => return bool_bits(x <= y),
        Op::Gt => return bool_bits(x > y),
        Op::Ge => return bool_bits(x >= y),
        Op::Eq => return bool_bits(x == y),
        Op::Ne => return bool_bits(x != y),
        Op::Min => {
            if x < y || x.is_nan() {
                x
            } else {
                y
            }
        }
        Op::Max => {
            if x > y || x.is_nan() {
                x
            } else {
                y
            }
        }
        // our own math library (stencil code only), or int only
        Op::Atan2 | Op::Pow => return None,
        Op::And | Op::Or | Op::Xor | Op::Shl | Op::Shr => return None,
        // unary
        Op::Neg
        | Op::Abs
        | Op::Sqrt
        | Op::Sin
        | Op::Cos
        | Op::Tan
        | Op::Asin
        | Op::Acos
        | Op::Atan
        | Op::Exp
        | Op::Log
        | Op::Tanh
        | Op::Sigmoid
        | Op::IntToFloat
        | Op::FloatToInt
        | Op::ToByte => return None,
    };
    Some(r.to_bits())
}

/// NumPy's `npy_divmodf`: floor division and remainder with the sign of the divisor.
pub fn divmod(a: f32, b: f32) -> (f32, f32) {
    let mut m = a % b; // Rust's `%` on f32 is the exact C fmodf
    if b == 0.0 {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
            div -= 1.0;
        }
    } else {
        m = 0.0f32.copysign(b);
    }
    let floordiv = if div != 0.0 {
        let mut f = div.floor();
        if div - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        0.0f32.copysign(a / b)
    };
    (floordiv, m)
}

fn int_binary(op: Op, x: i32, y: i32) -> Option<i32> {
    Some(match op {
        Op::Add => x.wrapping_add(y),
        Op::Sub => x.wrapping_sub(y),
        Op::Mul => x.wrapping_mul(y),
        Op::FloorDiv => int_floordiv(x, y),
        Op::Mod => int_mod(x, y),
        Op::And => x & y,
        Op::Or => x | y,
        Op::Xor => x ^ y,
        Op::Shl => {
            if (y as u32) < 32 {
                ((x as u32) << y) as i32
            } else {
                0
            }
        }
        Op::Shr => {
            if (y as u32) < 32 {
                x >> y
            } else if x < 0 {
                -1
            } else {
                0
            }
        }
        Op::Lt => (x < y) as i32,
        Op::Le => (x <= y) as i32,
        Op::Gt => (x > y) as i32,
        Op::Ge => (x >= y) as i32,
        Op::Eq => (x == y) as i32,
        Op::Ne => (x != y) as i32,
        Op::Min => x.min(y),
        Op::Max => x.max(y),
        // float only
        Op::Div | Op::Atan2 | Op::Pow => return None,
        // unary
        Op::Neg
        | Op::Abs
        | Op::Sqrt
        | Op::Sin
        | Op::Cos
        | Op::Tan
        | Op::Asin
        | Op::Acos
        | Op::Atan
        | Op::Exp
        | Op::Log
        | Op::Tanh
        | Op::Sigmoid
        | Op::IntToFloat
        | Op::FloatToInt
        | Op::ToByte => return None,
    })
}

/// Floor division as NumPy int32: `x // 0 == 0`, `i32::MIN // -1 == i32::MIN`.
pub fn int_floordiv(x: i32, y: i32) -> i32 {
    if y == 0 {
        return 0;
    }
    let q = x.wrapping_div(y);
    if x.wrapping_rem(y) != 0 && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}

/// Remainder as NumPy int32 (sign of the divisor): `x % 0 == 0`, `i32::MIN % -1 == 0`.
pub fn int_mod(x: i32, y: i32) -> i32 {
    if y == 0 {
        return 0;
    }
    let r = x.wrapping_rem(y);
    if r != 0 && ((r < 0) != (y < 0)) {
        r + y
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_division_follows_floor_semantics_and_never_traps() {
        assert_eq!(int_floordiv(-7, 2), -4);
        assert_eq!(int_mod(-7, 2), 1);
        assert_eq!(int_mod(7, -2), -1);
        assert_eq!(int_floordiv(5, 0), 0);
        assert_eq!(int_mod(5, 0), 0);
        assert_eq!(int_floordiv(i32::MIN, -1), i32::MIN);
        assert_eq!(int_mod(i32::MIN, -1), 0);
    }

    #[test]
    fn casts_follow_the_documented_rule() {
        // docs/math.md "Casts": toward 0, NaN 0, saturating; written out, not `as`
        let ftoi = |x: f32| unary(Op::FloatToInt, ScalarType::Float, x.to_bits()).unwrap() as i32;
        let cases: [(f32, i32); 12] = [
            (0.0, 0),
            (-0.0, 0),
            (2.9, 2),
            (-2.9, -2),
            (-0.5, 0),
            (f32::NAN, 0),
            (f32::INFINITY, i32::MAX),
            (f32::NEG_INFINITY, i32::MIN),
            (2147483648.0, i32::MAX),
            (-2147483648.0, i32::MIN),
            (2147483520.0, 2147483520),
            (-2147483904.0, i32::MIN),
        ];
        for (x, want) in cases {
            assert_eq!(ftoi(x), want, "ftoi({x})");
        }
        let fbyte = |x: f32| unary(Op::ToByte, ScalarType::Float, x.to_bits()).unwrap();
        for (x, want) in [
            (255.5, 255),
            (254.9, 254),
            (-0.5, 0),
            (-0.0, 0),
            (f32::NAN, 0),
            (f32::INFINITY, 255),
            (f32::NEG_INFINITY, 0),
            (1e30, 255),
        ] {
            assert_eq!(fbyte(x), want, "tobyte({x})");
        }
        let ibyte = |x: i32| unary(Op::ToByte, ScalarType::Int, x as u32).unwrap();
        for (x, want) in [
            (-1, 0),
            (0, 0),
            (255, 255),
            (256, 255),
            (i32::MIN, 0),
            (i32::MAX, 255),
        ] {
            assert_eq!(ibyte(x), want, "tobyte({x})");
        }
        assert_eq!(unary(Op::FloatToInt, ScalarType::Int, 5), None);
    }

    #[test]
    fn float_divmod_matches_python_floor_semantics() {
        assert_eq!(divmod(-7.5, 2.0), (-4.0, 0.5));
        assert_eq!(divmod(7.5, -2.0), (-4.0, -0.5));
        let (q, m) = divmod(1.0, 0.0);
        assert!(q.is_infinite() && m.is_nan());
        // -0.0 // 5 keeps the sign of the true quotient
        assert!(divmod(-0.0, 5.0).0.is_sign_negative());
    }
}

/// Every folded operation against NumPy's results on edge operands (the table is generated
/// by `tests/reference/gen_fold_cases.py`): the host must give the bits NumPy gives.
#[cfg(test)]
mod numpy_reference {
    use super::*;
    use crate::graph::Op::*;
    use crate::graph::ScalarType::{Float as F, Int as I};

    type Ty = ScalarType;

    include!("../tests/reference/fold_cases.rs");

    fn is_nan_bits(b: u32) -> bool {
        f32::from_bits(b).is_nan()
    }

    fn float_result(op: Op, ty: Ty) -> bool {
        ty == F && !matches!(op, Lt | Le | Gt | Ge | Eq | Ne)
    }

    #[test]
    fn binary_operations_give_numpys_bits() {
        let mut wrong = Vec::new();
        for &(op, ty, a, b, want) in BINARY {
            let got = binary(op, ty, a, b);
            let ok = match got {
                Some(g) if float_result(op, ty) && is_nan_bits(want) => is_nan_bits(g),
                Some(g) => g == want,
                None => false,
            };
            if !ok {
                wrong.push(format!(
                    "{op:?} {ty:?} {a:#x} {b:#x}: {got:x?}, NumPy {want:#x}"
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "{} mismatches:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn unary_operations_give_numpys_bits() {
        let mut wrong = Vec::new();
        for &(op, ty, a, want) in UNARY {
            let got = unary(op, ty, a);
            let ok = match got {
                Some(g) if (ty == F || op == IntToFloat) && is_nan_bits(want) => is_nan_bits(g),
                Some(g) => g == want,
                None => false,
            };
            if !ok {
                wrong.push(format!("{op:?} {ty:?} {a:#x}: {got:x?}, NumPy {want:#x}"));
            }
        }
        assert!(
            wrong.is_empty(),
            "{} mismatches:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn select_picks_by_any_nonzero_condition() {
        assert_eq!(select(1, 7, 9), 7);
        assert_eq!(select(0x8000_0000, 7, 9), 7);
        assert_eq!(select(0, 7, 9), 9);
    }
}
