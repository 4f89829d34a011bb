//! Packed math (crate::pack): independent scalar calls of one function run four to a
//! `st_pack4_*` step on x86_64, each with the bits of the same call compiled alone;
//! calls that need each other's results stay scalar.

use copapy_compiler::trace::{binary, unary};
use copapy_compiler::{Op, ScalarType, Value};

mod common;
use common::{count, run};

fn input(x: f32) -> Value {
    Value::input(ScalarType::Float, x.to_bits())
}

const XS: [f32; 10] = [
    0.0,
    -0.0,
    1e-30,
    0.5,
    -3.25,
    9.6,
    100.0,
    f32::INFINITY,
    f32::NAN,
    -1.0e6,
];

/// The bits of `op(x)` in a program of that one call.
fn alone(op: Op, x: &Value) -> u32 {
    run(&[unary(op, x).unwrap()]).0[0]
}

#[test]
fn ten_independent_calls_run_as_three_packed_steps_with_the_scalar_bits() {
    for op in [Op::Tanh, Op::Exp, Op::Sin, Op::Atan, Op::Log] {
        let xs: Vec<Value> = XS.iter().map(|&x| input(x)).collect();
        let outs: Vec<Value> = xs.iter().map(|x| unary(op, x).unwrap()).collect();
        let (bits, names) = run(&outs);
        let name = format!("st_pack4_{}_f", op.stencil_name());
        assert_eq!(count(&names, &name), 3, "{names:?}");
        let scalar = format!("st_{}_f_", op.stencil_name());
        assert_eq!(count(&names, &scalar), 0, "{names:?}");
        let want: Vec<u32> = xs.iter().map(|x| alone(op, x)).collect();
        for (k, (&g, &w)) in bits.iter().zip(&want).enumerate() {
            let both_nan = f32::from_bits(g).is_nan() && f32::from_bits(w).is_nan();
            assert!(g == w || both_nan, "{op:?}({}): {g:#x} != {w:#x}", XS[k]);
        }
    }
}

#[test]
fn sin_and_cos_pairs_pack_as_lanes_of_the_fused_stencil() {
    let xs: Vec<Value> = XS[..5].iter().map(|&x| input(x)).collect();
    // computed operands: spilled straight into their lanes
    let ts: Vec<Value> = xs
        .iter()
        .map(|x| binary(Op::Mul, x, &input(1.5)).unwrap())
        .collect();
    let outs: Vec<Value> = ts
        .iter()
        .flat_map(|t| [unary(Op::Cos, t).unwrap(), unary(Op::Sin, t).unwrap()])
        .collect();
    let (bits, names) = run(&outs);
    // four pairs in one step; the fifth alone keeps the scalar fused pair
    assert_eq!(count(&names, "st_pack4_sincos_f"), 1, "{names:?}");
    assert_eq!(
        count(&names, "st_sincos_") + count(&names, "st_cossin_"),
        1,
        "{names:?}"
    );
    let want: Vec<u32> = ts
        .iter()
        .flat_map(|t| [alone(Op::Cos, t), alone(Op::Sin, t)])
        .collect();
    assert_eq!(bits, want, "{names:?}");
}

#[test]
fn a_chain_of_calls_stays_scalar_and_a_lone_call_changes_nothing() {
    let x = input(0.7);
    let mut v = x.clone();
    for _ in 0..5 {
        v = unary(Op::Tanh, &v).unwrap();
    }
    let (_, names) = run(std::slice::from_ref(&v));
    assert_eq!(count(&names, "st_pack4_"), 0, "{names:?}");
    assert_eq!(count(&names, "st_tanh_f_"), 5, "{names:?}");
    // a lone call among other work: the same steps as before packing existed
    let y = binary(Op::Add, &unary(Op::Exp, &x).unwrap(), &input(2.0)).unwrap();
    let z = unary(Op::Sqrt, &x).unwrap();
    let (_, names) = run(&[y, z]);
    assert_eq!(count(&names, "st_pack4_"), 0, "{names:?}");
}

