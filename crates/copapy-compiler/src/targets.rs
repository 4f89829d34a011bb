//! The targets copapy compiles for: each row of the shared table
//! [`copapy_program::targets::TARGETS`] (name, aliases, instruction set, CPU features,
//! compiler flags) with the stencil object built for it by `stencils/build.py`.
//!
//! The instruction set ([`Arch`]) picks the relocation rules in [`crate::isa`]. Adding a
//! target is a row in the shared table (with its compiler flags) and its stencil object,
//! built by `stencils/build.py`; `build.rs` lists the objects from the table.

use std::ops::Deref;
use std::sync::OnceLock;

use copapy_program::targets::{TargetInfo, TARGETS as INFOS};
use copapy_program::Arch;

use crate::select::StencilTable;
use crate::stencil_db::StencilDb;

/// One target: its row of the shared table and its stencils. Dereferences to the row,
/// so `t.name`, `t.arch`, `t.features` read the one definition.
#[derive(Debug)]
pub struct Target {
    /// The shared definition (name, aliases, instruction set, features).
    pub info: &'static TargetInfo,
    /// The ELF stencil object.
    pub stencils: &'static [u8],
}

impl Deref for Target {
    type Target = TargetInfo;
    fn deref(&self) -> &TargetInfo {
        self.info
    }
}

// STENCILS: `build.rs` lists `stencils/<name>.o` for every row of the shared table
include!(concat!(env!("OUT_DIR"), "/stencil_objects.rs"));

/// Every target, in the order of the shared table.
pub static TARGETS: [Target; INFOS.len()] = {
    let mut out = [const {
        Target {
            info: &INFOS[0],
            stencils: &[],
        }
    }; INFOS.len()];
    let mut i = 0;
    while i < INFOS.len() {
        out[i] = Target {
            info: &INFOS[i],
            stencils: STENCILS[i].1,
        };
        i += 1;
    }
    out
};

/// A target's parsed stencils and its selection table.
pub struct Backend {
    /// The stencils.
    pub db: StencilDb,
    /// Stencil ids by operation and operand places.
    pub table: StencilTable,
}

impl Target {
    /// The target called `name` (or one of its aliases).
    ///
    /// ```
    /// let t = copapy_compiler::targets::Target::find("arm64").unwrap();
    /// assert_eq!(t.name, "aarch64");
    /// assert!(copapy_compiler::targets::Target::find("x86").is_err());
    /// ```
    pub fn find(name: &str) -> Result<&'static Target, String> {
        TargetInfo::find(name).map(Target::of).ok_or_else(|| {
            let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
            format!(
                "unknown target '{name}': copapy compiles for {} (or 'native' for this machine)",
                names.join(", ")
            )
        })
    }

    /// The compiler's target for a row of the shared table.
    pub fn of(info: &'static TargetInfo) -> &'static Target {
        TARGETS
            .iter()
            .find(|t| std::ptr::eq(t.info, info))
            .expect("TARGETS has a target for every row of the shared table")
    }

    /// The best target for a CPU of instruction set `arch` with `features` (see
    /// [`TargetInfo::for_cpu`]); the runner crate detects both for this machine.
    pub fn for_cpu(arch: Arch, features: copapy_program::Features) -> Option<&'static Target> {
        TargetInfo::for_cpu(arch, features).map(Target::of)
    }

    /// The parsed stencils, read on first use and kept for the process.
    pub fn backend(&'static self) -> Result<&'static Backend, String> {
        static BACKENDS: [OnceLock<Result<Backend, String>>; INFOS.len()] =
            [const { OnceLock::new() }; INFOS.len()];
        let index = TARGETS
            .iter()
            .position(|t| std::ptr::eq(t, self))
            .expect("targets are only made by this table");
        BACKENDS[index]
            .get_or_init(|| {
                let db = StencilDb::parse(self.stencils)
                    .map_err(|e| format!("the {} stencil object is invalid: {e}", self.name))?;
                let table = StencilTable::new(&db);
                Ok(Backend { db, table })
            })
            .as_ref()
            .map_err(String::clone)
    }
}
