//! Which Python objects a flattening walked through (`flatten.rs`): a
//! state variable given in `updates=` is told apart from another object traced to the
//! same graph node by object identity.

use pyo3::prelude::*;
use rustc_hash::FxHashSet;

/// The Python objects a flattening walks through, to tell a state variable given in
/// `updates` (that very object, or an element of that container) from another object
/// whose value merely is the state's graph node (`1.0 * x` traces to the node of `x`).
#[derive(Default)]
pub struct Trail<'py> {
    /// Objects (by address) that mark what is inside them, e.g. the states of `updates`.
    marked: FxHashSet<usize>,
    /// How many marked objects enclose the object being flattened.
    inside: usize,
    /// For each flattened element: whether it or a container holding it is marked.
    pub flags: Vec<bool>,
    /// For each flattened element: the value object it came from (None for a number
    /// or an array).
    pub leaves: Vec<Option<Bound<'py, PyAny>>>,
    /// Every value and container walked through, kept alive so that no address in a
    /// `marked` set built from them is reused by a new object.
    pub objects: Vec<Bound<'py, PyAny>>,
}

impl<'py> Trail<'py> {
    /// A trail that flags the elements of the objects `marked` walked through.
    pub fn marking(marked: &[Bound<'py, PyAny>]) -> Self {
        Trail {
            marked: marked.iter().map(|o| o.as_ptr() as usize).collect(),
            ..Trail::default()
        }
    }

    /// Starts flattening `obj`; returns whether it is marked (for [`Trail::leave`]).
    pub fn enter(&mut self, obj: &Bound<'py, PyAny>) -> bool {
        let marked = self.marked.contains(&(obj.as_ptr() as usize));
        self.inside += usize::from(marked);
        marked
    }

    /// Ends flattening an object, which brought the elements up to `elements`: those it
    /// pushed itself (a nested object flagged its own) are flagged as inside a marked
    /// object or not.
    pub fn leave(&mut self, marked: bool, elements: usize) {
        self.inside -= usize::from(marked);
        let flag = marked || self.inside > 0;
        self.flags.resize(elements, flag);
        self.leaves.resize(elements, None);
    }
}