#[test]
fn calls_that_read_one_operand_twice_and_outputs_read_again_pack() {
    // tanh(a) and tanh(a * a): the product is also an output, so it is copied into its
    // lane and keeps its own slot
    let a = input(-0.4);
    let sq = binary(Op::Mul, &a, &a).unwrap();
    let outs = [
        unary(Op::Tanh, &a).unwrap(),
        unary(Op::Tanh, &sq).unwrap(),
        sq.clone(),
    ];
    let (bits, names) = run(&outs);
    assert_eq!(count(&names, "st_pack4_tanh_f"), 1, "{names:?}");
    assert_eq!(
        bits,
        vec![
            alone(Op::Tanh, &a),
            alone(Op::Tanh, &sq),
            (-0.4f32 * -0.4f32).to_bits()
        ]
    );
}

#[test]
fn lanes_read_inputs_and_earlier_results_where_they_live() {
    // four tanh of the four sines of four inputs: each pack reads its lanes in place
    // (the inputs' slots, then the sin pack's block), so the program is the two packed
    // steps and nothing that loads, stores or copies an operand
    let xs: Vec<Value> = [0.25f32, -1.5, 3.0, 1e-20]
        .iter()
        .map(|&x| input(x))
        .collect();
    let sines: Vec<Value> = xs.iter().map(|x| unary(Op::Sin, x).unwrap()).collect();
    let outs: Vec<Value> = sines.iter().map(|s| unary(Op::Tanh, s).unwrap()).collect();
    let (bits, names) = run(&outs);
    assert_eq!(count(&names, "st_pack4_sin_f"), 1, "{names:?}");
    assert_eq!(count(&names, "st_pack4_tanh_f"), 1, "{names:?}");
    assert_eq!(names.len(), 2, "only the packed steps: {names:?}");
    for (k, x) in xs.iter().enumerate() {
        let chain = unary(Op::Tanh, &unary(Op::Sin, x).unwrap()).unwrap();
        assert_eq!(bits[k], run(&[chain]).0[0], "lane {k}");
    }
}

#[test]
fn ten_binary_calls_run_as_three_packed_steps_with_the_scalar_bits() {
    // atan2 and pow: the first operands read in place, the second ones stored or copied
    // into the result block (inputs, and one call of each reads one value twice)
    for op in [Op::Atan2, Op::Pow] {
        let xs: Vec<Value> = XS.iter().map(|&x| input(x)).collect();
        let ys: Vec<Value> = XS.iter().rev().map(|&y| input(y * 0.5)).collect();
        let mut pairs: Vec<(&Value, &Value)> = xs.iter().zip(&ys).collect();
        pairs[3].1 = &xs[3];
        let outs: Vec<Value> = pairs
            .iter()
            .map(|(x, y)| binary(op, x, y).unwrap())
            .collect();
        let (bits, names) = run(&outs);
        let name = format!("st_pack4_{}_f", op.stencil_name());
        assert_eq!(count(&names, &name), 3, "{names:?}");
        for (k, (x, y)) in pairs.iter().enumerate() {
            let want = run(&[binary(op, x, y).unwrap()]).0[0];
            let both_nan = f32::from_bits(bits[k]).is_nan() && f32::from_bits(want).is_nan();
            assert!(
                bits[k] == want || both_nan,
                "{op:?} lane {k}: {:#x} != {want:#x}",
                bits[k]
            );
        }
    }
}

/// The register-lane form of a packed step's name (`""`, `"_r0"`, `"_r1"`, `"_r0r1"`).
fn form(name: &str) -> &'static str {
    let name = name.strip_suffix(kept(name)).unwrap_or(name);
    ["_r0r1", "_r0", "_r1"]
        .into_iter()
        .find(|f| name.ends_with(f))
        .unwrap_or("")
}

/// The results a sin/cos packed step's name keeps in registers (`""`: lane 0's sine and
/// cosine; crate::pack_outputs).
fn kept(name: &str) -> &'static str {
    ["_s0s1", "_c0c1", "_s0c1", "_s1c0", "_s1c1"]
        .into_iter()
        .find(|k| name.ends_with(k))
        .unwrap_or("")
}

