//! Multiply-add superinstructions (crate::muladd): every fused stencil of the x86_64
//! object rounds each product and the sum as plain `f32` arithmetic does (no fused
//! multiply-add), and programs whose sums of products run as fused steps have the bits of
//! the same programs computed one operation per step.

use copapy_compiler::compile::read_bits;
use copapy_compiler::link::{link, Step};
use copapy_compiler::stencil_db::{StencilDb, ARG_HOLES};
use copapy_compiler::trace::binary;
use copapy_compiler::{Fused, Op, ScalarType, Value};
use copapy_runner::LoadedProgram;

mod common;
use common::{count, run};

static OBJECT: &[u8] = include_bytes!("../../../stencils/x86_64.o");

/// Operands that exercise every rounding case of a product and a sum: signed zeros,
/// the smallest and largest subnormals, products that underflow to subnormals or
/// overflow to infinity (2e20 * 2e20) while the exact sum of two would be finite,
/// infinities and NaN.
const SPECIAL: [f32; 16] = [
    0.0,
    -0.0,
    1.0,
    -1.5,
    0.1,
    3.0,
    1e-45,
    1.175_494_2e-38,
    1e-20,
    2e20,
    -2e20,
    3e38,
    -3e38,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
];

/// What superinstruction `fused` computes, one IEEE operation at a time.
fn reference(fused: Fused, v: &[f32]) -> f32 {
    match fused {
        Fused::Mul2Add => (v[0] * v[1]) + (v[2] * v[3]),
        Fused::Mul2Sub => (v[0] * v[1]) - (v[2] * v[3]),
        Fused::AddMul => v[0] + (v[1] * v[2]),
        Fused::SubMul => v[0] - (v[1] * v[2]),
        Fused::MulSub => (v[0] * v[1]) - v[2],
    }
}

fn same_bits(got: u32, want: f32) -> bool {
    got == want.to_bits() || (f32::from_bits(got).is_nan() && want.is_nan())
}

/// The operand places of a stencil name's place codes (`"r0mm"` → r0, m, m).
fn places(codes: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = codes;
    while !rest.is_empty() {
        let (code, tail) = rest.split_at(if rest.starts_with('m') { 1 } else { 2 });
        out.push(code);
        rest = tail;
    }
    out
}

/// Deterministic operand tuples: every special value in every position, then mixes.
fn tuples(arity: usize) -> Vec<Vec<f32>> {
    let mut out = Vec::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for k in 0..SPECIAL.len() * 24 {
        let mut t = Vec::new();
        for j in 0..arity {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // position j takes value k in the first rounds, random specials after
            let pick = if k < SPECIAL.len() * arity && k / SPECIAL.len() == j {
                k % SPECIAL.len()
            } else {
                (state % SPECIAL.len() as u64) as usize
            };
            t.push(SPECIAL[pick]);
        }
        out.push(t);
    }
    // a product that overflows while the exact difference is zero
    out.push(vec![2e20; arity]);
    out
}

#[test]
fn every_fused_stencil_rounds_like_separate_f32_operations() {
    let db = StencilDb::parse(OBJECT).expect("stencils/x86_64.o parses");
    let mut stencils = 0;
    for fused in Fused::ALL {
        let prefix = format!("st_{}_f_", fused.stencil_name());
        for st in db.stencils().iter().filter(|s| s.name.starts_with(&prefix)) {
            stencils += 1;
            let (codes, dst) = st.name[prefix.len()..].split_once('_').expect("places_dst");
            let places = places(codes);
            assert_eq!(places.len(), fused.arity(), "{}", st.name);
            // one program per stencil: per tuple, load the register operands, run the
            // stencil with the memory operands in their holes, store the result
            let mut data = Vec::new();
            let mut steps = Vec::new();
            let mut outs = Vec::new();
            let cases = tuples(fused.arity());
            for case in &cases {
                let mut args = [0u32; ARG_HOLES];
                for (k, (&v, &place)) in case.iter().zip(&places).enumerate() {
                    let at = data.len() as u32;
                    data.extend_from_slice(&v.to_le_bytes());
                    if place == "m" {
                        args[k] = at;
                    } else {
                        let load = db.id(&format!("st_copy_f_m_{place}")).unwrap();
                        steps.push(Step::new(load, Some(at)));
                    }
                }
                steps.push(Step {
                    args,
                    ..Step::new(st_id(&db, &st.name), None)
                });
                let out = data.len() as u32;
                data.extend_from_slice(&[0; 4]);
                let store = db.id(&format!("st_store_f_{dst}")).unwrap();
                steps.push(Step::new(store, Some(out)));
                outs.push(out);
            }
            let program = link(&db, &steps, data).expect("links");
            let mut loaded = LoadedProgram::load(&program).expect("loads");
            loaded.run();
            for (case, &out) in cases.iter().zip(&outs) {
                let got = read_bits(loaded.data(), out);
                let want = reference(fused, case);
                assert!(
                    same_bits(got, want),
                    "{}{case:?}: {:e} ({got:#x}), want {want:e} ({:#x})",
                    st.name,
                    f32::from_bits(got),
                    want.to_bits()
                );
            }
        }
    }
    assert!(
        stencils >= 40,
        "only {stencils} fused stencils in the object"
    );
}

