//! One loaded program and its variables by name: what every front end (command line,
//! stdio lines, frames over TCP or pipes) drives.
#![forbid(unsafe_code)]

use copapy_program::{Program, Role, ScalarType, Symbol};
use copapy_runner::LoadedProgram;

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
        let loaded = LoadedProgram::load(&program).map_err(|e| format!("cannot load: {e}"))?;
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

    /// The elements of variable `name` as 4-byte patterns.
    pub fn get(&self, name: &str) -> Result<Vec<u32>, String> {
        let s = self.symbol(name)?;
        let data = self.loaded.as_ref().expect("checked").0.data();
        Ok(s.offsets
            .iter()
            .map(|&o| {
                let o = o as usize;
                u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]])
            })
            .collect())
    }

    /// Sets every element of variable `name`; refuses outputs and a wrong count
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
        let offsets = s.offsets.clone();
        let data = self.loaded.as_mut().expect("checked").0.data_mut();
        for (o, b) in offsets.iter().zip(bits) {
            let o = *o as usize;
            data[o..o + 4].copy_from_slice(&b.to_le_bytes());
        }
        Ok(())
    }
}

/// Formats one element for text output: floats in their shortest round-trip form.
pub fn format_bits(ty: ScalarType, bits: u32) -> String {
    match ty {
        ScalarType::Float => format!("{:?}", f32::from_bits(bits)),
        ScalarType::Int => (bits as i32).to_string(),
        ScalarType::Bool => (bits != 0).to_string(),
    }
}

/// Parses one element from text.
pub fn parse_bits(ty: ScalarType, text: &str) -> Result<u32, String> {
    let bad = || format!("{text:?} is not a valid {} value", ty.name());
    match ty {
        ScalarType::Float => text.parse::<f32>().map(f32::to_bits).map_err(|_| bad()),
        ScalarType::Int => text.parse::<i32>().map(|v| v as u32).map_err(|_| bad()),
        ScalarType::Bool => match text {
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