#[test]
fn operands_in_registers_are_passed_by_value_with_the_scalar_bits() {
    // operands computed right before their pack are still in registers there (r0, r1 or
    // both): each register-lane form gives every lane the bits of the call alone
    let (x, y, z) = (input(0.75), input(-2.5), input(1e6));
    let sum = binary(Op::Add, &x, &y).unwrap();
    let prod = binary(Op::Mul, &y, &z).unwrap();
    let square = binary(Op::Mul, &sum, &sum).unwrap();
    // (lane operands, other outputs, the form the schedule reads them in)
    let cases: Vec<(Vec<Value>, Vec<Value>, &str)> = vec![
        (vec![sum.clone(), prod.clone()], vec![], "_r0r1"),
        (vec![sum.clone(), x.clone()], vec![], "_r0"),
        (vec![prod.clone(), sum.clone(), z.clone()], vec![], "_r0r1"),
        (vec![square.clone(), y.clone()], vec![sum.clone()], "_r1"),
    ];
    let unary_outputs = |op: Op, operands: &[Value]| -> Vec<Value> {
        operands.iter().map(|t| unary(op, t).unwrap()).collect()
    };
    let sincos_outputs = |_: Op, operands: &[Value]| -> Vec<Value> {
        operands
            .iter()
            .flat_map(|t| [unary(Op::Sin, t).unwrap(), unary(Op::Cos, t).unwrap()])
            .collect()
    };
    type Outputs<'a> = &'a dyn Fn(Op, &[Value]) -> Vec<Value>;
    let programs: [(Op, Outputs); 4] = [
        (Op::Sin, &unary_outputs),
        (Op::Tanh, &unary_outputs),
        (Op::Exp, &unary_outputs),
        (Op::Cos, &sincos_outputs),
    ];
    for (op, outputs) in programs {
        for (operands, others, want_form) in &cases {
            let outs: Vec<Value> = outputs(op, operands)
                .into_iter()
                .chain(others.clone())
                .collect();
            one_pack_with_the_bits_alone(&outs, want_form, &format!("{op:?}"));
        }
    }
}

#[test]
fn a_sum_computed_beside_a_lane_operand_joins_it_by_value() {
    // IK's step: sin and cos of t1 and t1 + t2, with t2 read again after them: both
    // registers are taken when t1 + t2 is computed, and it goes to the one beside t1
    // (t2 is stored instead of t1), so the pack takes both lanes by value
    let (x, y, z) = (input(0.75), input(-2.5), input(1e6));
    let t1 = binary(Op::Add, &x, &y).unwrap();
    let t2 = binary(Op::Mul, &y, &z).unwrap();
    let t12 = binary(Op::Add, &t1, &t2).unwrap();
    let mut outs = Vec::new();
    for t in [&t1, &t12] {
        outs.extend([unary(Op::Sin, t).unwrap(), unary(Op::Cos, t).unwrap()]);
    }
    outs.push(binary(Op::Mul, &t2, &outs[3]).unwrap());
    one_pack_with_the_bits_alone(&outs, "_r0r1", "sincos");
}

/// Checks that the program of `outs` runs one packed step, in register-lane form
/// `want_form`, and that each output has the bits of a program computing it alone.
fn one_pack_with_the_bits_alone(outs: &[Value], want_form: &str, what: &str) {
    let (bits, names) = run(outs);
    let packs: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("st_pack4_"))
        .collect();
    assert_eq!(packs.len(), 1, "{what}: {names:?}");
    assert_eq!(form(packs[0]), want_form, "{what}: {names:?}");
    let want: Vec<u32> = outs
        .iter()
        .map(|v| run(std::slice::from_ref(v)).0[0])
        .collect();
    assert_eq!(bits, want, "{what}, {want_form}: {names:?}");
}

/// The packed steps among `names`.
fn packs(names: &[String]) -> Vec<&str> {
    names
        .iter()
        .filter(|n| n.starts_with("st_pack4_"))
        .map(String::as_str)
        .collect()
}

