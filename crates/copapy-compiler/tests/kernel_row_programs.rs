//! Program bytes of every structural array operation and of its gradient, on every
//! target: a fingerprint per (row, case, target) in `reference/kernel_row_programs.txt`.
//! Restructuring how the rows are declared (`copapy_compiler::array_kernels`) must not
//! change a byte of what they compile to; a deliberate change of a kernel or an adjoint
//! re-blesses the file with `COPAPY_BLESS=1 cargo test -p copapy-compiler --test
//! kernel_row_programs`. The numbers themselves are checked elsewhere (the Python
//! tests in `tests/arrays/` against NumPy); this only pins the bytes.

use copapy_compiler::array;
use copapy_compiler::array_build::build;
use copapy_compiler::array_kernels::KERNELS;
use copapy_compiler::autodiff::grad;
use copapy_compiler::finish::{finish, Request};
use copapy_compiler::targets::TARGETS;
use copapy_compiler::{ScalarType, Value};

fn unnamed(_: &Value) -> Option<String> {
    None
}

/// A float input array of `n` distinct values.
fn floats(n: u32, seed: u32) -> Value {
    let init = (0..n)
        .map(|k| ((k * 7 + seed) % 11) as f32 * 0.5 - 2.0)
        .map(f32::to_bits)
        .collect();
    array::data(ScalarType::Float, init).unwrap()
}

fn ints(n: u32, seed: u32) -> Value {
    array::data(
        ScalarType::Int,
        (0..n).map(|k| (k * 5 + seed) % 9).collect(),
    )
    .unwrap()
}

fn int_scalar() -> Value {
    Value::input(ScalarType::Int, 1)
}

/// Operands and parameters of each row the front end builds: float operands, and
/// whether an int version exists.
fn case(name: &str, int: bool) -> (Vec<Value>, Vec<i64>) {
    let a = |n: u32, seed: u32| if int { ints(n, seed) } else { floats(n, seed) };
    match name {
        "sum" | "min" | "max" | "sort" | "argsort" => (vec![a(6, 1)], vec![]),
        "dot" => (vec![a(6, 1), a(6, 2)], vec![]),
        "index" => (vec![a(6, 1), int_scalar()], vec![]),
        "strided" => (vec![a(6, 1)], vec![1, 2, 2, 2, 1]),
        "matmul" => (vec![a(6, 1), a(6, 2)], vec![2, 3, 2]),
        "rows_min" | "rows_max" => (vec![a(6, 1)], vec![2, 3]),
        "gather" => (vec![a(6, 1), int_scalar()], vec![0, 2, 2, 2]),
        "solve" => (vec![a(9, 1), a(6, 2)], vec![3, 2]),
        "det" => (vec![a(9, 1)], vec![3]),
        "conv2d" => (
            vec![a(2 * 5 * 5, 1), a(3 * 2 * 3 * 3, 2), a(3, 3)],
            vec![1, 2, 5, 5, 3, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1],
        ),
        "maxpool2d" | "avgpool2d" => (vec![a(2 * 5 * 5, 1)], vec![2, 5, 5, 2, 2, 3, 3, 2, 2, 1, 1]),
        other => panic!("no case for row {other}: add one"),
    }
}

/// The program bytes of `outputs` on every target, one FNV-1a hash each.
fn fingerprints(outputs: &[Value]) -> Vec<String> {
    TARGETS
        .iter()
        .map(|t| {
            let request = Request {
                outputs: outputs.to_vec(),
                variables: Vec::new(),
                updates: Vec::new(),
                name_of: &unnamed,
            };
            let bytes = finish(t, request).expect("compiles").program.encode();
            let h = bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
            });
            format!("{} {} {h:016x}", t.name, bytes.len())
        })
        .collect()
}

/// A scalar loss of `r`: itself, or the sum of its elements.
fn loss(r: &Value) -> Value {
    if array::len_of(r).is_some() {
        array::kernel("sum", std::slice::from_ref(r), &[]).unwrap()
    } else {
        r.clone()
    }
}

