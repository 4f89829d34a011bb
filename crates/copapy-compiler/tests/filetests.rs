//! Scheduling filetests: each case shows a traced program next to the stencil sequence
//! the compiler chooses for it, kept in `tests/filetests/<name>.txt`.
//!
//! A reviewer sees exactly which stencils (and so which loads, stores and register moves)
//! an expression costs; a change in scheduling shows up in the diff. Regenerate with
//! `COPAPY_BLESS=1 cargo test -p copapy-compiler --test filetests`.

use std::fmt::Write as _;
use std::path::PathBuf;

use copapy_compiler::optimise::build_arena;
use copapy_compiler::schedule::schedule;
use copapy_compiler::select::StencilTable;
use copapy_compiler::stencil_db::StencilDb;
use copapy_compiler::trace::{binary, powi, select, unary};
use copapy_compiler::{Op, ScalarType, Value};

static OBJECT: &[u8] = include_bytes!("../../../stencils/x86_64.o");

fn f(x: f32) -> Value {
    Value::input(ScalarType::Float, x.to_bits())
}

fn c(x: f32) -> Value {
    Value::constant(ScalarType::Float, x.to_bits())
}

fn i(x: i32) -> Value {
    Value::input(ScalarType::Int, x as u32)
}

/// Renders the schedule of `outputs` as one line per stencil.
fn listing(db: &StencilDb, outputs: &[Value]) -> String {
    let table = StencilTable::new(db);
    let arena = build_arena(outputs);
    let sched = schedule(&arena, &table).expect("schedules");
    let mut out = String::new();
    for step in &sched.steps {
        let stencil = db.stencil(step.stencil);
        let name = &stencil.name;
        if stencil.arg_holes != 0 && step.slot.is_none() {
            // a fused step's memory operands: the slots of holes cp_a<k>
            let slots: Vec<String> = (0..copapy_compiler::stencil_db::ARG_HOLES)
                .filter(|k| stencil.arg_holes & (1 << k) != 0)
                .map(|k| format!("[{}]", step.args[k]))
                .collect();
            writeln!(out, "{name:<24} {}", slots.join(" ")).unwrap();
            continue;
        }
        match (step.slot, step.slot2) {
            (Some(s), Some(s2)) => writeln!(out, "{name:<24} [{s}] [{s2}]").unwrap(),
            (Some(s), None) => writeln!(out, "{name:<24} [{s}]").unwrap(),
            _ => writeln!(out, "{name}").unwrap(),
        }
    }
    let code: usize = sched
        .steps
        .iter()
        .map(|s| db.stencil(s.stencil).bytes.len())
        .sum();
    writeln!(
        out,
        "; {} stencils, {code} code bytes, {} data bytes",
        sched.steps.len(),
        sched.data.len()
    )
    .unwrap();
    out
}

fn check(name: &str, source: &str, outputs: &[Value]) {
    let db = StencilDb::parse(OBJECT).expect("stencil object parses");
    let text = format!("; {source}\n{}", listing(&db, outputs));
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "filetests",
        &format!("{name}.txt"),
    ]
    .iter()
    .collect();
    if std::env::var_os("COPAPY_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with COPAPY_BLESS=1", path.display()));
    assert_eq!(
        text, expected,
        "schedule of {name} changed; rerun with COPAPY_BLESS=1 if intended"
    );
}

#[test]
fn basic_example() {
    let (a, b) = (f(0.25), f(0.87));
    let cc = binary(Op::Add, &a, &binary(Op::Mul, &b, &c(2.0)).unwrap()).unwrap();
    let d = binary(
        Op::Add,
        &powi(&cc, 2).unwrap(),
        &unary(Op::Sin, &a).unwrap(),
    )
    .unwrap();
    let e = unary(Op::Sqrt, &b).unwrap();
    check(
        "basic_example",
        "c = a + b*2.0; d = c**2 + sin(a); e = sqrt(b)",
        &[cc, d, e],
    );
}

#[test]
fn common_subexpression_is_computed_once() {
    let (x, y) = (f(1.0), f(2.0));
    let s1 = binary(Op::Add, &x, &y).unwrap();
    let s2 = binary(Op::Add, &y, &x).unwrap();
    let out = binary(Op::Mul, &s1, &s2).unwrap();
    check("cse", "(x + y) * (y + x)", &[out]);
}

#[test]
fn mixed_int_and_float() {
    let (n, x) = (i(3), f(0.5));
    let q = binary(Op::FloorDiv, &n, &i(2)).unwrap();
    let r = binary(Op::Mul, &q, &x).unwrap();
    let cmp = binary(Op::Lt, &r, &x).unwrap();
    check("mixed", "r = (n // m) * x; r < x", &[r, cmp]);
}

#[test]
fn select_keeps_the_condition_in_an_int_register() {
    let x = f(-1.0);
    let cond = binary(Op::Gt, &x, &c(0.0)).unwrap();
    let out = select(&cond, &unary(Op::Sqrt, &x).unwrap(), &c(0.0)).unwrap();
    check("select", "iif(x > 0, sqrt(x), 0)", &[out]);
}

#[test]
fn dot_product_of_eight() {
    let xs: Vec<Value> = (0..8).map(|k| f(k as f32)).collect();
    let ys: Vec<Value> = (0..8).map(|k| f(k as f32 + 0.5)).collect();
    let mut acc = binary(Op::Mul, &xs[0], &ys[0]).unwrap();
    for k in 1..8 {
        acc = binary(Op::Add, &acc, &binary(Op::Mul, &xs[k], &ys[k]).unwrap()).unwrap();
    }
    check(
        "dot8",
        "x0*y0 + x1*y1 + ... + x7*y7 (left to right)",
        &[acc],
    );
}

/// Two steps of the inverse-kinematics example (benches/workloads.py `ik`): each step's
/// sin and cos of `t1` and `t1 + t2` run as one packed sincos, then `cp.grad`'s chain.
#[test]
fn ik_two_steps() {
    use copapy_compiler::autodiff::grad;
    let (l1, l2, alpha) = (c(1.8), c(2.0), c(0.1));
    let (tx, ty) = (f(0.7), f(0.7));
    let (mut t1, mut t2) = (f(0.0), f(0.0));
    let mul = |a: &Value, b: &Value| binary(Op::Mul, a, b).unwrap();
    let add = |a: &Value, b: &Value| binary(Op::Add, a, b).unwrap();
    let sub = |a: &Value, b: &Value| binary(Op::Sub, a, b).unwrap();
    let mut err = c(0.0);
    for _ in 0..2 {
        let t12 = add(&t1, &t2);
        let (c1, s1) = (unary(Op::Cos, &t1).unwrap(), unary(Op::Sin, &t1).unwrap());
        let (c12, s12) = (unary(Op::Cos, &t12).unwrap(), unary(Op::Sin, &t12).unwrap());
        let ex = sub(&tx, &add(&mul(&l1, &c1), &mul(&l2, &c12)));
        let ey = sub(&ty, &add(&mul(&l1, &s1), &mul(&l2, &s12)));
        err = add(&mul(&ex, &ex), &mul(&ey, &ey));
        let g = grad(&err, &[t1.clone(), t2.clone()]).unwrap();
        t1 = sub(&t1, &mul(&alpha, &g[0]));
        t2 = sub(&t2, &mul(&alpha, &g[1]));
    }
    check(
        "ik_two_steps",
        "two gradient steps of the two-joint arm (benches/workloads.py ik)",
        &[t1, t2, err],
    );
}