#[test]
fn inputs_and_constants_are_read_as_one_range_with_the_scalar_bits() {
    // four inputs (one group), then three inputs and a constant: each group's operands
    // get four consecutive slots, read with one 16-byte load (`_v`); a second group
    // over the first one's inputs reads the same range
    for op in [Op::Sin, Op::Tanh, Op::Log] {
        let xs: Vec<Value> = XS[3..7].iter().map(|&x| input(x)).collect();
        let mut operands = xs.clone();
        operands.extend([input(0.25), input(-7.5), input(3.0)]);
        operands.push(Value::constant(ScalarType::Float, 1.75f32.to_bits()));
        let mut outs: Vec<Value> = operands.iter().map(|x| unary(op, x).unwrap()).collect();
        outs.extend(xs.iter().map(|x| unary(Op::Exp, x).unwrap()));
        let (bits, names) = run(&outs);
        let name = format!("st_pack4_{}_f_v", op.stencil_name());
        assert_eq!(count(&names, &name), 2, "{names:?}");
        assert_eq!(count(&names, "st_pack4_exp_f_v"), 1, "{names:?}");
        assert_eq!(names.len(), 3, "nothing but the packs: {names:?}");
        for (k, out) in outs.iter().enumerate() {
            let want = run(std::slice::from_ref(out)).0[0];
            let both_nan = f32::from_bits(bits[k]).is_nan() && f32::from_bits(want).is_nan();
            assert!(
                bits[k] == want || both_nan,
                "{op:?} output {k}: {:#x} != {want:#x}",
                bits[k]
            );
        }
    }
}

#[test]
fn binary_calls_read_each_side_from_a_range_where_it_can() {
    // (first operands, second operands, the form): inputs on both sides (`_v`), a
    // computed first operand and a shared constant exponent (`_vy`), inputs with
    // computed second operands (`_vx`), computed on both sides (no range)
    let xs: Vec<Value> = [0.5f32, 2.25, 7.0, 0.125]
        .iter()
        .map(|&x| input(x))
        .collect();
    let ys: Vec<Value> = [1.5f32, -2.0, 0.75, 3.0]
        .iter()
        .map(|&y| input(y))
        .collect();
    let scaled = |vs: &[Value], by: f32| -> Vec<Value> {
        vs.iter()
            .map(|v| binary(Op::Mul, v, &input(by)).unwrap())
            .collect()
    };
    let half = Value::constant(ScalarType::Float, 1.5f32.to_bits());
    let cases: Vec<(Vec<Value>, Vec<Value>, &str)> = vec![
        (xs.clone(), ys.clone(), "_v"),
        (scaled(&xs, 3.0), vec![half; 4], "_vy"),
        (xs.clone(), scaled(&ys, 0.5), "_vx"),
        (scaled(&xs, 2.0), scaled(&ys, -1.0), ""),
    ];
    for op in [Op::Pow, Op::Atan2] {
        for (firsts, seconds, form) in &cases {
            let outs: Vec<Value> = firsts
                .iter()
                .zip(seconds)
                .map(|(x, y)| binary(op, x, y).unwrap())
                .collect();
            let (bits, names) = run(&outs);
            let want_name = format!("st_pack4_{}_f{form}", op.stencil_name());
            assert_eq!(packs(&names), [want_name.as_str()], "{op:?}: {names:?}");
            for (k, out) in outs.iter().enumerate() {
                let want = run(std::slice::from_ref(out)).0[0];
                assert_eq!(bits[k], want, "{op:?}{form} lane {k}");
            }
        }
    }
}

