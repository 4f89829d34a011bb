//! `stencils/targets.json` is the shared target table (`copapy_program::targets`) written
//! out for the scripts that run before the Python extension exists (`stencils/build.py`
//! reads its rows and compiler flags). This test keeps the file equal to the table;
//! `COPAPY_BLESS=1 cargo test -p copapy-compiler --test target_table` rewrites it.
//! `tests/targets/test_target_table.py` checks that Python's view (`_core.targets()`),
//! the stencil build, the emulator and the scripts agree with it.

use copapy_compiler::isa;
use copapy_program::isas::{IsaInfo, LibMode, ISAS};
use copapy_program::targets::{TargetInfo, TARGETS};
use copapy_program::Features;

fn string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<String> = items.into_iter().map(string).collect();
    format!("[{}]", items.join(", "))
}

fn row(t: &TargetInfo) -> String {
    let features = Features::NAMED
        .iter()
        .filter(|(f, _)| f.0 & t.features.0 != 0)
        .map(|(_, n)| *n);
    let qemu = t
        .qemu_user
        .map_or("null".to_owned(), |q| list([q.binary, q.cpu]));
    let unicorn = t.unicorn_cpu.map_or("null".to_owned(), string);
    format!(
        "  {{\"name\": {}, \"aliases\": {}, \"arch\": {}, \"features\": {}, \"machines\": {}, \
         \"qemu_user\": {}, \"unicorn_cpu\": {}, \"cflags\": {}}}",
        string(t.name),
        list(t.aliases.iter().copied()),
        string(t.arch.name()),
        list(features),
        string(t.machines),
        qemu,
        unicorn,
        list(t.cflags.iter().copied()),
    )
}

/// The table as JSON: one target per line, in the table's order.
fn render() -> String {
    let rows: Vec<String> = TARGETS.iter().map(row).collect();
    format!("[\n{}\n]\n", rows.join(",\n"))
}

fn lib_mode(m: &LibMode) -> String {
    format!(
        "{{\"arch\": {}, \"modes\": {}}}",
        string(m.arch),
        list(m.modes.iter().copied())
    )
}

fn isa_row(info: &IsaInfo) -> String {
    format!(
        "  {{\"arch\": {}, \"relocs\": {}, \"tail_reloc\": {}, \"call_relocs\": {}, \
         \"sqrt_insn\": {}, \"objdump\": {}, \"unicorn\": {}, \"capstone\": {}}}",
        string(info.arch.name()),
        list(info.relocs.iter().copied()),
        string(info.tail_reloc),
        list(info.call_relocs.iter().copied()),
        string(info.sqrt_insn),
        string(info.objdump),
        lib_mode(&info.unicorn.mode),
        lib_mode(&info.capstone),
    )
}

/// The instruction set table as JSON: one instruction set per line.
fn render_isas() -> String {
    let rows: Vec<String> = ISAS.iter().map(isa_row).collect();
    format!("[\n{}\n]\n", rows.join(",\n"))
}

mod common;

/// `stencils/<file>` must be `table` written out.
fn check_written(file: &str, want: &str, table: &str) {
    common::check_written(&format!("stencils/{file}"), want, table, "target_table");
}

#[test]
fn targets_json_is_the_shared_table() {
    check_written(
        "targets.json",
        &render(),
        "copapy_program::targets::TARGETS",
    );
}

#[test]
fn isas_json_is_the_isa_table() {
    check_written("isas.json", &render_isas(), "copapy_program::isas::ISAS");
}

/// `llvm-objdump`'s names that the `object` crate spells otherwise (same type number).
const OBJDUMP_NAMES: [(&str, &str); 1] = [("R_ARM_THM_CALL", "R_ARM_THM_PC22")];

/// Every relocation a row lets stencils contain is one the compiler's module patches,
/// so the stencil build never accepts an object the linker would refuse; the tail jump's
/// has the encoding its tail-jump rule expects; calls are among them.
#[test]
fn isa_rows_agree_with_the_compiler_modules() {
    for info in &ISAS {
        let rules = isa::isa(info.arch);
        let by_name = |name: &str| {
            let object_name = OBJDUMP_NAMES
                .iter()
                .find(|(o, _)| *o == name)
                .map_or(name, |(_, n)| n);
            (0..1024)
                .find(|&r| rules.reloc_name(r) == object_name)
                .unwrap_or_else(|| panic!("{name} is no relocation of {}", info.arch.name()))
        };
        for name in info.relocs {
            assert!(rules.classify(by_name(name)).is_some(), "{name}");
        }
        let tail = rules.classify(by_name(info.tail_reloc)).map(|k| k.encoding);
        assert_eq!(
            tail,
            Some(rules.tail_jump().encoding),
            "{}",
            info.arch.name()
        );
        assert!(info.relocs.contains(&info.tail_reloc));
        for call in info.call_relocs {
            assert!(info.relocs.contains(call), "{call}");
        }
    }
}
