//! One loaded program and its variables by name: what every front end (command line,
//! stdio lines, frames over TCP or pipes) drives.
#![forbid(unsafe_code)]

use copapy_program::{ElementType, FormatError, InstructionBounds, Program, Role, Symbol};
use copapy_runner::{cpu, LoadError, LoadedProgram};

/// What this runner runs, as INFO answers and `--info` prints: the best target for its
/// CPU and the CPU's features, e.g. `armv7 armv6,armv7,vfp2,vfp3` (the target name
/// alone says what Python compiles for; the features let it check another target).
/// `unsupported <arch>` on a machine copapy has no target for.
pub fn info() -> String {
    match cpu::target() {
        Some(t) => format!("{} {}", t.name, cpu::features()),
        None => format!("unsupported {}", std::env::consts::ARCH),
    }
}

/// What `copapy-run PROGRAM --info` prints after [`info`]: the program's target and the
/// CPU features it needs, whether this runner accepts it (and if not, why), its sizes, and
/// its variables one `name role dtype shape` line each, in the order of its symbol table
/// (named variables as written, then `in0, in1, ...` in the order they were created, so
/// `--set in2=...` is the third input made). Describes a program for any target; only
/// running needs this CPU.
pub fn program_info(bytes: &[u8]) -> Result<String, FormatError> {
    let program = Program::decode(bytes)?;
    let needs = copapy_program::Features(program.features);
    let target = copapy_program::targets::TargetInfo::for_program(program.arch, needs)
        .map_or(program.arch.name(), |t| t.name);
    let verdict = match copapy_program::Arch::host() {
        Some(arch) if arch != program.arch => {
            format!(
                "no: it is {} code, this runner runs {}",
                program.arch.name(),
                arch.name()
            )
        }
        None => "no: copapy has no target for this CPU".to_string(),
        Some(_) => match needs.missing(cpu::features()) {
            lacking if lacking.is_empty() => "yes".to_string(),
            lacking => format!("no: this CPU lacks {lacking}"),
        },
    };
    let mut out = format!(
        "program {target} needs {needs}\naccepted {verdict}\ncode {} B, data {} B, {} patches, entry {}\n",
        program.code.len(),
        program.data.len(),
        program.patches.len(),
        program.entry
    );
    out.push_str(&placement_line(program.placement));
    out.push_str(&instructions_line(program.instructions));
    out.push_str(&format!("variables {}", program.symbols.len()));
    for s in &program.symbols {
        out.push_str("\n  ");
        out.push_str(&describe(s));
    }
    Ok(out)
}

/// The `--info` line on where the program may be loaded.
fn placement_line(placement: Option<copapy_program::Placement>) -> String {
    match placement {
        None => "placement relocatable: patched for wherever a runner loads it\n".into(),
        Some(p) => format!(
            "placement pre-linked: code at {:#x}, data at {:#x} (no patches); a runner loads it only at these addresses\n",
            p.code, p.data
        ),
    }
}

/// The `--info` line on how many instructions one run executes, as the file records it.
fn instructions_line(bounds: Option<InstructionBounds>) -> String {
    match bounds {
        Some(InstructionBounds::Known { fewest, most }) if fewest == most => {
            format!("instructions per run {fewest} to {most} (constant)\n")
        }
        Some(InstructionBounds::Known { fewest, most }) => {
            format!("instructions per run {fewest} to {most}\n")
        }
        Some(InstructionBounds::Unbounded) => {
            "instructions per run unbounded: has loop kernels without a static bound\n".into()
        }
        None => "instructions per run not recorded (the file does not carry them)\n".into(),
    }
}

/// Steps run between two checks in [`Session::run_checked`]: few enough that a check
/// comes soon after a client leaves, many enough that checking costs nothing measurable.
pub const CHECK_EVERY: u32 = 64;

/// A program loaded into host memory, with its symbol table.
pub struct Session {
    loaded: Option<(LoadedProgram, Program)>,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

fn no_program() -> String {
    "no program loaded: send a program file first".to_string()
}

impl Session {
    /// A session with nothing loaded.
    pub fn new() -> Session {
        Session { loaded: None }
    }

    /// Validates and loads a program file, replacing the current program only if the
    /// new one loads.
    pub fn load(&mut self, bytes: &[u8]) -> Result<(), String> {
        let program = Program::decode(bytes).map_err(|e| format!("bad program file: {e}"))?;
        let view = copapy_program::ProgramView::parse(bytes)
            .map_err(|e| format!("bad program file: {e}"))?;
        copapy_runner::imports::check_imports(view.imports(), crate::plugins::resolve)
            .map_err(|e| format!("cannot load: {e}"))?;
        let mut loaded = LoadedProgram::load(&program).map_err(|e| match e {
            LoadError::Format(FormatError::MissingFeatures { .. }) => match cpu::target() {
                Some(t) => format!("cannot load: {e}: cp.Target(\"{}\")", t.name),
                None => format!("cannot load: {e}"),
            },
            e => format!("cannot load: {e}"),
        })?;
        loaded.set_imports(view.imports(), crate::plugins::resolve);
        self.loaded = Some((loaded, program));
        Ok(())
    }

