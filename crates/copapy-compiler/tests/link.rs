//! Linker tests: patch mapping, layout, errors, and linked programs run with
//! copapy-runner. Results are checked against values computed here in plain Rust
//! `f32`/`i32` arithmetic, never against the linker's own view.

use copapy_compiler::link::{link, LinkError, Step};
use copapy_compiler::stencil_db::{StencilDb, StencilId};
use copapy_program::{Base, Encoding, Patch, Program};

static STENCILS: &[u8] = include_bytes!("fixtures/x86_64_stencils.o");

fn db() -> StencilDb {
    StencilDb::parse(STENCILS).expect("fixture parses")
}

fn id(db: &StencilDb, name: &str) -> StencilId {
    db.id(name).unwrap_or_else(|| panic!("no stencil {name}"))
}

fn step(db: &StencilDb, name: &str, slot: Option<u32>) -> Step {
    Step {
        stencil: id(db, name),
        slot,
        slot2: None,
    }
}

fn floats(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn f32_at(data: &[u8], offset: usize) -> f32 {
    f32::from_le_bytes(data[offset..offset + 4].try_into().unwrap())
}

fn i32_at(data: &[u8], offset: usize) -> i32 {
    i32::from_le_bytes(data[offset..offset + 4].try_into().unwrap())
}

/// `data[8] = data[0] + data[4]`
fn add_program(db: &StencilDb, x: f32, y: f32) -> Program {
    let steps = [
        step(db, "st_copy_f_m_r0", Some(0)),
        step(db, "st_add_f_r0m_r0", Some(4)),
        step(db, "st_store_f_r0", Some(8)),
    ];
    link(db, &steps, floats(&[x, y, 0.0])).unwrap()
}

#[cfg(target_arch = "x86_64")]
fn run(program: &Program) -> Vec<u8> {
    let mut loaded = copapy_runner::LoadedProgram::load(program).expect("program loads");
    loaded.run();
    loaded.data().to_vec()
}

#[test]
fn holes_become_patches() {
    let db = db();
    let p = add_program(&db, 1.0, 2.0);
    // Three 8-byte stencils (tail jumps dropped) and st_return's `ret`, no objects.
    let mut want = vec![0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0]; // movss xmm0, [rip+X]
    want.extend([0xF3, 0x0F, 0x58, 0x05, 0, 0, 0, 0]); // addss xmm0, [rip+Y]
    want.extend([0xF3, 0x0F, 0x11, 0x05, 0, 0, 0, 0]); // movss [rip+Z], xmm0
    want.push(0xC3);
    assert_eq!(p.code, want);
    let data = |offset, target| Patch {
        offset,
        encoding: Encoding::Rel32,
        base: Base::Data,
        target,
        addend: -4,
    };
    assert_eq!(p.patches, [data(4, 0), data(12, 4), data(20, 8)]);
    assert_eq!(p.entry, 0);
    assert!(p.symbols.is_empty());
    assert_eq!(p.data, floats(&[1.0, 2.0, 0.0]));
    p.validate().unwrap();
    assert_eq!(Program::decode(&p.encode()).unwrap(), p);
}

#[test]
fn jump_to_next_points_at_the_end_of_its_stencil() {
    let db = db();
    let steps = [
        step(&db, "st_copy_f_m_r0", Some(0)),
        step(&db, "st_relu_f_r0_r0", None),
        step(&db, "st_store_f_r0", Some(4)),
    ];
    let p = link(&db, &steps, floats(&[1.0, 0.0])).unwrap();
    let relu_at = 8;
    let relu_len = db.stencil(id(&db, "st_relu_f_r0_r0")).bytes.len() as u32;
    assert!(p.patches.contains(&Patch {
        offset: relu_at + 9,
        encoding: Encoding::Rel32,
        base: Base::Code,
        target: relu_at + relu_len,
        addend: -4,
    }));
}

#[test]
fn objects_are_copied_once_aligned_and_only_if_used() {
    let db = db();
    let twice = step(&db, "st_twice_f_r0_r0", None);
    let steps = [
        step(&db, "st_copy_f_m_r0", Some(0)),
        twice,
        twice,
        step(&db, "st_store_f_r0", Some(4)),
    ];
    let p = link(&db, &steps, floats(&[1.0, 0.0])).unwrap();
    let find = |name: &str| db.objects().iter().find(|o| o.name == name).unwrap();
    let count = |needle: &[u8]| {
        p.code
            .windows(needle.len())
            .filter(|w| *w == needle)
            .count()
    };
    assert_eq!(count(&find("cpm_twice").bytes), 1);
    assert_eq!(count(&find("cpm_poly").bytes), 1);
    assert_eq!(count(&find("cpm_unused").bytes), 0);
    assert_eq!(count(&find(".rodata.cpm_table").bytes), 0);
    // Every code-object patch points at an aligned object start or inside one.
    let stencils_end: usize = steps
        .iter()
        .map(|s| db.stencil(s.stencil).bytes.len())
        .sum::<usize>()
        + 1;
    for patch in &p.patches {
        if patch.base == Base::Code {
            assert!(patch.target as usize >= stencils_end);
        }
    }
    let poly_at = p
        .code
        .windows(find("cpm_poly").bytes.len())
        .position(|w| w == find("cpm_poly").bytes)
        .unwrap();
    assert_eq!(poly_at % 16, 0);
    p.validate().unwrap();
}

#[test]
fn missing_slot_is_an_error() {
    let db = db();
    let e = link(&db, &[step(&db, "st_copy_f_m_r0", None)], floats(&[1.0])).unwrap_err();
    assert_eq!(
        e,
        LinkError::MissingSlot {
            step: 0,
            stencil: "st_copy_f_m_r0".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "step 0 (st_copy_f_m_r0) accesses data memory but was given no data slot"
    );
}

#[test]
fn slot_outside_data_is_an_error() {
    let db = db();
    let e = link(&db, &[step(&db, "st_copy_f_m_r0", Some(2))], floats(&[1.0])).unwrap_err();
    assert!(
        matches!(
            e,
            LinkError::SlotOutOfRange {
                step: 0,
                slot: 2,
                data_len: 4,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn unknown_stencil_id_is_an_error() {
    let db = db();
    let e = link(
        &db,
        &[Step {
            stencil: StencilId(10_000),
            slot: None,
            slot2: None,
        }],
        vec![],
    )
    .unwrap_err();
    assert_eq!(
        e,
        LinkError::UnknownStencil {
            step: 0,
            id: StencilId(10_000)
        }
    );
}

#[test]
fn empty_program_just_returns() {
    let db = db();
    let p = link(&db, &[], vec![]).unwrap();
    assert_eq!(p.code, [0xC3]);
    assert!(p.patches.is_empty());
}

#[test]
fn links_thirty_thousand_steps() {
    let db = db();
    let ops = [
        step(&db, "st_copy_f_m_r0", Some(0)),
        step(&db, "st_add_f_r0m_r0", Some(4)),
        step(&db, "st_relu_f_r0_r0", None),
        step(&db, "st_twice_f_r0_r0", None),
        step(&db, "st_store_f_r0", Some(8)),
    ];
    let steps: Vec<Step> = ops.iter().copied().cycle().take(30_000).collect();
    let data = floats(&[1.0, 2.0, 0.0]);
    let start = std::time::Instant::now();
    let p = link(&db, &steps, data).unwrap();
    let took = start.elapsed();
    // Timing is reported, not asserted (docs/architecture.md: benchmarks measure speed).
    eprintln!(
        "linked {} steps into {} code bytes, {} patches in {took:?}",
        steps.len(),
        p.code.len(),
        p.patches.len()
    );
    p.validate().unwrap();
}

#[cfg(target_arch = "x86_64")]
mod run {
    use super::*;

    #[test]
    fn add() {
        let db = db();
        for (x, y) in [(1.25f32, 2.5f32), (-3.0, 0.1), (1e30, 1e30), (0.1, 0.2)] {
            let data = run(&add_program(&db, x, y));
            assert_eq!(f32_at(&data, 8).to_bits(), (x + y).to_bits(), "{x} + {y}");
            assert_eq!(f32_at(&data, 0), x, "inputs untouched");
        }
    }

    #[test]
    fn longer_chain_with_register_moves() {
        // r0 = x; r1 = r0; r0 = r0 * r1; r0 = r0 + y; out = r0   →   x*x + y
        let db = db();
        let steps = [
            step(&db, "st_copy_f_m_r0", Some(0)),
            step(&db, "st_copy_f_r0_r1", None),
            step(&db, "st_mul_f_r0r1_r0", None),
            step(&db, "st_add_f_r0m_r0", Some(4)),
            step(&db, "st_store_f_r0", Some(8)),
        ];
        let (x, y) = (1.7f32, -0.3f32);
        let data = run(&link(&db, &steps, floats(&[x, y, 0.0])).unwrap());
        assert_eq!(f32_at(&data, 8), x * x + y);
    }

    #[test]
    fn conditional_jump_to_next() {
        let db = db();
        let steps = [
            step(&db, "st_copy_f_m_r0", Some(0)),
            step(&db, "st_relu_f_r0_r0", None),
            step(&db, "st_store_f_r0", Some(4)),
        ];
        for x in [2.5f32, -2.5, 0.0] {
            let data = run(&link(&db, &steps, floats(&[x, 99.0])).unwrap());
            assert_eq!(f32_at(&data, 4), if x > 0.0 { x } else { 0.0 }, "relu({x})");
        }
    }

    #[test]
    fn helper_calls_and_rodata_constants() {
        let db = db();
        let steps = [
            step(&db, "st_copy_f_m_r0", Some(0)),
            step(&db, "st_twice_f_r0_r0", None),
            step(&db, "st_store_f_r0", Some(4)),
            step(&db, "st_twice_f_r0_r0", None),
            step(&db, "st_store_f_r0", Some(8)),
        ];
        let x = 0.7f32;
        let twice = |v: f32| (v * 1.5 + 0.25) * 3.0;
        let data = run(&link(&db, &steps, floats(&[x, 0.0, 0.0])).unwrap());
        assert_eq!(f32_at(&data, 4), twice(x));
        assert_eq!(f32_at(&data, 8), twice(twice(x)));
    }

    #[test]
    fn absolute_address_in_rodata() {
        let db = db();
        let steps = [
            step(&db, "st_copy_f_m_r0", Some(0)),
            step(&db, "st_table_f_r0_r0", None),
            step(&db, "st_store_f_r0", Some(4)),
        ];
        let x = -4.5f32;
        let p = link(&db, &steps, floats(&[x, 0.0])).unwrap();
        assert!(p.patches.iter().any(|p| p.encoding == Encoding::Abs64));
        assert_eq!(f32_at(&run(&p), 4), x * 1.5 + 0.25);
    }

    #[test]
    fn int_add_wraps() {
        let db = db();
        let steps = [
            step(&db, "st_copy_i_m_r0", Some(0)),
            step(&db, "st_add_i_r0m_r0", Some(4)),
            step(&db, "st_store_i_r0", Some(8)),
        ];
        for (a, b) in [(40i32, 2i32), (i32::MAX, 1), (-7, -8)] {
            let data: Vec<u8> = [a, b, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
            let out = run(&link(&db, &steps, data).unwrap());
            assert_eq!(i32_at(&out, 8), a.wrapping_add(b));
        }
    }

    #[test]
    fn state_persists_between_runs() {
        // acc = acc + step, run three times
        let db = db();
        let steps = [
            step(&db, "st_copy_f_m_r0", Some(0)),
            step(&db, "st_add_f_r0m_r0", Some(4)),
            step(&db, "st_store_f_r0", Some(0)),
        ];
        let p = link(&db, &steps, floats(&[1.0, 0.5])).unwrap();
        let mut loaded = copapy_runner::LoadedProgram::load(&p).unwrap();
        for _ in 0..3 {
            loaded.run();
        }
        assert_eq!(f32_at(loaded.data(), 0), 2.5);
        loaded.reset_data();
        assert_eq!(f32_at(loaded.data(), 0), 1.0);
    }

    #[test]
    fn thirty_thousand_steps_run() {
        // x = x + 1 repeated 10_000 times (3 steps each)
        let db = db();
        let ops = [
            step(&db, "st_copy_f_m_r0", Some(0)),
            step(&db, "st_add_f_r0m_r0", Some(4)),
            step(&db, "st_store_f_r0", Some(0)),
        ];
        let steps: Vec<Step> = ops.iter().copied().cycle().take(30_000).collect();
        let data = run(&link(&db, &steps, floats(&[0.0, 1.0])).unwrap());
        let mut want = 0.0f32;
        for _ in 0..10_000 {
            want += 1.0;
        }
        assert_eq!(f32_at(&data, 0), want);
    }
}
