//! `Target.save` / `Target.program_bytes`: the program file with the data image as the
//! device holds it now.
//!
//! A program's data image starts as the compiler laid it out; `write_value` and the
//! state updates of each `run()` change it on the device (host memory, the emulator, a
//! remote `copapy-run`). Saving copies the current bytes of every variable a user can
//! write (inputs, state and data arrays) from the device into the image, so gains tuned
//! in Python and a loop's state are in the file. Nothing else is copied: outputs keep
//! their initial bytes, as in any freshly compiled program.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use copapy_program::{Program, Symbol};

use crate::device::Device;

/// Byte ranges `[start, end)` of data memory, sorted, overlapping and touching ones merged.
pub fn merge(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// The bytes of every writable symbol (role input or state), one range per element.
pub fn writable_symbol_ranges(symbols: &[Symbol]) -> impl Iterator<Item = (u32, u32)> + '_ {
    symbols.iter().filter(|s| s.role.writable()).flat_map(|s| {
        let size = s.ty.size() as u32;
        s.offsets.iter().map(move |&o| (o, o + size))
    })
}

/// Ranges closer than this are read from a remote device in one request (fewer round
/// trips); only the writable bytes of what is read are kept.
const READ_GAP: u32 = 256;

/// `program` encoded with its data image updated from `device` in `ranges` (merged,
/// inside the data image). A device that cannot run the program (no emulator) can
/// have had nothing written, so its image is the initial one.
pub fn encode_current(
    py: Python<'_>,
    program: &Program,
    device: &Device,
    ranges: &[(u32, u32)],
) -> PyResult<Vec<u8>> {
    if matches!(device, Device::Unavailable(_)) || ranges.is_empty() {
        return Ok(program.encode());
    }
    // every range lies in the image (symbols are validated, slots allocated there); a
    // range that did not would be a compiler bug, reported rather than a panic
    let len = program.data.len();
    if ranges.iter().any(|&(_, e)| e as usize > len) {
        return Err(PyRuntimeError::new_err(format!(
            "internal error: a variable lies outside the {len}-byte data image; \
             save(path, initial=True) still writes the program as compiled"
        )));
    }
    let mut current = program.clone();
    let mut i = 0;
    while i < ranges.len() {
        // one read covers ranges[i..j], whose gaps are small
        let mut j = i + 1;
        while j < ranges.len() && ranges[j].0 - ranges[j - 1].1 <= READ_GAP {
            j += 1;
        }
        let (start, end) = (ranges[i].0, ranges[j - 1].1);
        let mut buf = vec![0u8; (end - start) as usize];
        device.read(py, start, &mut buf).map_err(|e| {
            PyRuntimeError::new_err(format!(
                "cannot read the current values of the program's variables from its device \
                 ({}); save(path, initial=True) writes the program with its initial values",
                e.value(py)
            ))
        })?;
        for &(s, e) in &ranges[i..j] {
            let (from, to) = ((s - start) as usize, (e - start) as usize);
            current.data[s as usize..e as usize].copy_from_slice(&buf[from..to]);
        }
        i = j;
    }
    Ok(current.encode())
}

#[cfg(test)]
mod tests {
    use super::merge;

    #[test]
    fn merge_joins_overlapping_and_touching_ranges_only() {
        assert_eq!(
            merge(vec![(8, 12), (0, 4), (4, 8), (20, 24), (10, 16), (30, 31)]),
            vec![(0, 16), (20, 24), (30, 31)]
        );
        assert_eq!(merge(vec![]), vec![]);
    }
}