    /// Whether a program is loaded.
    pub fn is_loaded(&self) -> bool {
        self.loaded.is_some()
    }

    /// Runs the program `n` times.
    pub fn run(&mut self, n: u32) -> Result<(), String> {
        let (loaded, _) = self.loaded.as_mut().ok_or_else(no_program)?;
        for _ in 0..n {
            loaded.run();
        }
        Ok(())
    }

    /// Runs the program `n` times in chunks of [`CHECK_EVERY`] steps, asking
    /// `keep_going` between chunks (e.g. whether the client is still connected); returns
    /// whether all `n` steps ran.
    pub fn run_checked(
        &mut self,
        n: u32,
        mut keep_going: impl FnMut() -> bool,
    ) -> Result<bool, String> {
        let (loaded, _) = self.loaded.as_mut().ok_or_else(no_program)?;
        let mut left = n;
        while left > 0 {
            let chunk = left.min(CHECK_EVERY);
            for _ in 0..chunk {
                loaded.run();
            }
            left -= chunk;
            if left > 0 && !keep_going() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Runs the program once (the periodic loop's step; no checks on the hot path).
    pub fn step(&mut self) {
        if let Some((loaded, _)) = self.loaded.as_mut() {
            loaded.run();
        }
    }

    fn range(&self, offset: u32, size: usize) -> Result<core::ops::Range<usize>, String> {
        let (loaded, _) = self.loaded.as_ref().ok_or_else(no_program)?;
        let len = loaded.data().len();
        let start = offset as usize;
        match start.checked_add(size) {
            Some(end) if end <= len => Ok(start..end),
            _ => Err(format!(
                "data range {offset}+{size} is outside the program's {len} data bytes"
            )),
        }
    }

    /// Reads `size` bytes of data memory at `offset`.
    pub fn read(&self, offset: u32, size: u32) -> Result<Vec<u8>, String> {
        let r = self.range(offset, size as usize)?;
        Ok(self.loaded.as_ref().expect("checked").0.data()[r].to_vec())
    }

    /// Writes bytes into data memory at `offset`.
    pub fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), String> {
        let r = self.range(offset, bytes.len())?;
        self.loaded.as_mut().expect("checked").0.data_mut()[r].copy_from_slice(bytes);
        Ok(())
    }

    /// The symbol called `name`.
    pub fn symbol(&self, name: &str) -> Result<&Symbol, String> {
        let (_, program) = self.loaded.as_ref().ok_or_else(no_program)?;
        program
            .symbols
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = program.symbols.iter().map(|s| s.name.as_str()).collect();
                format!(
                    "no variable named {name:?}; the program has: {}",
                    names.join(", ")
                )
            })
    }

    /// All symbols of the loaded program.
    pub fn symbols(&self) -> Result<&[Symbol], String> {
        Ok(&self.loaded.as_ref().ok_or_else(no_program)?.1.symbols)
    }

    /// The elements of variable `name` as 4-byte patterns (a byte element as the
    /// int32 it holds, 0..=255).
    pub fn get(&self, name: &str) -> Result<Vec<u32>, String> {
        let s = self.symbol(name)?;
        let data = self.loaded.as_ref().expect("checked").0.data();
        // the offsets were checked against the data when the program was decoded
        let size = s.ty.size();
        Ok(s.offsets
            .iter()
            .map(|&o| {
                let mut word = [0u8; 4];
                word[..size].copy_from_slice(&data[o as usize..o as usize + size]);
                u32::from_le_bytes(word)
            })
            .collect())
    }

