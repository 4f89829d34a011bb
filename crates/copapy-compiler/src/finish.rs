//! A finished program: compiled for a target, with the CPU features its stencils need,
//! the symbol table of its variables and its imports, validated. This is what any
//! front end (the Python binding, a command-line tool, a Rust test) calls to make a
//! complete program file from traced values; the caller only says which values to
//! compute, which to name, and which states to update.
//!
//! Naming rules (the same for every front end):
//! - a [`Variable`] with a name keeps it (a name given twice is an error);
//! - a variable without one (a positional argument) gets `out<k>`, unless it is a single
//!   value a named variable covers already, or is empty or mixes element types;
//! - every input or state the program reads that no variable covers gets its own
//!   symbol: the name [`Request::name_of`] gives it (`cp.value(name=...)`), else `in<k>`,
//!   numbered in the order the inputs were created.
//!
//! The instruction bounds (format version 4) are left to the caller ([`with_bounds`]):
//! they come from the stencil build's table, and the Python binding adds them only
//! when a program is saved, so compiling pays nothing for them.

use std::fmt;

use copapy_program::names::{check_name, NameProblem, NAME_RULE};
use copapy_program::FormatError;
use copapy_program::{ElementType, InstructionBounds, Program, Role, Symbol};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::array;
use crate::compile::{compile_with_run_outputs, CompileError, Compiled};
use crate::graph::Value;
use crate::loops::LoopSpan;
use crate::stencil_db::StencilId;
use crate::targets::Target;

/// A value or container the caller wants in the symbol table: its elements, row-major.
#[derive(Clone, Debug)]
pub struct Variable {
    /// The given name, or None for a positional output (named `out<k>`).
    pub name: Option<String>,
    /// The shape (empty for a scalar); multiplies out to the element count, where an
    /// array value counts its length.
    pub shape: Vec<u32>,
    /// The elements (numbers are constant values, so they get a slot too).
    pub values: Vec<Value>,
    /// For each element: whether it is an output of the run although its node is an
    /// updated state (see [`compile_with_run_outputs`]): it gets a slot of its own that
    /// holds the run's value. Empty means none is.
    pub run: Vec<bool>,
}

impl Variable {
    /// A variable with no element aliasing a state.
    pub fn new(name: Option<String>, shape: Vec<u32>, values: Vec<Value>) -> Variable {
        Variable {
            name,
            shape,
            values,
            run: Vec::new(),
        }
    }

    fn is_run(&self, k: usize) -> bool {
        self.run.get(k).copied().unwrap_or(false)
    }
}

/// What to compile: the outputs, the variables to name and the state updates.
pub struct Request<'a> {
    /// The values to compute, in order.
    pub outputs: Vec<Value>,
    /// The named variables and positional outputs, in the order their names are taken
    /// (given names first, then positional ones; see the module docs).
    pub variables: Vec<Variable>,
    /// `(state, next)` pairs: `next` is stored into the variable `state` at the end of
    /// every run.
    pub updates: Vec<(Value, Value)>,
    /// The name a variable was created with, if any (a registry the front end keeps).
    pub name_of: &'a dyn Fn(&Value) -> Option<String>,
}

/// Why a program could not be finished.
#[derive(Debug)]
pub enum FinishError {
    /// The target's stencil object could not be read.
    Target(String),
    /// Compilation failed.
    Compile(CompileError),
    /// A name a program file cannot carry.
    BadName { name: String, problem: NameProblem },
    /// One name given to two variables.
    DuplicateName(String),
    /// A variable has an element the compiled program has no slot for.
    NotCompiled(String),
    /// A variable mixes element types.
    MixedTypes(String),
    /// The finished program fails validation (a compiler bug).
    Invalid(FormatError),
}

