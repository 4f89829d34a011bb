//! Instruction selection: which stencil implements an operation for given operand places.
//!
//! Stencil symbols follow `st_<op>_<type>_<operand places>_<destination>` (see
//! `stencils/README.md`). The table is built once per stencil database by looking up
//! every name, so compiling only indexes arrays.

use std::fmt;

use rustc_hash::FxHashMap;

use crate::graph::{Fused, Op, ScalarType};
use crate::stencil_db::{StencilDb, StencilId};

/// Register class: floats live in the float pair, ints and bools in the integer pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Float = 0,
    Int = 1,
}

impl Class {
    pub fn of(ty: ScalarType) -> Class {
        match ty {
            ScalarType::Float => Class::Float,
            ScalarType::Int | ScalarType::Bool => Class::Int,
        }
    }

    const fn code(self) -> &'static str {
        match self {
            Class::Float => "f",
            Class::Int => "i",
        }
    }
}

/// Where an operand is: one of the two virtual registers of its class, or data memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    R0 = 0,
    R1 = 1,
    Mem = 2,
}

impl Place {
    pub const fn reg(r: usize) -> Place {
        if r == 0 {
            Place::R0
        } else {
            Place::R1
        }
    }

    const fn code(self) -> &'static str {
        match self {
            Place::R0 => "r0",
            Place::R1 => "r1",
            Place::Mem => "m",
        }
    }

    const ALL: [Place; 3] = [Place::R0, Place::R1, Place::Mem];
}

/// The back-edge stencil of fixed-trip-count loops (`stencils/gen_stencils.py`).
pub const LOOP_BACKEDGE: &str = "st_loop_i_mm";

/// Unary stencil operations: the graph's unary ops plus `copy` (load or move).
const UNARY_OPS: usize = Op::UNARY.len() + 1;
const COPY: usize = Op::UNARY.len();

/// A stencil the compiler needs but the object does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingStencil(pub String);

impl fmt::Display for MissingStencil {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the stencil object has no stencil '{}' (operation not supported for this type on this target)",
            self.0
        )
    }
}

struct Lookup<F>(F);

impl<F: Fn(&str) -> Option<StencilId>> Lookup<F> {
    fn id(&self, name: &str) -> Option<StencilId> {
        (self.0)(name)
    }
}

/// Lookup table from (operation, class, places, destination) to stencil.
pub struct StencilTable {
    binary: Vec<Option<StencilId>>,
    unary: Vec<Option<StencilId>>,
    store: [[Option<StencilId>; 2]; 2],
    /// [condition register][x][y][dst] for `st_select_f_...`
    select: Vec<Option<StencilId>>,
    /// Array stencils by name (`st_arr_*`, see [`crate::array_stencils::stencil_names`]).
    arrays: FxHashMap<String, StencilId>,
    /// The loop back-edge `st_loop_i_mm` (see [`crate::loops`]).
    loop_back: Option<StencilId>,
    /// [cos first][x][dst] for `st_sincos_f_<x>_<dst>` / `st_cossin_f_<x>_<dst>`.
    sincos: [[[Option<StencilId>; 2]; 3]; 2],
    /// The packed math stencils `st_pack4_*` ([`crate::pack`]); empty on targets
    /// without them.
    pub(crate) packs: crate::pack::PackTable,
    /// The multiply-add superinstructions ([`crate::muladd`]) by (superinstruction,
    /// operand places, destination); all `None` on objects built before them.
    fused: Vec<Option<StencilId>>,
}

/// The most operands a multiply-add superinstruction reads.
pub(crate) const MAX_FUSED_OPERANDS: usize = 4;
/// Place combinations of up to [`MAX_FUSED_OPERANDS`] operands (three places each).
const FUSED_COMBOS: usize = 81;

fn fused_index(fused: Fused, places: &[Place], dst: usize) -> usize {
    let combo = places.iter().fold(0, |acc, &p| acc * 3 + p as usize);
    ((fused as usize) * FUSED_COMBOS + combo) * 2 + dst
}

/// `st_<fused>_f_<places>_r<dst>`.
pub(crate) fn fused_name(fused: Fused, places: &[Place], dst: usize) -> String {
    let codes: String = places.iter().map(|p| p.code()).collect();
    format!("st_{}_f_{codes}_r{dst}", fused.stencil_name())
}

