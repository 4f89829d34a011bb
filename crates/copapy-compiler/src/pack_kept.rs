//! What a packed step leaves in the float registers: one result of lane 0 (unary,
//! atan2, pow), or two of the sines and cosines of lanes 0 and 1 (sin/cos), one form of
//! the stencil per pair (`stencils/gen_packs.py`, `SINCOS_KEPT`). The scheduler's choice is
//! [`crate::pack_outputs`].

/// One result of a packed lane: the call's (the sine of a sin/cos lane) or the cosine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Out {
    pub cos: bool,
    pub lane: u8,
}

pub(crate) const S0: Out = Out {
    cos: false,
    lane: 0,
};
pub(crate) const S1: Out = Out {
    cos: false,
    lane: 1,
};
pub(crate) const C0: Out = Out { cos: true, lane: 0 };
pub(crate) const C1: Out = Out { cos: true, lane: 1 };

/// The results a packed step leaves in float register a and (if any) b.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Kept {
    pub a: Out,
    pub b: Option<Out>,
}

impl Kept {
    /// What a unary, atan2 or pow step leaves: lane 0's result in register a.
    pub(crate) const LANE0: Kept = Kept { a: S0, b: None };

    /// The forms of the sin/cos stencil by name suffix (`stencils/gen_packs.py`,
    /// `SINCOS_KEPT`, in the same orientation).
    pub(crate) const SINCOS: [(&'static str, Kept); 6] = [
        ("", Kept::pair(S0, C0)),
        ("_s0s1", Kept::pair(S0, S1)),
        ("_c0c1", Kept::pair(C0, C1)),
        ("_s0c1", Kept::pair(S0, C1)),
        ("_s1c0", Kept::pair(S1, C0)),
        ("_s1c1", Kept::pair(S1, C1)),
    ];

    const fn pair(a: Out, b: Out) -> Kept {
        Kept { a, b: Some(b) }
    }

    /// The sin/cos form that keeps `x` and `y` (in either register).
    pub(crate) fn sincos_of(x: Out, y: Out) -> Option<Kept> {
        Kept::SINCOS
            .iter()
            .map(|&(_, k)| k)
            .find(|k| (k.a, k.b) == (x, Some(y)) || (k.a, k.b) == (y, Some(x)))
    }
}