impl fmt::Display for FinishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FinishError::Target(e) => f.write_str(e),
            FinishError::Compile(e) => e.fmt(f),
            FinishError::BadName { name, problem } => {
                write!(
                    f,
                    "invalid variable name {name:?}: it {problem}; {NAME_RULE}"
                )
            }
            FinishError::DuplicateName(name) => write!(
                f,
                "the name {name:?} is given to two different variables: names must be unique"
            ),
            FinishError::NotCompiled(name) => write!(
                f,
                "variable {name:?} has an element that is not part of the compiled program"
            ),
            FinishError::MixedTypes(name) => write!(
                f,
                "variable {name:?} mixes element types: a named container needs one dtype"
            ),
            FinishError::Invalid(e) => write!(f, "compiled program is invalid: {e}"),
        }
    }
}

impl std::error::Error for FinishError {}

impl From<CompileError> for FinishError {
    fn from(e: CompileError) -> Self {
        FinishError::Compile(e)
    }
}

/// Refuses a name that program files cannot carry.
pub fn check_variable_name(name: &str) -> Result<(), FinishError> {
    check_name(name.as_bytes()).map_err(|problem| FinishError::BadName {
        name: name.to_owned(),
        problem,
    })
}

/// Collects names so that generated ones never collide with given ones.
#[derive(Default)]
struct NameSet {
    taken: FxHashSet<String>,
}

impl NameSet {
    /// Claims a given name: an error if it is invalid or used twice.
    fn claim(&mut self, name: &str) -> Result<(), FinishError> {
        check_variable_name(name)?;
        if !self.taken.insert(name.to_owned()) {
            return Err(FinishError::DuplicateName(name.to_owned()));
        }
        Ok(())
    }

