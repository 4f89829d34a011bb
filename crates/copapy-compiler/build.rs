//! Lists the stencil object of every row of the shared target table
//! (`copapy_program::targets::TARGETS`), so a target added there needs no second list
//! here: `targets.rs` includes `$OUT_DIR/stencil_objects.rs`.

use std::fmt::Write as _;
use std::path::PathBuf;

use copapy_program::targets::TARGETS;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let stencils = root.join("../../stencils");
    let mut out = String::from(
        "/// The stencil object of each target, named as the target, in the order of the \
         shared table.\npub static STENCILS: [(&str, &[u8]); INFOS.len()] = [\n",
    );
    for t in &TARGETS {
        let object = stencils.join(format!("{}.o", t.name));
        println!("cargo:rerun-if-changed={}", object.display());
        writeln!(
            out,
            "    ({:?}, include_bytes!({:?})),",
            t.name,
            object.display().to_string()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../copapy-program/src/targets.rs");
    let dest =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("stencil_objects.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
