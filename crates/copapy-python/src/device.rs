//! Devices: where a compiled program runs.
//!
//! `Target` talks to one small interface — install a program, write bytes, run, read
//! bytes — so `compile`, `run`, `read_value` and `write_value` behave the same on every
//! device:
//!
//! * [`Device::Host`]: this process's memory (mmap, W^X), called directly;
//! * [`Device::Python`]: any Python object with `install(program: bytes)`, `run()`,
//!   `read(offset, size) -> bytes` and `write(offset, data)` (see
//!   `python/copapy/_device.py`): the emulator for foreign architectures
//!   (`copapy._emulator`), a remote runner; it receives the whole program file;
//! * [`Device::Unavailable`]: the program was compiled (it can be saved) but nothing
//!   here can run it; every access says why.

use pyo3::exceptions::{PyMemoryError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use copapy_program::Program;
use copapy_runner::{LoadError, LoadedProgram};

/// The Python exception for a program that could not be loaded into host memory:
/// `MemoryError` when the operating system refused the memory (so callers can free
/// programs and retry), `RuntimeError` for anything else.
pub fn load_error(e: LoadError) -> PyErr {
    match e {
        LoadError::Os { .. } => PyMemoryError::new_err(format!(
            "the operating system refused memory for the compiled program ({e}): too many \
             programs may be loaded at once; drop Targets and jit functions no longer needed, \
             or give jit functions a smaller cache_size"
        )),
        e => PyRuntimeError::new_err(format!("cannot load the compiled program: {e}")),
    }
}

/// The first offset of `slots` if every slot is there and each lies 4 bytes after the one
/// before (one device access, or one copy, reaches them all); `None` otherwise or if empty.
pub fn run_start(slots: impl IntoIterator<Item = Option<u32>>) -> Option<u32> {
    let mut slots = slots.into_iter();
    let start = slots.next()??;
    let mut next = u64::from(start) + 4;
    for slot in slots {
        if u64::from(slot?) != next {
            return None;
        }
        next += 4;
    }
    Some(start)
}

/// One element to store in data memory: its offset and the low `size` bytes of
/// `bits` (4 for a scalar slot, 1 for a byte element).
#[derive(Clone, Copy, Debug)]
pub struct DataWrite {
    pub offset: u32,
    pub bits: u32,
    pub size: u8,
}

impl DataWrite {
    /// A whole 4-byte slot.
    pub fn word(offset: u32, bits: u32) -> DataWrite {
        DataWrite {
            offset,
            bits,
            size: 4,
        }
    }

    /// The bytes written, little-endian.
    pub fn bytes(&self) -> impl Iterator<Item = u8> {
        self.bits.to_le_bytes().into_iter().take(self.size.into())
    }
}

/// Where a program runs.
pub enum Device {
    /// Host memory: the program is loaded and called in this process.
    Host(LoadedProgram),
    /// Host memory, for a program that calls imported functions (Python callables).
    HostImports(LoadedProgram, crate::imports::HostImports),
    /// A Python object implementing the device protocol.
    Python(Py<PyAny>),
    /// No device: the message says why and how to get one.
    Unavailable(String),
}

impl Device {
    /// Loads `program` into host memory, its imports served by the callables of
    /// `imports` (refused, naming the import, before anything runs).
    pub fn host_with_imports(
        program: &Program,
        imports: Option<&pyo3::Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Device> {
        let mut loaded = LoadedProgram::load(program).map_err(load_error)?;
        Ok(
            match crate::imports::HostImports::resolve(program, imports, &mut loaded)? {
                None => Device::Host(loaded),
                Some(i) => Device::HostImports(loaded, i),
            },
        )
    }

    /// Installs `program` on the Python device `device`.
    pub fn python(py: Python<'_>, device: Py<PyAny>, program: &Program) -> PyResult<Device> {
        let file = PyBytes::new(py, &program.encode());
        device.bind(py).call_method1("install", (file,))?;
        Ok(Device::Python(device))
    }

    fn unavailable(why: &str) -> PyErr {
        PyRuntimeError::new_err(why.to_string())
    }

    /// Runs the program once.
    pub fn run(&mut self, py: Python<'_>) -> PyResult<()> {
        match self {
            Device::Host(p) => {
                p.run();
                Ok(())
            }
            Device::HostImports(p, imports) => imports.run(py, p),
            Device::Python(d) => d.bind(py).call_method0("run").map(drop),
            Device::Unavailable(why) => Err(Self::unavailable(why)),
        }
    }

    /// Reads `out.len()` bytes of data memory at `offset`.
    pub fn read(&self, py: Python<'_>, offset: u32, out: &mut [u8]) -> PyResult<()> {
        match self {
            Device::Host(p) | Device::HostImports(p, _) => {
                let o = offset as usize;
                out.copy_from_slice(&p.data()[o..o + out.len()]);
                Ok(())
            }
            Device::Python(d) => {
                let got = d.bind(py).call_method1("read", (offset, out.len()))?;
                let bytes: &[u8] = got.cast::<PyBytes>()?.as_bytes();
                if bytes.len() != out.len() {
                    return Err(PyRuntimeError::new_err(format!(
                        "the device returned {} bytes for a read of {}",
                        bytes.len(),
                        out.len()
                    )));
                }
                out.copy_from_slice(bytes);
                Ok(())
            }
            Device::Unavailable(why) => Err(Self::unavailable(why)),
        }
    }

    /// Reads a 4-byte little-endian slot.
    pub fn read_u32(&self, py: Python<'_>, offset: u32) -> PyResult<u32> {
        let mut b = [0u8; 4];
        self.read(py, offset, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Writes `bytes` into data memory at `offset`.
    pub fn write(&mut self, py: Python<'_>, offset: u32, bytes: &[u8]) -> PyResult<()> {
        match self {
            Device::Host(p) | Device::HostImports(p, _) => {
                let o = offset as usize;
                p.data_mut()[o..o + bytes.len()].copy_from_slice(bytes);
                Ok(())
            }
            Device::Python(d) => d
                .bind(py)
                .call_method1("write", (offset, PyBytes::new(py, bytes)))
                .map(drop),
            Device::Unavailable(why) => Err(Self::unavailable(why)),
        }
    }
}

/// `place_program(program, code_addr, data_addr, target) -> (code, data, entry)`:
/// validates a program file for the device `target` (its architecture, CPU features
/// and the alignment of the two addresses) and returns its code patched for those
/// addresses, its initial data and the entry address (with the Thumb bit for Thumb
/// code). For devices that place programs in memory themselves (the emulator): the
/// runner core does the checks and the patching, exactly as on a real device.
#[pyfunction]
pub fn place_program<'py>(
    py: Python<'py>,
    program: &[u8],
    code_addr: u64,
    data_addr: u64,
    target: &str,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>, u64)> {
    use copapy_program::format::Section;
    let spec = copapy_compiler::targets::Target::find(target)
        .map_err(pyo3::exceptions::PyValueError::new_err)?;
    let invalid = |e: copapy_program::FormatError| {
        pyo3::exceptions::PyValueError::new_err(format!("invalid program file: {e}"))
    };
    let refused = |e: copapy_program::FormatError| {
        PyRuntimeError::new_err(format!(
            "this {} device cannot run the program: {e}",
            spec.name
        ))
    };
    let view = copapy_program::ProgramView::parse(program).map_err(invalid)?;
    view.check_arch(spec.arch).map_err(refused)?;
    view.check_features(spec.features.0).map_err(refused)?;
    if let Some(placement) = view.placement() {
        placement
            .check_buffers(code_addr, data_addr)
            .map_err(refused)?;
    }
    copapy_runner::check_aligned(Section::Code, view.code_align, code_addr as usize)
        .map_err(refused)?;
    copapy_runner::check_aligned(Section::Data, view.data_align, data_addr as usize)
        .map_err(refused)?;
    let mut code = view.code.to_vec();
    copapy_runner::apply_patch_iter(
        &mut code,
        code_addr,
        data_addr,
        view.data.len(),
        view.patches(),
    )
    .map_err(|e| PyRuntimeError::new_err(format!("cannot place the program: {e}")))?;
    let thumb = u64::from(view.arch == copapy_program::Arch::Thumb);
    Ok((
        PyBytes::new(py, &code),
        PyBytes::new(py, &view.data.to_vec()),
        (code_addr + view.entry as u64) | thumb,
    ))
}

#[cfg(test)]
mod tests {
    use super::run_start;

    #[test]
    fn a_run_is_every_slot_four_bytes_after_the_one_before() {
        assert_eq!(run_start([Some(8), Some(12), Some(16)]), Some(8));
        assert_eq!(run_start([Some(8)]), Some(8));
        assert_eq!(run_start([Some(8), Some(16)]), None);
        assert_eq!(run_start([Some(12), Some(8)]), None);
        assert_eq!(run_start([Some(8), None, Some(16)]), None);
        assert_eq!(run_start([None]), None);
        assert_eq!(run_start(std::iter::empty()), None);
        assert_eq!(run_start([Some(u32::MAX - 3), Some(3)]), None);
    }
}