fn lines() -> String {
    let mut out = String::new();
    let mut add = |label: String, outputs: &[Value]| {
        for f in fingerprints(outputs) {
            out.push_str(&format!("{label} {f}\n"));
        }
    };
    // narrow is pinned with the byte storage below (to_bytes builds the same row)
    for k in KERNELS.iter().filter(|k| k.public && k.name != "narrow") {
        let (ops, prm) = case(k.name, false);
        let r = build(k.name, &ops, &prm).unwrap();
        add(format!("{} f", k.name), std::slice::from_ref(&r));
        if r.ty() == ScalarType::Float {
            let floats: Vec<Value> = ops
                .iter()
                .filter(|v| v.ty() == ScalarType::Float)
                .cloned()
                .collect();
            let g = grad(&loss(&r), &floats).unwrap();
            add(format!("{} grad", k.name), &g);
        }
        if k.classes.suffixes().contains(&"_i") || k.classes.suffixes() == [""] {
            let (ops, prm) = case(k.name, true);
            if let Ok(r) = build(k.name, &ops, &prm) {
                add(format!("{} i", k.name), std::slice::from_ref(&r));
            }
        }
    }
    // byte storage: narrow on the way in, widen on every read
    let b = array::to_bytes(&floats(6, 1)).unwrap();
    add("narrow".into(), std::slice::from_ref(&b));
    let w = array::binary(copapy_compiler::Op::Add, &b, &ints(6, 2)).unwrap();
    add("widen_b".into(), std::slice::from_ref(&w));
    let bi = array::to_bytes(&ints(5, 3)).unwrap();
    add("narrow i".into(), std::slice::from_ref(&bi));
    let e = array::element(&bi, 2).unwrap();
    add("widen_b element".into(), std::slice::from_ref(&e));
    // the walks, windows and scatters in the shapes the cases above leave out
    for (label, name, ops, prm) in more_cases() {
        let r = build(name, &ops, &prm).unwrap();
        add(format!("{label} f"), std::slice::from_ref(&r));
        let g = grad(&loss(&r), &ops[..1]).unwrap();
        add(format!("{label} grad"), &g);
    }
    let walk = [0, 3, 1, 1, 2, 2, 0, 0, 4, 1];
    let s = scatter(&floats(4, 1), &int_scalar(), walk, 9);
    add("scatter_add f".into(), std::slice::from_ref(&s));
    let g = floats(4, 2);
    let s = scatter(&g, &int_scalar(), walk, 9);
    add("scatter_add grad".into(), &grad(&loss(&s), &[g]).unwrap());
    let s = scatter(&ints(4, 1), &int_scalar(), walk, 9);
    add("scatter_add i".into(), std::slice::from_ref(&s));
    out
}

/// The adjoint of a gather, which only the compiler builds: `g` added into `len` zeros
/// at the walk `[lo, hi, n0..n3, s0..s3]` from the runtime `offset`.
fn scatter(g: &Value, offset: &Value, walk: [i32; 10], len: u32) -> Value {
    array::scatter_add(g, offset, walk, len).unwrap()
}

/// Negative strides, walks without dimensions, windows without padding, strides of
/// one and dilations: (label, row, operands, parameters).
fn more_cases() -> Vec<(&'static str, &'static str, Vec<Value>, Vec<i64>)> {
    vec![
        (
            "strided backwards",
            "strided",
            vec![floats(6, 1)],
            vec![5, 2, -3, 3, -1],
        ),
        ("strided scalar", "strided", vec![floats(6, 1)], vec![3]),
        (
            "strided broadcast",
            "strided",
            vec![floats(3, 1)],
            vec![0, 4, 0, 3, 1],
        ),
        (
            "gather 2d",
            "gather",
            vec![floats(12, 1), int_scalar()],
            vec![0, 4, 2, 4, 3, 1],
        ),
        (
            "conv2d dilated",
            "conv2d",
            vec![floats(2 * 6 * 6, 1), floats(2 * 2 * 2 * 2, 2), floats(2, 3)],
            vec![1, 2, 6, 6, 2, 2, 2, 4, 4, 1, 1, 0, 0, 2, 2],
        ),
        (
            "maxpool2d unpadded",
            "maxpool2d",
            vec![floats(2 * 4 * 4, 1)],
            vec![2, 4, 4, 2, 2, 2, 2, 2, 2, 0, 0],
        ),
        (
            "avgpool2d unpadded",
            "avgpool2d",
            vec![floats(2 * 4 * 4, 1)],
            vec![2, 4, 4, 2, 2, 3, 3, 1, 1, 0, 0],
        ),
    ]
}

#[test]
fn program_bytes_of_every_row_and_its_gradient_are_pinned() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/kernel_row_programs.txt"
    );
    let got = lines();
    if std::env::var_os("COPAPY_BLESS").is_some() {
        std::fs::write(file, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(file).expect("bless the file first");
    for (g, w) in got.lines().zip(want.lines()) {
        assert_eq!(g, w, "program bytes changed");
    }
    assert_eq!(got.lines().count(), want.lines().count());
}
