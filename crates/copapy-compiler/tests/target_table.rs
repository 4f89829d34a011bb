//! `stencils/targets.json` is the shared target table (`copapy_program::targets`) written
//! out for the scripts that run before the Python extension exists (`stencils/build.py`
//! reads its rows and compiler flags). This test keeps the file equal to the table;
//! `COPAPY_BLESS=1 cargo test -p copapy-compiler --test target_table` rewrites it.
//! `tests/targets/test_target_table.py` checks that Python's view (`_core.targets()`),
//! the stencil build, the emulator and the scripts agree with it.

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

#[test]
fn targets_json_is_the_shared_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../stencils/targets.json");
    let want = render();
    if std::env::var_os("COPAPY_BLESS").is_some() {
        std::fs::write(path, &want).expect("stencils/ is writable");
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "stencils/targets.json differs from copapy_program::targets::TARGETS: rewrite it with \
         COPAPY_BLESS=1 cargo test -p copapy-compiler --test target_table"
    );
}