fn sincos_name(cos_first: bool, x: Place, dst: usize) -> String {
    let first = if cos_first { "cossin" } else { "sincos" };
    format!("st_{first}_f_{}_r{dst}", x.code())
}

fn select_index(c: usize, x: Place, y: Place, dst: usize) -> usize {
    ((c * 3 + x as usize) * 3 + y as usize) * 2 + dst
}

fn select_name(c: usize, x: Place, y: Place, dst: usize) -> String {
    format!("st_select_f_r{c}{}{}_r{dst}", x.code(), y.code())
}

fn binary_index(op_index: usize, class: Class, x: Place, y: Place, dst: usize) -> usize {
    (((op_index * 2 + class as usize) * 3 + x as usize) * 3 + y as usize) * 2 + dst
}

fn unary_index(op_index: usize, class: Class, x: Place, dst: usize) -> usize {
    ((op_index * 2 + class as usize) * 3 + x as usize) * 2 + dst
}

fn binary_name(op: Op, class: Class, x: Place, y: Place, dst: usize) -> String {
    format!(
        "st_{}_{}_{}{}_r{dst}",
        op.stencil_name(),
        class.code(),
        x.code(),
        y.code()
    )
}

fn unary_name(op_name: &str, class: Class, x: Place, dst: usize) -> String {
    format!("st_{op_name}_{}_{}_r{dst}", class.code(), x.code())
}

fn unary_op_name(op_index: usize) -> &'static str {
    if op_index == COPY {
        "copy"
    } else {
        Op::UNARY[op_index].stencil_name()
    }
}

impl StencilTable {
    pub fn new(db: &StencilDb) -> StencilTable {
        StencilTable::from_lookup(|name| db.id(name))
    }

