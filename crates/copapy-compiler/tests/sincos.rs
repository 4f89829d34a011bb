//! Fused sin and cos (crate::sincos): a program computing both of one value runs one
//! `st_sincos_*` / `st_cossin_*` step instead of two, with the bits of the separate
//! `st_sin_*` and `st_cos_*` programs (each compiled alone, where nothing fuses).

use copapy_compiler::compile::read_bits;
use copapy_compiler::trace::{binary, unary};
use copapy_compiler::{Op, ScalarType, Value};

mod common;
use common::{count, run, run_program};

const XS: [f32; 14] = [
    0.0,
    -0.0,
    1e-30,
    0.5,
    -std::f32::consts::FRAC_PI_4,
    std::f32::consts::FRAC_PI_2,
    3.0,
    -4.712_389,
    100.0,
    511.9,
    512.0,
    1e6,
    f32::INFINITY,
    f32::NAN,
];

#[test]
fn sin_and_cos_of_one_value_fuse_and_keep_the_bits() {
    for x in XS {
        let v = Value::input(ScalarType::Float, x.to_bits());
        let (s, c) = (unary(Op::Sin, &v).unwrap(), unary(Op::Cos, &v).unwrap());
        for (outs, first) in [
            ([s.clone(), c.clone()], "st_sincos_"),
            ([c.clone(), s.clone()], "st_cossin_"),
        ] {
            let (bits, names) = run(&outs);
            assert_eq!(count(&names, first), 1, "{x}: {names:?}");
            assert_eq!(
                count(&names, "st_sin_") + count(&names, "st_cos_"),
                0,
                "{names:?}"
            );
            let (alone_s, _) = run(&[unary(Op::Sin, &v).unwrap()]);
            let (alone_c, _) = run(&[unary(Op::Cos, &v).unwrap()]);
            let want = if first == "st_sincos_" {
                [alone_s[0], alone_c[0]]
            } else {
                [alone_c[0], alone_s[0]]
            };
            assert_eq!(bits, want, "{x}");
        }
    }
}

#[test]
fn a_computed_operand_in_a_register_fuses_and_other_pairs_stay_apart() {
    let (a, b) = (
        Value::input(ScalarType::Float, 0.3f32.to_bits()),
        Value::input(ScalarType::Float, 1.7f32.to_bits()),
    );
    let t = binary(Op::Add, &a, &b).unwrap();
    // sin(t) and cos(t) fuse; sin(a) has no partner; cos(b) has none either
    let outs = [
        unary(Op::Sin, &t).unwrap(),
        unary(Op::Sin, &a).unwrap(),
        unary(Op::Cos, &b).unwrap(),
        unary(Op::Cos, &t).unwrap(),
    ];
    let (bits, names) = run(&outs);
    assert_eq!(
        count(&names, "st_sincos_") + count(&names, "st_cossin_"),
        1,
        "{names:?}"
    );
    assert_eq!(count(&names, "st_sin_"), 1, "{names:?}");
    assert_eq!(count(&names, "st_cos_"), 1, "{names:?}");
    let single = |op, v: &Value| run(&[unary(op, v).unwrap()]).0[0];
    assert_eq!(
        bits,
        vec![
            single(Op::Sin, &t),
            single(Op::Sin, &a),
            single(Op::Cos, &b),
            single(Op::Cos, &t)
        ]
    );
}

#[test]
fn sin_and_cos_of_one_float_array_fuse_into_one_array_step() {
    use copapy_compiler::array;
    // 9 elements: two vector groups of 4 and one element of the scalar tail
    let xs: Vec<u32> = [0.5f32, -3.0, 1e-30, 600.0, 2e6, f32::NAN, -0.0, 7.25, 1.0]
        .iter()
        .map(|x| x.to_bits())
        .collect();
    let a = array::data(ScalarType::Float, xs.clone()).unwrap();
    let run_array = |outs: &[Value]| -> (Vec<Vec<u32>>, Vec<String>) {
        let (at, data, names) = run_program(outs);
        let elements = |start: u32| -> Vec<u32> {
            (0..xs.len() as u32)
                .map(|k| read_bits(&data, start + 4 * k))
                .collect()
        };
        (at.iter().map(|&s| elements(s)).collect(), names)
    };
    let s = array::unary(Op::Sin, &a).unwrap();
    let c = array::unary(Op::Cos, &a).unwrap();
    let (both, names) = run_array(&[c.clone(), s.clone()]);
    assert_eq!(count(&names, "st_arr_sincos_f_a"), 1, "{names:?}");
    assert_eq!(
        count(&names, "st_arr_sin_") + count(&names, "st_arr_cos_"),
        0,
        "{names:?}"
    );
    let (alone_s, names_s) = run_array(&[s]);
    let (alone_c, _) = run_array(&[c]);
    assert_eq!(count(&names_s, "st_arr_sin_f_a"), 1, "{names_s:?}");
    assert_eq!(both, vec![alone_c[0].clone(), alone_s[0].clone()]);
}
