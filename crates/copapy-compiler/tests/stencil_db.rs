//! Stencil database tests against small ELF objects compiled from `fixtures/*.c`
//! (rebuild them with `fixtures/build.sh`). Expected bytes are taken from `objdump -dr`
//! of the fixtures, not from the parser.

use copapy_compiler::stencil_db::{
    classify, reloc_name, Hole, HoleTarget, ObjectRole, StencilDb, StencilError,
};
use copapy_program::{Arch, Encoding};

static STENCILS: &[u8] = include_bytes!("fixtures/x86_64_stencils.o");
static BAD_RELOC: &[u8] = include_bytes!("fixtures/x86_64_bad_reloc.o");
static BAD_SYMBOL: &[u8] = include_bytes!("fixtures/x86_64_bad_symbol.o");

fn db() -> StencilDb {
    StencilDb::parse(STENCILS).expect("fixture parses")
}

#[test]
fn finds_every_stencil() {
    let db = db();
    assert_eq!(db.arch(), Arch::X86_64);
    let mut names: Vec<&str> = db.stencils().iter().map(|s| s.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "st_add_f_r0m_r0",
            "st_add_i_r0m_r0",
            "st_copy_f_m_r0",
            "st_copy_f_r0_r1",
            "st_copy_i_m_r0",
            "st_mul_f_r0r1_r0",
            "st_relu_f_r0_r0",
            "st_return",
            "st_store_f_r0",
            "st_store_i_r0",
            "st_table_f_r0_r0",
            "st_twice_f_r0_r0",
        ]
    );
    for (i, st) in db.stencils().iter().enumerate() {
        let id = db.id(&st.name).unwrap();
        assert_eq!(id.0 as usize, i);
        assert_eq!(db.stencil(id).name, st.name);
    }
    assert_eq!(db.id("st_nonexistent"), None);
    assert_eq!(db.return_stencil(), db.id("st_return"));
}

#[test]
fn drops_the_final_tail_jump() {
    let db = db();
    // f3 0f 10 05 <rel32>  movss xmm0, [rip + cp_mf]   (then e9 <rel32> jmp cp_next, dropped)
    let st = db.stencil(db.id("st_copy_f_m_r0").unwrap());
    assert_eq!(st.bytes, [0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0]);
    assert!(st.tail_dropped);
    assert!(st.has_data_hole);
    assert_eq!(
        st.holes,
        [Hole {
            offset: 4,
            encoding: Encoding::Rel32,
            addend: -4,
            target: HoleTarget::Data
        }]
    );
    // 8b 3d <rel32>  mov edi, [rip + cp_mi]
    let st = db.stencil(db.id("st_copy_i_m_r0").unwrap());
    assert_eq!(st.bytes, [0x8B, 0x3D, 0, 0, 0, 0]);
    assert_eq!(st.holes[0].offset, 2);
    assert_eq!(st.holes[0].target, HoleTarget::Data);
    // A register-only stencil has no holes at all.
    let st = db.stencil(db.id("st_mul_f_r0r1_r0").unwrap());
    assert!(st.holes.is_empty() && !st.has_data_hole && st.objects.is_empty());
}

#[test]
fn return_stencil_is_kept_whole() {
    let db = db();
    let st = db.stencil(db.return_stencil().unwrap());
    assert_eq!(st.bytes, [0xC3]);
    assert!(!st.tail_dropped);
    assert!(st.holes.is_empty());
}

#[test]
fn other_jumps_to_next_become_jump_to_end_holes() {
    let db = db();
    let st = db.stencil(db.id("st_relu_f_r0_r0").unwrap());
    // xorps; ucomiss; jbe +5; jmp cp_next (kept, hole at 9); xorps (final jmp dropped)
    assert_eq!(
        st.bytes,
        [0x0F, 0x57, 0xD2, 0x0F, 0x2E, 0xC2, 0x76, 0x05, 0xE9, 0, 0, 0, 0, 0x0F, 0x57, 0xC0]
    );
    assert_eq!(
        st.holes,
        [Hole {
            offset: 9,
            encoding: Encoding::Rel32,
            addend: -4,
            target: HoleTarget::Next
        }]
    );
    assert!(st.tail_dropped && !st.has_data_hole);
}

