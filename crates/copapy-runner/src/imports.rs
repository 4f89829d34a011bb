//! Resolving a program's imported functions (`cp.extern`) at load, by name.
//!
//! Every runner does the same two steps: [`check_imports`] asks its resolver for every
//! import the program declares and refuses the program, naming the first import it
//! cannot resolve or whose signature differs, before anything is written; after the
//! program is installed, [`write_import_table`] writes each function's address into the
//! program's import table in data memory (8 bytes per entry, little-endian; the code
//! calls through it, so code is never patched with these addresses).

use core::fmt;

use copapy_program::imports::IMPORT_ENTRY_BYTES;
use copapy_program::{ImportTable, ImportView};

/// What a runner offers for one import name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution<'s> {
    /// The function's address; the runner's signature for it equals the program's.
    Found(u64),
    /// The runner has no function of this name.
    Missing,
    /// The runner's function of this name has this other signature.
    OtherSignature(&'s str),
}

/// Why a program's imports could not be resolved: the import and what was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportError<'a, 's> {
    /// The import the program declares.
    pub import: ImportView<'a>,
    /// The runner's signature for that name, or None if it has no such function.
    pub offered: Option<&'s str>,
}

impl fmt::Display for ImportError<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, sig) = (self.import.name, self.import.signature);
        match self.offered {
            None => write!(
                f,
                "the program calls import {name} (signature {sig}), which this runner does not \
                 provide: give it a function of that name (Target(..., imports={{...}}), \
                 copapy-run --plugin, the firmware's import table)"
            ),
            Some(other) => write!(
                f,
                "the program calls import {name} with signature {sig}, but this runner's {name} \
                 has signature {other}: rebuild one of them so the signatures match"
            ),
        }
    }
}

/// Resolves every import of `table` with `resolve(name, signature)`; the first failure
/// is returned. Call it before writing anything, so a refused program changes nothing.
pub fn check_imports<'a, 's>(
    table: ImportTable<'a>,
    mut resolve: impl FnMut(&str, &str) -> Resolution<'s>,
) -> Result<(), ImportError<'a, 's>> {
    for import in table.iter() {
        match resolve(import.name, import.signature) {
            Resolution::Found(_) => {}
            Resolution::Missing => {
                return Err(ImportError {
                    import,
                    offered: None,
                })
            }
            Resolution::OtherSignature(other) => {
                return Err(ImportError {
                    import,
                    offered: Some(other),
                })
            }
        }
    }
    Ok(())
}

/// Writes each resolved import's address into its entry of `data` (the installed data
/// buffer). Imports `resolve` does not find are left as they are ([`check_imports`]
/// first); entries outside `data` cannot occur for a validated table and are skipped.
pub fn write_import_table<'s>(
    table: ImportTable<'_>,
    data: &mut [u8],
    mut resolve: impl FnMut(&str, &str) -> Resolution<'s>,
) {
    for import in table.iter() {
        if let Resolution::Found(addr) = resolve(import.name, import.signature) {
            let at = import.slot as usize;
            if let Some(entry) = data.get_mut(at..at + IMPORT_ENTRY_BYTES as usize) {
                for (d, s) in entry.iter_mut().zip(addr.to_le_bytes()) {
                    *d = s;
                }
            }
        }
    }
}