fn st_id(db: &StencilDb, name: &str) -> copapy_compiler::stencil_db::StencilId {
    db.id(name).unwrap_or_else(|| panic!("no stencil {name}"))
}

fn input(x: f32) -> Value {
    Value::input(ScalarType::Float, x.to_bits())
}

fn fused_steps(names: &[String]) -> usize {
    Fused::ALL
        .iter()
        .map(|f| count(names, &format!("st_{}_f_", f.stencil_name())))
        .sum()
}

#[test]
fn sums_of_products_run_fused_with_the_bits_of_the_separate_steps() {
    // one program of every shape over every operand tuple, and the same program with
    // the products kept as outputs too (computed one step each, then summed)
    let mul = |x: &Value, y: &Value| binary(Op::Mul, x, y).unwrap();
    let mut sums = Vec::new();
    let mut products = Vec::new();
    let mut wants = Vec::new();
    for case in tuples(4) {
        for fused in Fused::ALL {
            // inputs of its own per shape: a product two sums read is never fused
            let [p, q, r, s] = [0, 1, 2, 3].map(|k| input(case[k]));
            let (sum, read) = match fused {
                Fused::Mul2Add | Fused::Mul2Sub => {
                    let (pq, rs) = (mul(&p, &q), mul(&r, &s));
                    let op = if fused == Fused::Mul2Add {
                        Op::Add
                    } else {
                        Op::Sub
                    };
                    (binary(op, &pq, &rs), vec![pq, rs])
                }
                Fused::AddMul | Fused::SubMul => {
                    let qr = mul(&q, &r);
                    let op = if fused == Fused::AddMul {
                        Op::Add
                    } else {
                        Op::Sub
                    };
                    (binary(op, &p, &qr), vec![qr])
                }
                Fused::MulSub => {
                    let pq = mul(&p, &q);
                    (binary(Op::Sub, &pq, &r), vec![pq])
                }
            };
            sums.push(sum.unwrap());
            products.extend(read);
            wants.push((fused, case[..fused.arity()].to_vec()));
        }
    }
    let (fused_bits, names) = run(&sums);
    assert_eq!(fused_steps(&names), sums.len(), "one fused step per sum");
    let kept: Vec<Value> = sums.iter().chain(&products).cloned().collect();
    let (separate, names) = run(&kept);
    assert_eq!(fused_steps(&names), 0, "kept products are computed alone");
    for (k, (fused, operands)) in wants.iter().enumerate() {
        let want = reference(*fused, operands);
        let (got, alone) = (fused_bits[k], separate[k]);
        assert!(
            same_bits(got, want),
            "{fused:?}{operands:?}: {got:#x}, want {want:e}"
        );
        assert!(
            got == alone || (f32::from_bits(alone).is_nan() && want.is_nan()),
            "{fused:?}{operands:?}: fused {got:#x}, separate {alone:#x}"
        );
    }
}

#[test]
fn a_sum_of_products_leaves_the_other_register_to_a_live_value() {
    // IK's shape: `g` is computed, then `l1*s1 + l2*s12` (all in memory), then both are
    // read: the sum takes one register and `g` stays in the other (no store, no reload)
    let (l1, s1, l2, s12, x, y) = (
        input(0.75),
        input(-0.5),
        input(1.25),
        input(0.125),
        input(3.0),
        input(2.0),
    );
    let g = binary(Op::Sub, &x, &binary(Op::Mul, &x, &y).unwrap()).unwrap();
    let dot = binary(
        Op::Add,
        &binary(Op::Mul, &l1, &s1).unwrap(),
        &binary(Op::Mul, &l2, &s12).unwrap(),
    )
    .unwrap();
    let out = binary(Op::Mul, &g, &dot).unwrap();
    let (bits, names) = run(std::slice::from_ref(&out));
    assert_eq!(count(&names, "st_mul2add_f_mmmm_"), 1, "{names:?}");
    assert_eq!(
        count(&names, "st_store_f_"),
        1,
        "only the output is stored: {names:?}"
    );
    let want = (3.0f32 - 3.0f32 * 2.0) * ((0.75f32 * -0.5) + (1.25f32 * 0.125));
    assert_eq!(bits[0], want.to_bits());
}
