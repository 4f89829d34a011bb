//! A complete program file made without Python: `copapy_compiler::finish` compiles traced
//! values for a target and returns the program with its CPU features, symbol table and
//! imports, validated. The file is decoded again (as a runner does) and, for the host's
//! own target, run with `copapy-runner`; references are plain Rust f32/i32 arithmetic.

use copapy_compiler::finish::{finish, FinishError, Request, Variable};
use copapy_compiler::targets::Target;
use copapy_compiler::trace::binary;
use copapy_compiler::{Op, ScalarType, Value};
use copapy_program::{ElementType, Program, Role};

fn input_f(x: f32) -> Value {
    Value::input(ScalarType::Float, x.to_bits())
}

fn unnamed(_: &Value) -> Option<String> {
    None
}

fn named(name: &str, values: Vec<Value>) -> Variable {
    let shape = if values.len() == 1 {
        Vec::new()
    } else {
        vec![values.len() as u32]
    };
    Variable::new(Some(name.to_owned()), shape, values)
}

/// `y = a * b + c` over two scalars and a state `n` counting runs.
struct Example {
    a: Value,
    b: Value,
    n: Value,
    y: Value,
    next_n: Value,
}

fn example() -> Example {
    let (a, b) = (input_f(1.5), input_f(-2.25));
    let c = Value::constant(ScalarType::Float, 0.125f32.to_bits());
    let y = binary(Op::Add, &binary(Op::Mul, &a, &b).unwrap(), &c).unwrap();
    let n = Value::input(ScalarType::Int, 0);
    let one = Value::constant(ScalarType::Int, 1);
    let next_n = binary(Op::Add, &n, &one).unwrap();
    Example { a, b, n, y, next_n }
}

fn request(e: &Example) -> Request<'static> {
    Request {
        outputs: vec![e.y.clone()],
        variables: vec![
            named("y", vec![e.y.clone()]),
            named("ab", vec![e.a.clone(), e.b.clone()]),
            Variable::new(None, Vec::new(), vec![e.y.clone()]),
        ],
        updates: vec![(e.n.clone(), e.next_n.clone())],
        name_of: &unnamed,
    }
}

#[test]
fn every_target_gets_a_complete_valid_program_file() {
    for target in &copapy_compiler::targets::TARGETS {
        let e = example();
        let compiled = finish(target, request(&e)).expect("finishes");
        let file = compiled.program.encode();
        let program = Program::decode(&file).expect("the file decodes and validates");
        assert_eq!(program.arch, target.arch, "{}", target.name);
        assert_eq!(program.features, target.features.0, "{}", target.name);
        let names: Vec<(&str, Role, ElementType, &[u32])> = program
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.role, s.ty, s.shape.as_slice()))
            .collect();
        // `y` covers the positional argument (one value, named already), so it gets no
        // `out0`; the state has no given name and gets `in0`
        assert_eq!(
            names,
            vec![
                ("y", Role::Output, ElementType::Float, &[][..]),
                ("ab", Role::Input, ElementType::Float, &[2][..]),
                ("in0", Role::State, ElementType::Int, &[][..]),
            ],
            "{}",
            target.name
        );
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_host_runs_the_file_through_its_symbols() {
    let e = example();
    let target = Target::find("x86_64").unwrap();
    let file = finish(target, request(&e)).unwrap().program.encode();
    let program = Program::decode(&file).unwrap();
    let offset = |name: &str| -> Vec<usize> {
        let s = program.symbols.iter().find(|s| s.name == name).unwrap();
        s.offsets.iter().map(|&o| o as usize).collect()
    };
    let mut loaded = copapy_runner::LoadedProgram::load_file(&file).expect("loads");
    let ab = offset("ab");
    loaded.data_mut()[ab[0]..ab[0] + 4].copy_from_slice(&3.0f32.to_le_bytes());
    loaded.data_mut()[ab[1]..ab[1] + 4].copy_from_slice(&0.75f32.to_le_bytes());
    loaded.run();
    loaded.run();
    let word = |o: usize| u32::from_le_bytes(loaded.data()[o..o + 4].try_into().unwrap());
    assert_eq!(f32::from_bits(word(offset("y")[0])), 3.0f32 * 0.75 + 0.125);
    assert_eq!(word(offset("in0")[0]) as i32, 2, "two runs, two updates");
}

#[test]
fn names_are_checked_before_anything_is_compiled() {
    let e = example();
    let target = Target::find("aarch64").unwrap();
    let mut bad = request(&e);
    bad.variables[0].name = Some("has space".into());
    assert!(matches!(
        finish(target, bad),
        Err(FinishError::BadName { .. })
    ));
    // a name registered with an input may not repeat a given one
    let taken = |v: &Value| (v.id() == e.n.id()).then(|| "y".to_owned());
    let twice = Request {
        name_of: &taken,
        ..request(&e)
    };
    let err = finish(target, twice).err().expect("refused");
    assert!(
        matches!(err, FinishError::DuplicateName(ref n) if n == "y"),
        "{err}"
    );
}

#[test]
fn a_variable_mixing_element_types_is_refused() {
    let e = example();
    let mut mixed = request(&e);
    mixed
        .variables
        .push(named("both", vec![e.a.clone(), e.n.clone()]));
    let err = finish(Target::find("riscv32").unwrap(), mixed)
        .err()
        .expect("refused");
    assert!(
        matches!(err, FinishError::MixedTypes(ref n) if n == "both"),
        "{err}"
    );
}