    /// Builds the table from any name lookup (tests use a synthetic one).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<StencilId>) -> StencilTable {
        let db = Lookup(lookup);
        let classes = [Class::Float, Class::Int];
        let mut binary = vec![None; Op::BINARY.len() * 2 * 3 * 3 * 2];
        for (oi, &op) in Op::BINARY.iter().enumerate() {
            for class in classes {
                for x in Place::ALL {
                    for y in Place::ALL {
                        for dst in 0..2 {
                            let name = binary_name(op, class, x, y, dst);
                            binary[binary_index(oi, class, x, y, dst)] = db.id(&name);
                        }
                    }
                }
            }
        }
        let mut unary = vec![None; UNARY_OPS * 2 * 3 * 2];
        for oi in 0..UNARY_OPS {
            for class in classes {
                for x in Place::ALL {
                    for dst in 0..2 {
                        let name = unary_name(unary_op_name(oi), class, x, dst);
                        unary[unary_index(oi, class, x, dst)] = db.id(&name);
                    }
                }
            }
        }
        let mut store = [[None; 2]; 2];
        for class in classes {
            for (r, slot) in store[class as usize].iter_mut().enumerate() {
                *slot = db.id(&format!("st_store_{}_r{r}", class.code()));
            }
        }
        let mut select = vec![None; 2 * 3 * 3 * 2];
        for c in 0..2 {
            for x in Place::ALL {
                for y in Place::ALL {
                    for dst in 0..2 {
                        select[select_index(c, x, y, dst)] = db.id(&select_name(c, x, y, dst));
                    }
                }
            }
        }
        let arrays = crate::array_stencils::stencil_names()
            .into_iter()
            .filter_map(|name| db.id(&name).map(|id| (name, id)))
            .collect();
        let loop_back = db.id(LOOP_BACKEDGE);
        let mut sincos = [[[None; 2]; 3]; 2];
        for (first, places) in sincos.iter_mut().enumerate() {
            for x in Place::ALL {
                for (dst, id) in places[x as usize].iter_mut().enumerate() {
                    *id = db.id(&sincos_name(first == 1, x, dst));
                }
            }
        }
        let packs = crate::pack::PackTable::new(|name| db.id(name));
        let mut fused = vec![None; Fused::ALL.len() * FUSED_COMBOS * 2];
        for f in Fused::ALL {
            let arity = f.arity() as u32;
            for combo in 0..3usize.pow(arity) {
                let places: Vec<Place> = (0..arity)
                    .rev()
                    .map(|k| Place::ALL[combo / 3usize.pow(k) % 3])
                    .collect();
                for dst in 0..2 {
                    fused[fused_index(f, &places, dst)] = db.id(&fused_name(f, &places, dst));
                }
            }
        }
        StencilTable {
            packs,
            fused,
            sincos,
            loop_back,
            binary,
            unary,
            store,
            select,
            arrays,
        }
    }

    /// Float `dst = cond ? x : y` with the condition in int register `c`.
    pub fn select(
        &self,
        c: usize,
        x: Place,
        y: Place,
        dst: usize,
    ) -> Result<StencilId, MissingStencil> {
        self.select[select_index(c, x, y, dst)]
            .ok_or_else(|| MissingStencil(select_name(c, x, y, dst)))
    }

    /// `dst = x op y` where x and y are operands of `class`.
    pub fn binary(
        &self,
        op: Op,
        class: Class,
        x: Place,
        y: Place,
        dst: usize,
    ) -> Result<StencilId, MissingStencil> {
        let oi = Op::BINARY.iter().position(|&o| o == op).expect("binary op");
        self.binary[binary_index(oi, class, x, y, dst)]
            .ok_or_else(|| MissingStencil(binary_name(op, class, x, y, dst)))
    }

    /// `dst = op(x)` where x is an operand of `class`.
    pub fn unary(
        &self,
        op: Op,
        class: Class,
        x: Place,
        dst: usize,
    ) -> Result<StencilId, MissingStencil> {
        let oi = Op::UNARY.iter().position(|&o| o == op).expect("unary op");
        self.unary[unary_index(oi, class, x, dst)]
            .ok_or_else(|| MissingStencil(unary_name(op.stencil_name(), class, x, dst)))
    }

    /// The `dst = mem op mem2` stencils (for dst r0 and r1), if the object has them.
    pub fn binary_from_memory(&self, op: Op, class: Class) -> Option<[StencilId; 2]> {
        let oi = Op::BINARY.iter().position(|&o| o == op).expect("binary op");
        let at = |dst| self.binary[binary_index(oi, class, Place::Mem, Place::Mem, dst)];
        Some([at(0)?, at(1)?])
    }

    /// Load from memory or move between the registers of a class.
    pub fn copy(&self, class: Class, x: Place, dst: usize) -> Result<StencilId, MissingStencil> {
        self.unary[unary_index(COPY, class, x, dst)]
            .ok_or_else(|| MissingStencil(unary_name("copy", class, x, dst)))
    }

    /// The array stencil called `name` (one per array operation).
    pub fn array(&self, name: &str) -> Result<StencilId, MissingStencil> {
        self.arrays
            .get(name)
            .copied()
            .ok_or_else(|| MissingStencil(name.to_string()))
    }

    /// The loop back-edge: counter slot (`slot`) += 1, back to the head step (`args[0]`)
    /// until it equals the end slot (`slot2`).
    pub fn loop_back(&self) -> Result<StencilId, MissingStencil> {
        self.loop_back
            .ok_or_else(|| MissingStencil(LOOP_BACKEDGE.to_string()))
    }

    /// sin(x) (or cos(x) when `cos_first`) into float register `dst` and the other one
    /// into the second data slot, from one range reduction; `None` when the object has
    /// no fused stencils (then sin and cos are computed separately).
    pub fn sincos(&self, cos_first: bool, x: Place, dst: usize) -> Option<StencilId> {
        self.sincos[cos_first as usize][x as usize][dst]
    }

    /// The multiply-add superinstruction `fused` for operands at `places` (in the
    /// stencil name's order) into float register `dst`, if the object has that form.
    pub fn fused(&self, fused: Fused, places: &[Place], dst: usize) -> Option<StencilId> {
        self.fused[fused_index(fused, places, dst)]
    }

    /// Whether the object has the multiply-add superinstructions at all.
    pub fn has_fused(&self) -> bool {
        self.fused.iter().any(Option::is_some)
    }

    /// Write register `r` of `class` to a data slot.
    pub fn store(&self, class: Class, r: usize) -> Result<StencilId, MissingStencil> {
        self.store[class as usize][r]
            .ok_or_else(|| MissingStencil(format!("st_store_{}_r{r}", class.code())))
    }
}