    /// A fresh `prefix<k>` name.
    fn generate(&mut self, prefix: &str, counter: &mut usize) -> String {
        loop {
            let name = format!("{prefix}{counter}");
            *counter += 1;
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

/// How the symbol table stores the elements of `v`: a byte array one byte each,
/// anything else 4 bytes of its scalar type.
pub fn element_type(v: &Value) -> ElementType {
    if array::is_bytes(v) {
        ElementType::Byte
    } else {
        v.ty().into()
    }
}

/// A [`Request`] with its names checked and its positional outputs chosen: what is
/// compiled, in which order ([`Plan::values`]), before anything is compiled.
pub struct Plan<'a> {
    request: Request<'a>,
    /// Where the elements of each variable start in [`Plan::values`]; None for a
    /// positional output that gets no symbol.
    first: Vec<Option<usize>>,
    values: Vec<Value>,
    run_outputs: Vec<usize>,
    taken: NameSet,
    /// Nodes a named variable exposes (not only as a run's copy): they get no `in<k>`.
    covered: FxHashSet<usize>,
}

impl<'a> Plan<'a> {
    /// Checks the given names and lays out what is compiled: the outputs, then the
    /// elements of every variable that gets a symbol.
    pub fn new(request: Request<'a>) -> Result<Plan<'a>, FinishError> {
        let mut taken = NameSet::default();
        for v in &request.variables {
            if let Some(name) = &v.name {
                taken.claim(name)?;
            }
        }
        // what the named variables cover: a node, or (true) the run's copy of a state's node
        let named: FxHashSet<(usize, bool)> = request
            .variables
            .iter()
            .filter(|v| v.name.is_some())
            .flat_map(|v| {
                v.values
                    .iter()
                    .enumerate()
                    .map(move |(k, e)| (e.id(), v.is_run(k)))
            })
            .collect();
        let covered = named.iter().filter(|k| !k.1).map(|k| k.0).collect();
        let mut values = request.outputs.clone();
        let mut run_outputs = Vec::new();
        let mut first = Vec::with_capacity(request.variables.len());
        for v in &request.variables {
            let keep = v.name.is_some() || {
                let one_dtype = v
                    .values
                    .windows(2)
                    .all(|w| element_type(&w[0]) == element_type(&w[1]));
                let already =
                    v.values.len() == 1 && named.contains(&(v.values[0].id(), v.is_run(0)));
                one_dtype && !already && !v.values.is_empty()
            };
            if !keep {
                first.push(None);
                continue;
            }
            let start = values.len();
            first.push(Some(start));
            run_outputs.extend(
                (0..v.values.len())
                    .filter(|&k| v.is_run(k))
                    .map(|k| start + k),
            );
            values.extend(v.values.iter().cloned());
        }
        Ok(Plan {
            request,
            first,
            values,
            run_outputs,
            taken,
            covered,
        })
    }

    /// Every value compiled: the outputs, then each kept variable's elements.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// Where variable `k`'s elements start in [`Plan::values`] (None: no symbol).
    pub fn first(&self, k: usize) -> Option<usize> {
        self.first[k]
    }

    /// Compiles for `target` and finishes the program: features, symbols, validation.
    pub fn finish(self, target: &'static Target) -> Result<Compiled, FinishError> {
        let be = target.backend().map_err(FinishError::Target)?;
        let mut compiled = compile_with_run_outputs(
            &be.db,
            &be.table,
            &self.values,
            &self.request.updates,
            &self.run_outputs,
        )?;
        compiled.program.features = target.features.0;
        compiled.program.symbols = self.symbols(&compiled)?;
        compiled.program.validate().map_err(FinishError::Invalid)?;
        Ok(compiled)
    }

    /// The symbol table once `compiled` is known.
    fn symbols(mut self, compiled: &Compiled) -> Result<Vec<Symbol>, FinishError> {
        let updates = &self.request.updates;
        let mut slot_of: FxHashMap<usize, u32> = FxHashMap::default();
        for (v, &o) in self.values.iter().zip(&compiled.outputs) {
            slot_of.entry(v.id()).or_insert(o);
        }
        for ((state, _), &o) in updates.iter().zip(&compiled.states) {
            slot_of.insert(state.id(), o);
        }
        for (v, o) in &compiled.inputs {
            slot_of.insert(v.id(), *o);
        }
        // (variable, its first position, or None for a variable's own symbol)
        let mut planned: Vec<(Variable, Option<usize>)> = Vec::new();
        let mut generated = Vec::new();
        for (v, first) in std::mem::take(&mut self.request.variables)
            .into_iter()
            .zip(&self.first)
        {
            let Some(first) = *first else { continue };
            if v.name.is_none() {
                generated.push(planned.len());
            }
            planned.push((v, Some(first)));
        }
        let variables = compiled
            .inputs
            .iter()
            .map(|(v, _)| v)
            .chain(updates.iter().map(|(s, _)| s));
        let mut seen: FxHashSet<usize> = FxHashSet::default();
        let mut unnamed = Vec::new();
        let own = |name, v: &Value| {
            let shape = array::len_of(v).map(|n| vec![n]).unwrap_or_default();
            (Variable::new(name, shape, vec![v.clone()]), None)
        };
        for v in variables {
            if !seen.insert(v.id()) {
                continue;
            }
            match (self.request.name_of)(v) {
                Some(name) => {
                    self.taken.claim(&name)?;
                    planned.push(own(Some(name), v));
                }
                None if self.covered.contains(&v.id()) => {}
                None => unnamed.push(v.clone()),
            }
        }
        // `in0, in1, ...` in the order the user created the inputs, whatever order the
        // compiler reached them in, so `--set in2=...` means the third input made
        unnamed.sort_by_key(Value::seq);
        let (mut outs, mut ins) = (0, 0);
        for &i in &generated {
            planned[i].0.name = Some(self.taken.generate("out", &mut outs));
        }
        for v in unnamed {
            let name = self.taken.generate("in", &mut ins);
            planned.push(own(Some(name), &v));
        }
        let states: FxHashSet<usize> = updates.iter().map(|(s, _)| s.id()).collect();
        planned
            .iter()
            .map(|(v, first)| {
                symbol(
                    v,
                    *first,
                    &|e| slot_of.get(&e.id()).copied(),
                    &compiled.outputs,
                    &states,
                )
            })
            .collect()
    }
}

/// The symbol of variable `v` (named by now), whose elements start at position `first`
/// of the compiled values (None for a variable's own symbol); `slot` gives a node's
/// data offset, `outputs` the offset of each compiled value.
fn symbol(
    v: &Variable,
    first: Option<usize>,
    slot: &dyn Fn(&Value) -> Option<u32>,
    outputs: &[u32],
    states: &FxHashSet<usize>,
) -> Result<Symbol, FinishError> {
    let name = v.name.clone().unwrap_or_default();
    let run_output = |k: usize| match first {
        Some(first) if v.is_run(k) => Some(first + k),
        _ => None,
    };
    let mut offsets = Vec::with_capacity(v.values.len());
    for (k, e) in v.values.iter().enumerate() {
        let base = match run_output(k) {
            Some(position) => outputs.get(position).copied(),
            None => slot(e),
        };
        let base = base.ok_or_else(|| FinishError::NotCompiled(name.clone()))?;
        match array::len_of(e) {
            // an array's elements are consecutive from its start, 4 bytes each or 1 for a
            // byte array
            Some(n) => {
                let size = element_type(e).size() as u32;
                offsets.extend((0..n).map(|k| base + size * k));
            }
            None => offsets.push(base),
        }
    }
    let ty = v.values.first().map_or(ElementType::Float, element_type);
    if v.values.iter().any(|e| element_type(e) != ty) {
        return Err(FinishError::MixedTypes(name));
    }
    let all_inputs =
        !v.values.is_empty() && v.values.iter().all(|e| e.is_input() || array::is_data(e));
    let any_run_output = (0..v.values.len()).any(|k| run_output(k).is_some());
    let role = if any_run_output {
        Role::Output
    } else if all_inputs && v.values.iter().any(|e| states.contains(&e.id())) {
        Role::State
    } else if all_inputs {
        Role::Input
    } else {
        Role::Output
    };
    Ok(Symbol {
        name,
        role,
        ty,
        shape: v.shape.clone(),
        offsets,
    })
}

/// Compiles `request` for `target` into a finished, validated program.
pub fn finish(target: &'static Target, request: Request<'_>) -> Result<Compiled, FinishError> {
    Plan::new(request)?.finish(target)
}

/// The steps of `compiled` by stencil name and element count, with `("@loop", trips)`
/// before and `("@end", trips)` after each loop's body: what an instruction-bounds
/// table is summed over.
pub fn step_names(target: &'static Target, compiled: &Compiled) -> Vec<(&'static str, u32)> {
    let db = match target.backend() {
        Ok(be) => &be.db,
        Err(_) => return Vec::new(), // compiled, so the backend was read
    };
    with_loop_marks(&compiled.stencils, &compiled.loops, |id| {
        db.stencil(id).name.as_str()
    })
}

/// `stencils` by name, with `("@loop", trips)` before a loop's head and `("@end",
/// trips)` after its back-edge (outer loops open first).
pub fn with_loop_marks<'n>(
    stencils: &[(StencilId, u32)],
    loops: &[LoopSpan],
    name: impl Fn(StencilId) -> &'n str,
) -> Vec<(&'n str, u32)> {
    let mut out = Vec::with_capacity(stencils.len() + 2 * loops.len());
    for (i, &(id, n)) in stencils.iter().enumerate() {
        let mut opening: Vec<_> = loops.iter().filter(|l| l.head == i).collect();
        opening.sort_by_key(|l| std::cmp::Reverse(l.back)); // outer loops open first
        out.extend(opening.iter().map(|l| ("@loop", l.trips)));
        out.push((name(id), n));
        out.extend(
            loops
                .iter()
                .filter(|l| l.back == i)
                .map(|l| ("@end", l.trips)),
        );
    }
    out
}

/// `program` with the instruction bounds `bounds` recorded (format version 4),
/// validated again.
pub fn with_bounds(
    program: &Program,
    bounds: Option<InstructionBounds>,
) -> Result<Program, FinishError> {
    let mut program = program.clone();
    program.instructions = bounds;
    program.validate().map_err(FinishError::Invalid)?;
    Ok(program)
}