#[test]
fn values_alive_across_a_packed_step_survive_it() {
    // a packed step clobbers every register: a float product and sum and an int
    // comparison computed before four independent sines and read after them must be
    // stored first (a program that kept them in registers would read the helper's
    // leftovers); the results are checked against f32 arithmetic done here
    let (p, q, r, s) = (1.25f32, -3.5f32, 0.75f32, 6.0f32);
    let (vp, vq, vr, vs) = (input(p), input(q), input(r), input(s));
    let sines: Vec<Value> = [&vp, &vq, &vr, &vs]
        .iter()
        .map(|v| unary(Op::Sin, v).unwrap())
        .collect();
    let prod = binary(Op::Mul, &vp, &vq).unwrap();
    let sum = binary(Op::Add, &vr, &vs).unwrap();
    let less = binary(Op::Lt, &vp, &vr).unwrap();
    let select = copapy_compiler::trace::select;
    // computed between the first sine and the others (the outputs' order is the
    // arena's), so the group closes after them and they are all alive across it
    let before = select(&less, &prod, &sum).unwrap();
    let after = binary(Op::Mul, &prod, &sum).unwrap();
    let picked = select(&less, &sum, &prod).unwrap();
    let mixed = binary(Op::Add, &sines[0], &prod).unwrap();
    let mut outs = vec![sines[0].clone(), before];
    outs.extend(sines[1..].iter().cloned());
    outs.extend([after, picked, mixed]);
    let (bits, names) = run(&outs);
    assert_eq!(packs(&names), ["st_pack4_sin_f_v"], "{names:?}");
    let pack = names
        .iter()
        .position(|n| n.starts_with("st_pack4_"))
        .unwrap();
    assert!(
        names[..pack].iter().any(|n| n.starts_with("st_lt_f_")),
        "the comparison is computed before the pack: {names:?}"
    );
    let sin_p = f32::from_bits(bits[0]);
    assert_eq!(bits[0], run(&[sines[0].clone()]).0[0]);
    let want = [
        if p < r { p * q } else { r + s },
        p * q * (r + s),
        if p < r { r + s } else { p * q },
        sin_p + p * q,
    ];
    let got: Vec<f32> = [1, 5, 6, 7]
        .iter()
        .map(|&k| f32::from_bits(bits[k]))
        .collect();
    assert_eq!(got, want, "{names:?}");
}

#[test]
fn lane_zero_s_result_stays_in_float_register_zero() {
    // the helper returns the results in a vector register whose lane 0 is register a:
    // the sine of lane 0 is read from there (no load) by the product right after
    let xs: Vec<Value> = [0.5f32, -1.25, 2.0, 3.5]
        .iter()
        .map(|&x| input(x))
        .collect();
    let sines: Vec<Value> = xs.iter().map(|x| unary(Op::Sin, x).unwrap()).collect();
    let prod = binary(Op::Mul, &sines[0], &sines[0]).unwrap();
    let mut outs = vec![prod];
    outs.extend(sines[1..].iter().cloned());
    let (bits, names) = run(&outs);
    assert_eq!(names[0], "st_pack4_sin_f_v", "{names:?}");
    assert!(names[1].starts_with("st_mul_f_r0r0_"), "{names:?}");
    let s = f32::from_bits(run(&[sines[0].clone()]).0[0]);
    assert_eq!(f32::from_bits(bits[0]), s * s);
}

#[test]
fn states_an_update_stores_into_are_not_read_as_a_range() {
    // four states, each updated to its sine: the update copies the sines into the
    // states at the end of every run, so the next run's pack must not read them with one
    // 16-byte load (it would wait for those stores); plain inputs beside them are
    use copapy_compiler::compile::{compile_with_updates, read_bits};
    use copapy_compiler::select::StencilTable;
    use copapy_compiler::stencil_db::StencilDb;
    let db = StencilDb::parse(include_bytes!("../../../stencils/x86_64.o")).unwrap();
    let table = StencilTable::new(&db);
    let names = |outputs: &[Value], updates: &[(Value, Value)]| -> Vec<String> {
        let compiled = compile_with_updates(&db, &table, outputs, updates).unwrap();
        let mut loaded = copapy_runner::LoadedProgram::load(&compiled.program).unwrap();
        loaded.run();
        // the states hold the sines after one run
        for (k, &at) in compiled.states.iter().enumerate() {
            let x = [0.5f32, 1.5, -2.0, 3.0][k];
            let want = run(&[unary(Op::Sin, &input(x)).unwrap()]).0[0];
            assert_eq!(read_bits(loaded.data(), at), want, "state {k}");
        }
        compiled
            .stencils
            .iter()
            .map(|&(id, _)| db.get(id).unwrap().name.clone())
            .collect()
    };
    let states: Vec<Value> = [0.5f32, 1.5, -2.0, 3.0].iter().map(|&x| input(x)).collect();
    let sines: Vec<Value> = states.iter().map(|s| unary(Op::Sin, s).unwrap()).collect();
    let updates: Vec<(Value, Value)> = states.iter().cloned().zip(sines.iter().cloned()).collect();
    assert_eq!(packs(&names(&[], &updates)), ["st_pack4_sin_f"]);
    // the same sines of inputs nobody updates, the inputs outputs too (as named
    // variables are): one range
    let fresh: Vec<Value> = [0.5f32, 1.5, -2.0, 3.0].iter().map(|&x| input(x)).collect();
    let mut outs: Vec<Value> = fresh.iter().map(|s| unary(Op::Sin, s).unwrap()).collect();
    outs.extend(fresh.iter().cloned());
    let (_, plain) = run(&outs);
    assert_eq!(packs(&plain), ["st_pack4_sin_f_v"]);
}