    /// Sets every element of variable `name` from 4-byte patterns (a byte element
    /// from an int32 0..=255); refuses outputs, a wrong count and out-of-range bytes
    /// without writing anything.
    pub fn set(&mut self, name: &str, bits: &[u32]) -> Result<(), String> {
        let s = self.symbol(name)?;
        if s.role == Role::Output {
            return Err(format!(
                "{name:?} is an output: the program overwrites it on every run"
            ));
        }
        if bits.len() != s.offsets.len() {
            return Err(format!(
                "{name:?} has {} elements, {} values given",
                s.offsets.len(),
                bits.len()
            ));
        }
        let ty = s.ty;
        if ty == ElementType::Byte {
            if let Some((k, &b)) = bits.iter().enumerate().find(|(_, &b)| b > 255) {
                return Err(format!(
                    "{name:?} is a byte variable: element {k} is {}, outside 0 to 255; \
                     nothing was written",
                    b as i32
                ));
            }
        }
        let offsets = s.offsets.clone();
        let data = self.loaded.as_mut().expect("checked").0.data_mut();
        for (o, b) in offsets.iter().zip(bits) {
            let o = *o as usize;
            data[o..o + ty.size()].copy_from_slice(&b.to_le_bytes()[..ty.size()]);
        }
        Ok(())
    }
}

/// Formats one element for text output: floats in their shortest round-trip form.
pub fn format_bits(ty: ElementType, bits: u32) -> String {
    match ty {
        ElementType::Float => format!("{:?}", f32::from_bits(bits)),
        ElementType::Int | ElementType::Byte => (bits as i32).to_string(),
        ElementType::Bool => (bits != 0).to_string(),
    }
}

/// Parses one element from text (a byte as any int32: [`Session::set`] says which
/// element is out of range).
pub fn parse_bits(ty: ElementType, text: &str) -> Result<u32, String> {
    let bad = || format!("{text:?} is not a valid {} value", ty.name());
    match ty {
        ElementType::Float => text.parse::<f32>().map(f32::to_bits).map_err(|_| bad()),
        ElementType::Int | ElementType::Byte => {
            text.parse::<i32>().map(|v| v as u32).map_err(|_| bad())
        }
        ElementType::Bool => match text {
            "true" | "1" | "True" => Ok(1),
            "false" | "0" | "False" => Ok(0),
            _ => Err(bad()),
        },
    }
}

/// `name role dtype shape` (shape as `2x3`, `-` for a scalar).
pub fn describe(s: &Symbol) -> String {
    let shape = if s.shape.is_empty() {
        "-".to_string()
    } else {
        s.shape
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("x")
    };
    format!("{} {} {} {shape}", s.name, s.role.name(), s.ty.name())
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use copapy_program::{Arch, ScalarType};

    /// A program that only returns, with a byte variable at the unaligned offsets 1..4
    /// between two int variables, so a write that spills shows in its neighbours.
    fn session() -> Session {
        let mut data = vec![0u8; 12];
        data[0] = 0xAA;
        data[4..8].copy_from_slice(&(-5i32).to_le_bytes());
        let mut p = Program::new(Arch::X86_64, vec![0xC3], data, vec![], 0);
        p.symbols = vec![
            Symbol::scalar("lo", Role::Input, ScalarType::Int, 8),
            Symbol {
                name: "b".into(),
                role: Role::Input,
                ty: ElementType::Byte,
                shape: vec![3],
                offsets: vec![1, 2, 3],
            },
            Symbol::scalar("w", Role::Input, ScalarType::Int, 4),
        ];
        let mut s = Session::new();
        s.load(&p.encode()).unwrap();
        s
    }

    #[test]
    fn info_prints_the_instruction_bounds_the_file_records() {
        let mut p = Program::new(Arch::X86_64, vec![0xC3], vec![0; 4], vec![], 0);
        let line = |p: &Program| {
            let info = program_info(&p.encode()).unwrap();
            let found = info.lines().find(|l| l.starts_with("instructions per run"));
            found.unwrap().to_string()
        };
        assert_eq!(
            line(&p),
            "instructions per run not recorded (the file does not carry them)"
        );
        p.instructions = Some(InstructionBounds::Known { fewest: 1, most: 1 });
        assert_eq!(line(&p), "instructions per run 1 to 1 (constant)");
        p.instructions = Some(InstructionBounds::Known {
            fewest: 12,
            most: 438,
        });
        assert_eq!(line(&p), "instructions per run 12 to 438");
        p.instructions = Some(InstructionBounds::Unbounded);
        assert_eq!(
            line(&p),
            "instructions per run unbounded: has loop kernels without a static bound"
        );
    }

    #[test]
    fn byte_variables_read_and_write_one_byte_per_element() {
        let mut s = session();
        assert_eq!(s.get("b").unwrap(), vec![0, 0, 0]);
        s.set("b", &[7, 0, 255]).unwrap();
        assert_eq!(s.get("b").unwrap(), vec![7, 0, 255]);
        assert_eq!(
            s.read(0, 8).unwrap(),
            [0xAA, 7, 0, 255, 0xFB, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(describe(s.symbol("b").unwrap()), "b input byte 3");
        let text: Vec<u32> = ["1", "2", "3"]
            .iter()
            .map(|t| parse_bits(ElementType::Byte, t).unwrap())
            .collect();
        s.set("b", &text).unwrap();
        assert_eq!(
            s.get("b")
                .unwrap()
                .iter()
                .map(|&b| format_bits(ElementType::Byte, b))
                .collect::<Vec<_>>(),
            ["1", "2", "3"]
        );
    }

    #[test]
    fn out_of_range_bytes_are_refused_and_nothing_is_written() {
        let mut s = session();
        s.set("b", &[1, 2, 3]).unwrap();
        let before = s.read(0, 12).unwrap();
        let e = s.set("b", &[9, 256, 9]).unwrap_err();
        assert!(e.contains("element 1 is 256, outside 0 to 255"), "{e}");
        let minus_one = parse_bits(ElementType::Byte, "-1").unwrap();
        let e = s.set("b", &[minus_one, 0, 0]).unwrap_err();
        assert!(e.contains("element 0 is -1"), "{e}");
        assert!(parse_bits(ElementType::Byte, "1.5").is_err());
        assert_eq!(s.read(0, 12).unwrap(), before);
    }
}
