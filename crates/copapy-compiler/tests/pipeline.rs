//! The whole compiler on the real x86_64 stencils: trace → optimise → schedule → link → run.
//! References are computed with plain Rust f32/i32 arithmetic, independent of the stencils.

use copapy_compiler::compile::read_bits;
use copapy_compiler::select::StencilTable;
use copapy_compiler::stencil_db::StencilDb;
use copapy_compiler::trace::{binary, powi, unary};
use copapy_compiler::{compile, Op, ScalarType, Value};
use copapy_runner::LoadedProgram;

static OBJECT: &[u8] = include_bytes!("../../../stencils/x86_64.o");

fn input_f(x: f32) -> Value {
    Value::input(ScalarType::Float, x.to_bits())
}

fn input_i(x: i32) -> Value {
    Value::input(ScalarType::Int, x as u32)
}

fn run(outputs: &[Value]) -> Vec<u32> {
    let db = StencilDb::parse(OBJECT).expect("stencils/x86_64.o parses");
    let table = StencilTable::new(&db);
    let compiled = compile(&db, &table, outputs).expect("compiles");
    let mut loaded = LoadedProgram::load(&compiled.program).expect("loads");
    loaded.run();
    compiled
        .outputs
        .iter()
        .map(|&o| read_bits(loaded.data(), o))
        .collect()
}

#[test]
fn basic_example_matches_f32_arithmetic() {
    let (a, b) = (input_f(0.25), input_f(0.87));
    let two = Value::constant(ScalarType::Float, 2.0f32.to_bits());
    let c = binary(Op::Add, &a, &binary(Op::Mul, &b, &two).unwrap()).unwrap();
    let c2 = powi(&c, 2).unwrap();
    let e = unary(Op::Sqrt, &b).unwrap();
    let d = binary(Op::Sub, &c2, &e).unwrap();
    let got = run(&[c, d, e]);
    let c_ref = 0.25f32 + 0.87f32 * 2.0;
    let e_ref = 0.87f32.sqrt();
    assert_eq!(
        got,
        vec![
            c_ref.to_bits(),
            (c_ref * c_ref - e_ref).to_bits(),
            e_ref.to_bits()
        ]
    );
}

#[test]
fn integer_division_by_zero_and_overflow_do_not_trap() {
    let (x, zero, m1, min) = (input_i(7), input_i(0), input_i(-1), input_i(i32::MIN));
    let outs = [
        binary(Op::FloorDiv, &x, &zero).unwrap(),
        binary(Op::Mod, &x, &zero).unwrap(),
        binary(Op::FloorDiv, &min, &m1).unwrap(),
        binary(Op::Mod, &min, &m1).unwrap(),
        binary(Op::FloorDiv, &m1, &input_i(2)).unwrap(),
    ];
    let got: Vec<i32> = run(&outs).into_iter().map(|b| b as i32).collect();
    assert_eq!(got, vec![0, 0, i32::MIN, 0, -1]);
}

#[test]
fn long_chains_spill_and_reload_correctly() {
    // sum of products with many live values: forces spills of both register classes
    let xs: Vec<Value> = (0..40).map(|k| input_f(k as f32 * 0.5 + 1.0)).collect();
    let ns: Vec<Value> = (0..40).map(|k| input_i(k * 3 - 50)).collect();
    let prods: Vec<Value> = xs
        .windows(2)
        .map(|w| binary(Op::Mul, &w[0], &w[1]).unwrap())
        .collect();
    let mut acc = prods[0].clone();
    for p in &prods[1..] {
        acc = binary(Op::Add, &acc, p).unwrap();
    }
    let mut iacc = ns[0].clone();
    for (k, n) in ns[1..].iter().enumerate() {
        let t = binary(Op::Mul, n, &ns[k]).unwrap();
        iacc = binary(Op::Sub, &iacc, &t).unwrap();
    }
    let got = run(&[acc, iacc]);
    let xr: Vec<f32> = (0..40).map(|k| k as f32 * 0.5 + 1.0).collect();
    let mut want = xr[0] * xr[1];
    for w in xr[1..].windows(2) {
        want += w[0] * w[1];
    }
    let nr: Vec<i32> = (0..40).map(|k| k * 3 - 50).collect();
    let mut iwant = nr[0];
    for k in 1..40 {
        iwant = iwant.wrapping_sub(nr[k].wrapping_mul(nr[k - 1]));
    }
    assert_eq!(got, vec![want.to_bits(), iwant as u32]);
}

/// An output that is an updated state's node: listed in `run_outputs` it holds the value
/// the run computed with (the state before the update), otherwise the next state.
#[test]
fn run_outputs_keep_the_value_before_the_updates() {
    use copapy_compiler::compile::compile_with_run_outputs;
    let db = StencilDb::parse(OBJECT).expect("stencils/x86_64.o parses");
    let table = StencilTable::new(&db);
    let x = input_f(0.5);
    let half = Value::constant(ScalarType::Float, 0.5f32.to_bits());
    let one = Value::constant(ScalarType::Float, 1.0f32.to_bits());
    let next = binary(Op::Add, &binary(Op::Mul, &x, &half).unwrap(), &one).unwrap();
    let doubled = binary(Op::Mul, &x, &input_f(2.0)).unwrap();
    let outputs = [x.clone(), x.clone(), doubled];
    let updates = [(x.clone(), next)];
    // position 2 is not a state: listing it changes nothing
    let compiled =
        compile_with_run_outputs(&db, &table, &outputs, &updates, &[1, 2]).expect("compiles");
    assert_eq!(compiled.outputs[0], compiled.states[0]);
    assert_ne!(compiled.outputs[1], compiled.states[0]);
    let mut loaded = LoadedProgram::load(&compiled.program).expect("loads");
    let mut state = 0.5f32;
    for step in 0..5 {
        loaded.run();
        let got: Vec<u32> = compiled
            .outputs
            .iter()
            .map(|&o| read_bits(loaded.data(), o))
            .collect();
        let before = state;
        state = state * 0.5 + 1.0;
        let want = [state.to_bits(), before.to_bits(), (before * 2.0).to_bits()];
        assert_eq!(got, want, "step {step}");
    }
}
