//! The functions `copapy-run` offers to programs' imports (`cp.extern`): built-ins
//! available everywhere, and C functions from shared libraries (`--plugin libio.so`).
//!
//! A plugin exports one function, with the firmware's table type
//! (`crates/copapy-firmware/include/copapy_runner.h`):
//!
//! ```c
//! const struct copapy_import *copapy_imports(uint32_t *count);
//! ```
//!
//! returning its table (`{name, function, signature}`, the table and its strings alive
//! while the library is loaded; libraries are never unloaded). An array argument
//! (signature code `F` or `I`) is two C parameters, the buffer's address and its
//! `int32_t` element count: `"v(F)"` is `void f(const float *values, int32_t n)`,
//! `"i(I)"` is `int32_t f(int32_t *counts, int32_t n)`. Plugins given later win
//! over earlier ones and over the built-ins for the same name. The built-ins:
//!
//! | name | signature | value |
//! | --- | --- | --- |
//! | `copapy_time_s` | `f()` | seconds since the runner started (monotonic clock) |
//! | `copapy_time_us` | `i()` | microseconds since the runner started, wrapping at 2^32 |
//! | `copapy_cycles` | `i()` | the low 32 bits of the CPU's cycle or timer counter (x86_64 `rdtsc`, AArch64 `cntvct_el0`; elsewhere the monotonic clock in ns) |
//!
//! Only this module (dlopen, dlsym, reading the plugin's table) contains `unsafe`.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use copapy_runner::imports::Resolution;

/// One function a program may import.
#[derive(Clone, Debug)]
struct Provided {
    name: String,
    signature: &'static str,
    addr: u64,
}

/// The firmware ABI's `struct copapy_import`.
#[repr(C)]
struct CImport {
    name: *const c_char,
    func: *const c_void,
    signature: *const c_char,
}

static PLUGINS: Mutex<Vec<Provided>> = Mutex::new(Vec::new());
static START: OnceLock<Instant> = OnceLock::new();

fn start() -> Instant {
    *START.get_or_init(Instant::now)
}

extern "C" fn copapy_time_s() -> f32 {
    start().elapsed().as_secs_f32()
}

extern "C" fn copapy_time_us() -> i32 {
    start().elapsed().as_micros() as u32 as i32
}

extern "C" fn copapy_cycles() -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc reads the time-stamp counter; no memory is touched.
        unsafe { core::arch::x86_64::_rdtsc() as u32 as i32 }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: reading the virtual counter register, allowed at EL0 on Linux.
        unsafe { core::arch::asm!("mrs {}, cntvct_el0", out(reg) v) };
        v as u32 as i32
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        start().elapsed().as_nanos() as u32 as i32
    }
}

fn builtins() -> [Provided; 3] {
    start();
    [
        (
            "copapy_time_s",
            "f()",
            copapy_time_s as extern "C" fn() -> f32 as usize,
        ),
        (
            "copapy_time_us",
            "i()",
            copapy_time_us as extern "C" fn() -> i32 as usize,
        ),
        (
            "copapy_cycles",
            "i()",
            copapy_cycles as extern "C" fn() -> i32 as usize,
        ),
    ]
    .map(|(name, signature, addr)| Provided {
        name: name.to_string(),
        signature,
        addr: addr as u64,
    })
}

/// Loads the plugin at `path` and adds its functions; the library stays loaded.
pub fn load_plugin(path: &str) -> Result<(), String> {
    let c_path = CString::new(path).map_err(|_| format!("plugin path {path:?} contains NUL"))?;
    let dl_error = || {
        // SAFETY: dlerror returns NULL or a NUL-terminated message.
        let e = unsafe { libc::dlerror() };
        if e.is_null() {
            "unknown error".to_string()
        } else {
            // SAFETY: non-null and NUL-terminated (dlerror's contract).
            unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
        }
    };
    // SAFETY: loading a shared library runs its constructors: the user asked for it.
    let lib = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        return Err(format!("cannot load plugin {path}: {}", dl_error()));
    }
    // SAFETY: `lib` is a handle from dlopen; the symbol name is NUL-terminated.
    let sym = unsafe { libc::dlsym(lib, c"copapy_imports".as_ptr()) };
    if sym.is_null() {
        return Err(format!(
            "plugin {path} does not export copapy_imports: define \
             const struct copapy_import *copapy_imports(uint32_t *count) (docs/copapy-run.md)"
        ));
    }
    type TableFn = unsafe extern "C" fn(*mut u32) -> *const CImport;
    // SAFETY: the documented C signature of the symbol.
    let table_fn = unsafe { std::mem::transmute::<*mut c_void, TableFn>(sym) };
    let mut count = 0u32;
    // SAFETY: calling the plugin's function with a valid out pointer.
    let table = unsafe { table_fn(&mut count) };
    if table.is_null() && count != 0 {
        return Err(format!(
            "plugin {path}: copapy_imports returned NULL with {count} entries"
        ));
    }
    let mut added = Vec::new();
    for k in 0..count as usize {
        // SAFETY: the plugin promises `count` entries with NUL-terminated strings.
        let (name, func, sig) = unsafe {
            let e = &*table.add(k);
            if e.name.is_null() || e.signature.is_null() || e.func.is_null() {
                return Err(format!("plugin {path}: entry {k} has a NULL field"));
            }
            (CStr::from_ptr(e.name), e.func, CStr::from_ptr(e.signature))
        };
        let name = name.to_str().unwrap_or("").to_string();
        let sig = sig.to_str().unwrap_or("");
        if !copapy_program::imports::is_c_identifier(name.as_bytes())
            || !copapy_program::imports::is_signature(sig.as_bytes())
        {
            return Err(format!(
                "plugin {path}: entry {k} ({name:?}, {sig:?}) needs a C identifier and a signature \
                 such as \"f(i)\""
            ));
        }
        added.push(Provided {
            name,
            signature: Box::leak(sig.to_string().into_boxed_str()),
            addr: func as usize as u64,
        });
    }
    PLUGINS
        .lock()
        .map_err(|_| "plugin table poisoned")?
        .extend(added);
    Ok(())
}

/// What this runner offers for `name`: the latest plugin's function, else a built-in.
pub fn resolve(name: &[u8], signature: &[u8]) -> Resolution<'static> {
    let plugins = PLUGINS.lock().map(|p| p.clone()).unwrap_or_default();
    let found = plugins
        .into_iter()
        .rev()
        .chain(builtins())
        .find(|p| p.name.as_bytes() == name);
    match found {
        None => Resolution::Missing,
        Some(p) if p.signature.as_bytes() == signature => Resolution::Found(p.addr),
        Some(p) => Resolution::OtherSignature(p.signature.as_bytes()),
    }
}
