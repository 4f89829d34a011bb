//! Scheduling calls of imported functions (`cp.extern`, [`crate::imports`]).
//!
//! A call's arguments are stored into a fresh argument block (4 float slots, then 4 int
//! slots: `stencils/gen_calls.py`), its import gets an 8-byte table entry (one per
//! name), the result a slot of its own. The call stencil keeps the registers, so
//! nothing else moves.
//!
//! An array argument is passed as a buffer of the call's own: the function may write it
//! (a sensor filling channels), and no array of the program may change behind the
//! scheduler's back. The buffer is a fresh range the array is copied into before the call
//! (`st_arr_call_buffer`, one step of linear instruction bounds), or the array's own
//! range when it is a computed temporary that nothing reads after this call (no copy;
//! the range is then never reused). Its two
//! int slots hold the buffer's data offset and its length, a ninth slot of the block
//! marks the offsets (the `_p` stencils add the data base to them), and the buffer stays
//! the call's for the whole run: [`crate::array::ArrayOp::Filled`] reads it after the call.

use crate::array::ArrayOp;
use crate::graph::NodeKind;
use crate::link::Step;
use crate::optimise::{Kind, NodeId};
use crate::schedule::{Scheduler, NO_SLOT};
use crate::select::{Class, MissingStencil};

/// Slots of an argument block: 4 float, 4 int and (with buffers) the offset mask.
const BLOCK_SLOTS: u32 = 9;
/// Byte offset of the first int slot in a block.
const INT_SLOTS_AT: u32 = 16;
/// Byte offset of the mask slot.
const MASK_AT: u32 = 32;

impl Scheduler<'_> {
    pub(crate) fn schedule_call(
        &mut self,
        n: NodeId,
        args: &[NodeId],
        name: &std::sync::Arc<str>,
        signature: &std::sync::Arc<str>,
    ) -> Result<(), MissingStencil> {
        let arena = self.arena;
        let buffers_passed = crate::imports::has_buffers(signature);
        let block = self.array_range(if buffers_passed { BLOCK_SLOTS } else { 8 }, &[]);
        let (mut floats, mut ints, mut mask) = (0u32, 0u32, 0u32);
        let mut buffers = vec![NO_SLOT; args.len()];
        for (k, &e) in args.iter().enumerate() {
            self.uses[e as usize] -= 1;
            if let Some(len) = self.array_len(e) {
                let buffer = self.call_buffer(e, len)?;
                buffers[k] = buffer;
                let at = (block + INT_SLOTS_AT + 4 * ints) as usize;
                self.data[at..at + 4].copy_from_slice(&buffer.to_le_bytes());
                self.data[at + 4..at + 8].copy_from_slice(&len.to_le_bytes());
                mask |= 1 << ints;
                ints += 2;
                continue;
            }
            let class = Class::of(arena.nodes[e as usize].ty);
            let at = match class {
                Class::Float => block + 4 * floats,
                Class::Int => block + INT_SLOTS_AT + 4 * ints,
            };
            match class {
                Class::Float => floats += 1,
                Class::Int => ints += 1,
            }
            self.store_scalar_at(e, at)?;
        }
        if buffers_passed {
            let at = (block + MASK_AT) as usize;
            self.data[at..at + 4].copy_from_slice(&mask.to_le_bytes());
            self.call_buffers.insert(n, buffers);
        }
        let entry = match self.imports.iter().find(|i| i.name == *name) {
            Some(i) => i.slot,
            None => {
                let at = self.data.len().next_multiple_of(8);
                self.data.resize(at + 8, 0);
                self.imports.push(crate::imports::ImportSlot {
                    name: name.clone(),
                    signature: signature.clone(),
                    slot: at as u32,
                });
                at as u32
            }
        };
        let stencil = self.table.array(&crate::imports::stencil_name(signature))?;
        let mut step_args = [0u32; crate::stencil_db::ARG_HOLES];
        step_args[0] = self.slot_of(n);
        step_args[1] = entry;
        step_args[2] = block;
        // cp_a3 of the `_p` stencils: data offset 0, the base the buffer offsets add to
        step_args[3] = 0;
        self.steps.push(Step {
            args: step_args,
            ..Step::new(stencil, None)
        });
        Ok(())
    }

    /// The buffer array argument `e` (`len` elements) is passed in: its own range if it
    /// is a computed temporary no later operation reads, else a copy in a fresh range.
    fn call_buffer(&mut self, e: NodeId, len: u32) -> Result<u32, MissingStencil> {
        if self.is_dead_temporary(e) {
            // the function may write it: it is never given to another array
            self.aliased[e as usize] = true;
            return Ok(self.slot[e as usize]);
        }
        let buffer = self.array_range(len, &[]);
        let copy = self.table.array("st_arr_call_buffer")?;
        let mut args = [0u32; crate::stencil_db::ARG_HOLES];
        args[0] = buffer;
        args[1] = self.slot[e as usize];
        args[crate::stencil_db::ARG_COUNT as usize] = self.count_slot(len);
        self.steps.push(Step {
            args,
            ..Step::new(copy, None)
        });
        self.release(e);
        Ok(buffer)
    }

    /// Whether `e` is a computed array whose range no one needs after this call: no
    /// later reader, not an output or held value, not sharing its memory with anything.
    fn is_dead_temporary(&self, e: NodeId) -> bool {
        let Kind::Array(i) = self.arena.nodes[e as usize].kind else {
            return false;
        };
        let NodeKind::Array(node) = self.arena.arrays[i as usize].node.kind() else {
            return false;
        };
        let computed = !matches!(
            node.op,
            ArrayOp::Data(_) | ArrayOp::Element(_) | ArrayOp::Filled(_)
        );
        computed
            && !node.bytes
            && self.uses[e as usize] == 0
            && !self.keep[e as usize]
            && !self.aliased[e as usize]
            && !self.freed[e as usize]
    }

    /// `ArrayOp::Filled(k)` of call `call`: the buffer of the call's argument `k`.
    pub(crate) fn schedule_filled(&mut self, n: NodeId, call: NodeId, k: u32) {
        self.uses[call as usize] -= 1;
        let buffer = self
            .call_buffers
            .get(&call)
            .and_then(|b| b.get(k as usize))
            .copied()
            .unwrap_or(NO_SLOT);
        debug_assert!(
            buffer != NO_SLOT,
            "a filled array of a call without buffer {k}"
        );
        self.slot[n as usize] = buffer;
        // the call's buffer: never handed to another array
        self.aliased[n as usize] = true;
    }
}