/// `x` rounded to float32 bits, for expectations computed here with f32 arithmetic.
fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

/// The one sin/cos packed step among `names`.
fn sincos_step(names: &[String]) -> &str {
    let steps = packs(names);
    assert_eq!(steps.len(), 1, "{names:?}");
    assert!(steps[0].starts_with("st_pack4_sincos_f"), "{names:?}");
    steps[0]
}

#[test]
fn the_results_read_first_after_a_sin_cos_step_stay_in_registers() {
    // two lanes, each result read by a product right after the step: the two products
    // read first decide the form (each pair of lanes 0 and 1), and they take their
    // operands from the registers (a register-memory product, no load of the result);
    // lane 0 is a computed operand in a register (`_r0`) in the last case, so lane 1's
    // sine and cosine are the ones read first. Bits against the calls alone and f32
    // products computed here.
    let (ta, tb) = (input(0.75), input(-2.5));
    let tr = binary(Op::Add, &input(0.5), &input(1.75)).unwrap();
    let (k1, k2) = (1.5f32, -0.375f32);
    let (s, c) = (
        |t: &Value| unary(Op::Sin, t).unwrap(),
        |t: &Value| unary(Op::Cos, t).unwrap(),
    );
    // (first read, second read, the other two results, the operands' form, kept)
    type Case = (Value, Value, [Value; 2], &'static str, &'static str);
    let cases: Vec<Case> = vec![
        (s(&ta), c(&ta), [s(&tb), c(&tb)], "", ""),
        (s(&ta), s(&tb), [c(&ta), c(&tb)], "", "_s0s1"),
        (c(&ta), c(&tb), [s(&ta), s(&tb)], "", "_c0c1"),
        (s(&ta), c(&tb), [c(&ta), s(&tb)], "", "_s0c1"),
        (c(&ta), s(&tb), [s(&ta), c(&tb)], "", "_s1c0"),
        (c(&tb), s(&tb), [s(&tr), c(&tr)], "_r0", "_s1c1"),
    ];
    for (first, second, others, want_form, want_kept) in cases {
        let p = binary(Op::Mul, &first, &input(k1)).unwrap();
        let q = binary(Op::Mul, &second, &input(k2)).unwrap();
        let outs = [
            p,
            q,
            first.clone(),
            second.clone(),
            others[0].clone(),
            others[1].clone(),
        ];
        let (bits, names) = run(&outs);
        let step = sincos_step(&names);
        assert_eq!(
            (form(step), kept(step)),
            (want_form, want_kept),
            "{names:?}"
        );
        let at = names.iter().position(|n| n == step).unwrap();
        let products = names[at + 1..]
            .iter()
            .filter(|n| n.starts_with("st_mul_f_"));
        for reader in products.take(2) {
            assert!(
                reader.starts_with("st_mul_f_mr") || reader.starts_with("st_mul_f_r"),
                "{want_kept}: a product after the step loads its result: {names:?}"
            );
        }
        let alone: Vec<u32> = outs[2..]
            .iter()
            .map(|v| run(std::slice::from_ref(v)).0[0])
            .collect();
        assert_eq!(bits[2..], alone[..], "{want_kept}: {names:?}");
        assert_eq!(f(bits[0]), f(alone[0]) * k1, "{want_kept}: {names:?}");
        assert_eq!(f(bits[1]), f(alone[1]) * k2, "{want_kept}: {names:?}");
    }
}

