//! The buffers of array arguments while a host program runs (`crate::imports`): the one
//! place that reads and writes the running program's data memory by address.
//!
//! A call stencil passes a buffer as an address and an element count. The trampoline
//! copies the buffer out for the Python callable and back after it; the address range is
//! checked first to lie inside the data memory of the program running on this thread
//! ([`DataWindow`], taken when the run starts), so even a damaged program file cannot make
//! this code touch other memory. The program's own code is suspended in the call, so
//! nothing else accesses the range meanwhile.

use pyo3::exceptions::PyRuntimeError;
use pyo3::PyResult;

/// The data memory of the program running on this thread: its address and length. The
/// loaded program keeps these pages mapped, readable and writable while it runs.
#[derive(Clone, Copy, Debug)]
pub struct DataWindow {
    base: usize,
    len: usize,
}

impl DataWindow {
    /// The window of `data`, the running program's data memory.
    pub fn of(data: &[u8]) -> DataWindow {
        DataWindow {
            base: data.as_ptr() as usize,
            len: data.len(),
        }
    }

    /// The byte range of `count` 4-byte elements at `addr`, if it is inside the window.
    fn range(&self, addr: usize, count: i32) -> PyResult<(usize, usize)> {
        let bytes = usize::try_from(count).ok().and_then(|n| n.checked_mul(4));
        let start = addr.checked_sub(self.base);
        match (start, bytes) {
            (Some(start), Some(bytes))
                if start.checked_add(bytes).is_some_and(|e| e <= self.len) =>
            {
                Ok((start, bytes))
            }
            _ => Err(PyRuntimeError::new_err(format!(
                "an import call passed a buffer of {count} elements at {addr:#x}, outside the \
                 program's data memory: the program file is damaged"
            ))),
        }
    }

    /// A copy of the `count` elements at `addr`.
    pub fn read(&self, addr: usize, count: i32) -> PyResult<Vec<u8>> {
        let (start, bytes) = self.range(addr, count)?;
        // SAFETY: `range` checked that the bytes lie inside the running program's data
        // memory, which is mapped read+write for the run; its code is suspended in this
        // call, so no other access overlaps.
        #[allow(unsafe_code)]
        let slice = unsafe { std::slice::from_raw_parts((self.base + start) as *const u8, bytes) };
        Ok(slice.to_vec())
    }

    /// Writes `data` (whole elements) to `addr`.
    pub fn write(&self, addr: usize, data: &[u8]) -> PyResult<()> {
        let count = i32::try_from(data.len() / 4).unwrap_or(i32::MAX);
        let (start, bytes) = self.range(addr, count)?;
        // SAFETY: as in `read`; the range is the one the call stencil passed, inside data.
        #[allow(unsafe_code)]
        let slice =
            unsafe { std::slice::from_raw_parts_mut((self.base + start) as *mut u8, bytes) };
        slice.copy_from_slice(&data[..bytes]);
        Ok(())
    }
}
