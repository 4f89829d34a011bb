//! Checks stencil objects with the linker's own rules (used by `stencils/build.py`).
//!
//! ```text
//! cargo run -q -p copapy-compiler --example stencil-check -- stencils/aarch64.o
//! ```
//!
//! Parses each object with [`StencilDb::parse`] — relocation types, addends, pairs and
//! the tail-jump rule of its instruction set — and links one program with every
//! stencil in it, so an object the compiler would reject fails here. Prints one line
//! per object; exits 1 if any is rejected.

use copapy_compiler::link::{link, Step};
use copapy_compiler::stencil_db::StencilDb;

fn check(path: &str) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let db = StencilDb::parse(&bytes).map_err(|e| e.to_string())?;
    let steps: Vec<Step> = (0..db.stencils().len() as u32)
        .map(|i| Step {
            stencil: copapy_compiler::stencil_db::StencilId(i),
            slot: Some(0),
            slot2: Some(4),
        })
        .collect();
    let program = link(&db, &steps, vec![0; 8]).map_err(|e| e.to_string())?;
    let dropped = db.stencils().iter().filter(|s| s.tail_dropped).count();
    Ok(format!(
        "{} stencils ({} with the tail jump dropped), {} helpers and constants; \
         all linked: {} code bytes, {} patches",
        db.stencils().len(),
        dropped,
        db.objects().len(),
        program.code.len(),
        program.patches.len()
    ))
}

fn main() {
    let mut failed = false;
    for path in std::env::args().skip(1) {
        match check(&path) {
            Ok(summary) => println!("{path}: {summary}"),
            Err(e) => {
                println!("{path}: {e}");
                failed = true;
            }
        }
    }
    std::process::exit(i32::from(failed));
}