#[test]
fn a_kept_result_is_read_from_its_register_and_later_from_its_slot() {
    // cos(a) is read right after the step (from its register) and again after a chain
    // that reuses both registers (from its slot); sin(b) likewise, read last beside it
    let (a, b, k) = (0.3f32, 4.0f32, 2.5f32);
    let (va, vb, vk) = (input(a), input(b), input(k));
    let (ca, sb) = (unary(Op::Cos, &va).unwrap(), unary(Op::Sin, &vb).unwrap());
    let (sa, cb) = (unary(Op::Sin, &va).unwrap(), unary(Op::Cos, &vb).unwrap());
    let p = binary(Op::Mul, &ca, &vk).unwrap();
    let q = binary(Op::Add, &sb, &vk).unwrap();
    let mut chain = binary(Op::Mul, &p, &q).unwrap();
    for _ in 0..3 {
        let sq = binary(Op::Mul, &chain, &chain).unwrap();
        chain = binary(Op::Sub, &sq, &binary(Op::Add, &chain, &vk).unwrap()).unwrap();
    }
    let last = binary(Op::Add, &binary(Op::Mul, &ca, &chain).unwrap(), &sb).unwrap();
    let outs = [last, sa.clone(), cb.clone(), ca.clone(), sb.clone()];
    let (bits, names) = run(&outs);
    assert_eq!(kept(sincos_step(&names)), "_s1c0", "{names:?}");
    let alone: Vec<u32> = outs[1..]
        .iter()
        .map(|v| run(std::slice::from_ref(v)).0[0])
        .collect();
    assert_eq!(bits[1..], alone[..], "{names:?}");
    let (fca, fsb) = (f(alone[2]), f(alone[3]));
    let mut want = (fca * k) * (fsb + k);
    for _ in 0..3 {
        want = want * want - (want + k);
    }
    assert_eq!(f(bits[0]), fca * want + fsb, "{names:?}");
}

#[test]
fn kept_results_alive_across_a_later_pack_are_read_from_their_slots() {
    // the first step keeps cos(a) and cos(b) in registers; the products read them there
    // and are the operands of a second sin/cos step, which clobbers every register:
    // the first step's results read after it (all four) come from their slots
    let (a, b, k) = (1.1f32, -0.6f32, 0.8f32);
    let (va, vb, vk) = (input(a), input(b), input(k));
    let first: Vec<Value> = [&va, &vb]
        .iter()
        .flat_map(|t| [unary(Op::Sin, t).unwrap(), unary(Op::Cos, t).unwrap()])
        .collect();
    let u = binary(Op::Mul, &first[1], &vk).unwrap();
    let v = binary(Op::Mul, &first[3], &vk).unwrap();
    let second: Vec<Value> = [&u, &v]
        .iter()
        .flat_map(|t| [unary(Op::Cos, t).unwrap(), unary(Op::Sin, t).unwrap()])
        .collect();
    let mix = |x: &Value, y: &Value| binary(Op::Add, x, y).unwrap();
    let outs = [
        mix(&second[0], &first[0]),
        mix(&second[2], &first[1]),
        mix(&second[1], &first[2]),
        mix(&second[3], &first[3]),
    ];
    let (bits, names) = run(&outs);
    let steps = packs(&names);
    assert_eq!(steps.len(), 2, "{names:?}");
    assert_eq!(kept(steps[0]), "_c0c1", "{names:?}");
    let one = |x: &Value| f(run(std::slice::from_ref(x)).0[0]);
    // the second step's operands are f32 products of the first's cosines
    let (fu, fv) = (one(&first[1]) * k, one(&first[3]) * k);
    assert_eq!(fu, one(&u));
    assert_eq!(fv, one(&v));
    let want = [
        one(&second[0]) + one(&first[0]),
        one(&second[2]) + one(&first[1]),
        one(&second[1]) + one(&first[2]),
        one(&second[3]) + one(&first[3]),
    ];
    let got: Vec<f32> = bits.iter().map(|&x| f(x)).collect();
    assert_eq!(got, want, "{names:?}");
}