#[test]
fn helpers_and_rodata_are_objects_with_their_own_holes() {
    let db = db();
    let object = |name: &str| {
        let i = db
            .objects()
            .iter()
            .position(|o| o.name == name)
            .unwrap_or_else(|| panic!("no {name}"));
        (
            copapy_compiler::stencil_db::ObjectId(i as u32),
            &db.objects()[i],
        )
    };
    let (poly_id, poly) = object("cpm_poly");
    let (twice_id, twice) = object("cpm_twice");
    let (cst4_id, cst4) = object(".rodata.cst4");
    let (table_id, table) = object(".rodata.cpm_table");
    let (unused_id, _) = object("cpm_unused");
    assert_eq!(poly.role, ObjectRole::Helper);
    assert_eq!(cst4.role, ObjectRole::ReadOnly);
    assert_eq!(poly.align, 16);
    assert_eq!(cst4.align, 4);
    assert_eq!(table.align, 8);
    // mulss xmm0, [rip + c]; addss xmm0, [rip + c]; ret
    assert_eq!(poly.bytes[..4], [0xF3, 0x0F, 0x59, 0x05]);
    assert_eq!(poly.bytes.len(), 0x11);
    assert_eq!(poly.holes.len(), 2);
    for h in &poly.holes {
        assert!(matches!(h.target, HoleTarget::Object { object, .. } if object == cst4_id));
        assert_eq!((h.encoding, h.addend), (Encoding::Rel32, -4));
    }
    // The two constants 1.5 and 0.25 are where poly's holes point.
    let constant = |h: &Hole| match h.target {
        HoleTarget::Object { offset, .. } => f32::from_le_bytes(
            cst4.bytes[offset as usize..offset as usize + 4]
                .try_into()
                .unwrap(),
        ),
        _ => unreachable!(),
    };
    assert_eq!(constant(&poly.holes[0]), 1.5);
    assert_eq!(constant(&poly.holes[1]), 0.25);
    // cpm_twice calls cpm_poly.
    assert!(twice.holes.iter().any(|h| h.target
        == HoleTarget::Object {
            object: poly_id,
            offset: 0
        }
        && h.offset == 2));
    // The table holds the absolute address of cpm_poly.
    assert_eq!(
        table.holes,
        [Hole {
            offset: 0,
            encoding: Encoding::Abs64,
            addend: 0,
            target: HoleTarget::Object {
                object: poly_id,
                offset: 0
            }
        }]
    );

    // Stencils know their transitive object needs.
    let mut want = vec![poly_id, twice_id, cst4_id];
    want.sort();
    assert_eq!(db.stencil(db.id("st_twice_f_r0_r0").unwrap()).objects, want);
    let mut want = vec![poly_id, cst4_id, table_id];
    want.sort();
    assert_eq!(db.stencil(db.id("st_table_f_r0_r0").unwrap()).objects, want);
    assert!(db
        .stencils()
        .iter()
        .all(|s| !s.objects.contains(&unused_id)));
}

#[test]
fn unsupported_relocation_is_an_error_naming_type_symbol_and_stencil() {
    let e = StencilDb::parse(BAD_RELOC).unwrap_err();
    match &e {
        StencilError::UnsupportedRelocation {
            arch,
            r_type,
            symbol,
            owner,
            offset,
        } => {
            assert_eq!(*arch, Arch::X86_64);
            assert_eq!(*r_type, 11); // R_X86_64_32S
            assert_eq!(symbol, ".rodata.cst16");
            assert_eq!(owner, "stencil st_lut_f_r0_r0");
            assert_eq!(*offset, 0xa);
        }
        other => panic!("wrong error {other:?}"),
    }
    let msg = e.to_string();
    assert_eq!(
        msg,
        "unsupported relocation R_X86_64_32S (type 11) against '.rodata.cst16' at offset 0xa in stencil st_lut_f_r0_r0"
    );
}

#[test]
fn unknown_undefined_symbol_is_an_error() {
    let e = StencilDb::parse(BAD_SYMBOL).unwrap_err();
    assert_eq!(
        e,
        StencilError::UnknownSymbol {
            symbol: "sinf".into(),
            owner: "stencil st_sin_f_r0_r0".into()
        }
    );
    assert!(e.to_string().contains("undefined symbol 'sinf'"), "{e}");
}

#[test]
fn garbage_is_not_an_elf_object() {
    let e = StencilDb::parse(b"definitely not ELF").unwrap_err();
    assert!(matches!(e, StencilError::Elf(_)));
    assert!(e.to_string().starts_with("not a valid ELF object"), "{e}");
    // A truncated object is an error, not a panic.
    for len in [0, 16, 64, STENCILS.len() / 2, STENCILS.len() - 1] {
        let _ = StencilDb::parse(&STENCILS[..len]);
    }
}

#[test]
fn relocation_classification_is_by_raw_elf_type() {
    use object::elf;
    assert_eq!(
        classify(Arch::X86_64, elf::R_X86_64_PC32.0),
        Some(Encoding::Rel32)
    );
    assert_eq!(
        classify(Arch::X86_64, elf::R_X86_64_PLT32.0),
        Some(Encoding::Rel32)
    );
    assert_eq!(
        classify(Arch::X86_64, elf::R_X86_64_64.0),
        Some(Encoding::Abs64)
    );
    assert_eq!(classify(Arch::X86_64, elf::R_X86_64_GOTPCREL.0), None);
    assert_eq!(classify(Arch::X86_64, elf::R_X86_64_32S.0), None);
    // Same number, other architecture: not x86_64's meaning.
    assert_eq!(classify(Arch::AArch64, elf::R_X86_64_PC32.0), None);
    assert_eq!(reloc_name(Arch::X86_64, 9), "R_X86_64_GOTPCREL (type 9)");
    assert_eq!(
        classify(Arch::AArch64, elf::R_AARCH64_CALL26.0),
        Some(Encoding::A64Branch26)
    );
    assert_eq!(
        reloc_name(Arch::AArch64, 283),
        "R_AARCH64_CALL26 (type 283)"
    );
    assert_eq!(reloc_name(Arch::AArch64, 9999), "type 9999 (aarch64)");
    // ARM and Thumb share relocation numbers but not their meaning
    assert_eq!(
        classify(Arch::Thumb, elf::R_ARM_JUMP24.0),
        None,
        "ARM-state branch in Thumb code"
    );
    assert_eq!(
        classify(Arch::Arm, elf::R_ARM_THM_JUMP24.0),
        None,
        "Thumb branch in ARM code"
    );
}

/// The committed stencil object parses, and every stencil but `st_return` ends in a tail jump.
#[test]
fn project_stencil_object_parses() {
    let bytes = include_bytes!("../../../stencils/x86_64.o");
    let db = StencilDb::parse(bytes).unwrap_or_else(|e| panic!("stencils/x86_64.o: {e}"));
    assert!(
        db.return_stencil().is_some(),
        "stencils/x86_64.o has no st_return"
    );
    for st in db.stencils() {
        if st.name != "st_return" {
            assert!(
                st.tail_dropped,
                "{} does not end in a tail jump to cp_next",
                st.name
            );
        }
    }
}

/// Unwind tables (`.eh_frame`) refer to every function but are not code objects:
/// an object built without `-fno-asynchronous-unwind-tables` still parses.
#[test]
fn unwind_tables_are_ignored() {
    let db = StencilDb::parse(include_bytes!("fixtures/x86_64_unwind.o")).unwrap();
    assert_eq!(db.stencils().len(), 12);
    assert!(db.objects().iter().all(|o| o.name != ".eh_frame"));
}
