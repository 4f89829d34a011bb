//! What a symbol name may be: the one rule the writers (the Python API) keep and every
//! reader (`cp.loads`, `copapy-run`, the firmware) checks.
//!
//! Names travel through text interfaces: the runner's line protocol is words separated
//! by whitespace, one command per line (`set NAME V ...`, `stream` replies `NAME=V`,
//! `vars` replies `NAME:ROLE:DTYPE:SHAPE`), and its command line takes `--set NAME=V,V`
//! and `--print NAME,NAME`. So a name is 1 to [`MAX_NAME_BYTES`] bytes of UTF-8 with no
//! whitespace, no control character and none of the separators [`NAME_SEPARATORS`];
//! within one program names are unique (two symbols of one name would make a lookup by
//! name pick one of them silently).

use core::fmt;

/// Longest name in bytes of UTF-8 (the file format's `u16` length could hold more).
pub const MAX_NAME_BYTES: usize = 255;

/// Characters the runners' text interfaces use between fields (see the module docs).
pub const NAME_SEPARATORS: [char; 3] = ['=', ':', ','];

/// What the rule says, for messages.
pub const NAME_RULE: &str = "a name is 1 to 255 bytes of UTF-8 without whitespace, control \
                             characters, '=', ':' or ',', unique within its program";

/// Why a name breaks the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameProblem {
    /// No bytes at all.
    Empty,
    /// More than [`MAX_NAME_BYTES`] bytes.
    TooLong {
        /// Its length in bytes (saturated at `u32::MAX`).
        len: u32,
    },
    /// Not UTF-8 from byte `at` on.
    NotUtf8 {
        /// Offset of the first byte that is not part of a valid character (names are
        /// checked for length first, so it fits).
        at: u8,
    },
    /// A character the rule excludes, at byte offset `at`.
    Forbidden {
        /// The character.
        ch: char,
        /// Its byte offset in the name.
        at: u8,
    },
    /// The same name as an earlier symbol.
    Duplicate {
        /// Index of the earlier symbol (symbol counts are `u32` in the file).
        first: u32,
    },
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            NameProblem::Empty => f.write_str("is empty"),
            NameProblem::TooLong { len } => write!(f, "is {len} bytes long"),
            NameProblem::NotUtf8 { at } => write!(f, "is not UTF-8 (from byte {at} on)"),
            NameProblem::Forbidden { ch, at } => {
                let what = if NAME_SEPARATORS.contains(&ch) {
                    "the separator"
                } else if ch.is_control() {
                    "the control character"
                } else {
                    "the whitespace"
                };
                write!(f, "has {what} {ch:?} (U+{:04X}) at byte {at}", ch as u32)
            }
            NameProblem::Duplicate { first } => write!(f, "is also the name of symbol {first}"),
        }
    }
}

/// Whether the rule excludes `ch` from names: Unicode White_Space (the set
/// `char::is_whitespace` tests), Unicode control characters (Cc) and the separators.
///
/// Written out rather than calling `char::is_whitespace`, whose lookup table a firmware
/// runner would link (256 bytes); a test checks both agree on every character.
pub fn is_forbidden(ch: char) -> bool {
    matches!(
        ch,
        '\0'..='\u{20}'
            | '\u{7F}'..='\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '=' | ':' | ','
    )
}

/// Walks the UTF-8 characters of `bytes` (shortest forms only, no surrogates, at most
/// U+10FFFF), giving each with its byte offset to `each`; stops at the first error
/// `each` returns, or at the first byte that is not part of a character (`NotUtf8`).
///
/// A small decoder of our own, so a firmware runner that only loads and runs does not
/// link `core::str::from_utf8` (half a KiB). Offsets are `u8`: names longer than 255
/// bytes are refused before their characters are looked at.
fn walk_chars(
    bytes: &[u8],
    mut each: impl FnMut(char, u8) -> Result<(), NameProblem>,
) -> Result<(), NameProblem> {
    let mut it = bytes.iter().copied();
    let mut at = 0u8;
    while let Some(lead) = it.next() {
        let bad = NameProblem::NotUtf8 { at };
        let (extra, mut cp, min) = match lead {
            0x00..=0x7F => (0, u32::from(lead), 0),
            0xC2..=0xDF => (1, u32::from(lead & 0x1F), 0x80),
            0xE0..=0xEF => (2, u32::from(lead & 0x0F), 0x800),
            0xF0..=0xF4 => (3, u32::from(lead & 0x07), 0x1_0000),
            _ => return Err(bad),
        };
        for _ in 0..extra {
            match it.next() {
                Some(c) if c & 0xC0 == 0x80 => cp = (cp << 6) | u32::from(c & 0x3F),
                _ => return Err(bad),
            }
        }
        match char::from_u32(cp) {
            Some(ch) if cp >= min => each(ch, at)?,
            _ => return Err(bad),
        }
        at = at.wrapping_add(1 + extra);
    }
    Ok(())
}

/// Checks one name against the rule (everything but uniqueness, see [`first_duplicate`]).
pub fn check_name(name: &[u8]) -> Result<(), NameProblem> {
    if name.is_empty() {
        return Err(NameProblem::Empty);
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(NameProblem::TooLong {
            len: u32::try_from(name.len()).unwrap_or(u32::MAX),
        });
    }
    walk_chars(name, |ch, at| {
        if is_forbidden(ch) {
            Err(NameProblem::Forbidden { ch, at })
        } else {
            Ok(())
        }
    })
}

/// The first pair `(earlier, later, name)` of equal names, by the later index, without
/// allocating: every pair is compared (lengths first), which is quick for the few
/// hundred symbols of a real program and bounded by the file size for any other.
pub fn first_duplicate<'a, I>(names: I) -> Option<(usize, usize, &'a [u8])>
where
    I: Iterator<Item = &'a [u8]> + Clone,
{
    // plain loops: `take`/`position` adapters would add their own code to a firmware
    for (later, name) in names.clone().enumerate() {
        let mut earlier_names = names.clone();
        for earlier in 0..later {
            if earlier_names.next() == Some(name) {
                return Some((earlier, later, name));
            }
        }
    }
    None
}

/// The first pair of equal names (earlier and later index): sorted with the `alloc`
/// feature, compared pair by pair without it (a firmware runner's few symbols).
#[cfg(feature = "alloc")]
pub(crate) fn duplicate<'a>(
    names: impl Iterator<Item = &'a [u8]> + Clone,
) -> Option<(usize, usize, &'a [u8])> {
    let mut sorted: alloc::vec::Vec<(&[u8], usize)> =
        names.enumerate().map(|(i, n)| (n, i)).collect();
    sorted.sort_unstable();
    // equal names sit together, in index order: report the pair with the smallest later index
    sorted
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| {
            let first = sorted.partition_point(|(n, _)| *n < w[0].0);
            (sorted[first].1, w[1].1, w[1].0)
        })
        .min_by_key(|&(_, later, _)| later)
}

#[cfg(not(feature = "alloc"))]
pub(crate) fn duplicate<'a>(
    names: impl Iterator<Item = &'a [u8]> + Clone,
) -> Option<(usize, usize, &'a [u8])> {
    first_duplicate(names)
}

/// The start of a name, kept in an error (which is `Copy` and allocation-free), shown
/// escaped so a control character or newline in it cannot break a message line.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct NameExcerpt {
    bytes: [u8; NameExcerpt::CAP],
    len: u8,
    cut: bool,
}

impl NameExcerpt {
    /// Bytes kept of a longer name: 24, or 8 without the `alloc` feature (a firmware
    /// runner), where a larger error would cost every `Result` that carries one (about
    /// 450 bytes of code on Cortex-M4, `benches/runner_size.sh`).
    pub const CAP: usize = if cfg!(feature = "alloc") { 24 } else { 8 };

    /// The first [`NameExcerpt::CAP`] bytes of `name`.
    pub fn of(name: &[u8]) -> NameExcerpt {
        let mut bytes = [0; Self::CAP];
        for (to, from) in bytes.iter_mut().zip(name) {
            *to = *from;
        }
        let len = name.len().min(Self::CAP);
        NameExcerpt {
            bytes,
            len: len as u8,
            cut: name.len() > len,
        }
    }

    /// The bytes kept.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len as usize).unwrap_or_default()
    }
}

impl fmt::Debug for NameExcerpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for NameExcerpt {
    /// `"a\nb"`: quoted, control and non-printing characters escaped, bytes that are not
    /// UTF-8 as `\xNN`, `…` after the quote if the name was longer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for chunk in self.as_bytes().utf8_chunks() {
            for ch in chunk.valid().chars() {
                write!(f, "{}", ch.escape_debug())?;
            }
            // an excerpt cut inside a character shows that character's bytes too
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        f.write_str(if self.cut { "\"…" } else { "\"" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder agrees with `core::str::from_utf8` on every 1- to 3-byte string over an
    /// alphabet of interesting bytes, and on 4-byte sequences around the limits.
    #[test]
    fn utf8_agrees_with_core() {
        let valid = |s: &[u8]| walk_chars(s, |_, _| Ok(())).is_ok();
        let bytes = [
            0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4,
            0xF5, 0xFF, 0x9F, 0xA0, 0x8F, 0x90,
        ];
        let mut buf = [0u8; 4];
        let mut checked = 0;
        for len in 1..=3 {
            let total = bytes.len().pow(len as u32);
            for mut k in 0..total {
                for b in buf.iter_mut().take(len) {
                    *b = bytes[k % bytes.len()];
                    k /= bytes.len();
                }
                let s = &buf[..len];
                assert_eq!(valid(s), core::str::from_utf8(s).is_ok(), "{s:x?}");
                checked += 1;
            }
        }
        for s in [
            &[0xF0, 0x90, 0x80, 0x80][..],
            &[0xF4, 0x8F, 0xBF, 0xBF],
            &[0xF4, 0x90, 0x80, 0x80],
            &[0xF0, 0x8F, 0xBF, 0xBF],
            &[0xED, 0x9F, 0xBF],
            &[0xED, 0xA0, 0x80],
            "zähler €𝄞".as_bytes(),
        ] {
            assert_eq!(valid(s), core::str::from_utf8(s).is_ok(), "{s:x?}");
        }
        assert!(checked > 8000);
    }

    #[test]
    fn forbidden_is_whitespace_control_or_separator_for_every_char() {
        for ch in (0..=0x10_FFFFu32).filter_map(char::from_u32) {
            let want = ch.is_whitespace() || ch.is_control() || NAME_SEPARATORS.contains(&ch);
            assert_eq!(is_forbidden(ch), want, "{ch:?}");
        }
    }

    #[test]
    fn the_rule() {
        for ok in ["x", "in0", "zähler", "a.b[3]", "π_2", "-x", "x\u{200B}"] {
            assert_eq!(check_name(ok.as_bytes()), Ok(()), "{ok:?}");
        }
        assert_eq!(check_name(&[0x61; 255]), Ok(()));
        assert_eq!(check_name(b""), Err(NameProblem::Empty));
        assert_eq!(
            check_name(&[0x61; 256]),
            Err(NameProblem::TooLong { len: 256 })
        );
        assert_eq!(check_name(b"ab\xFF"), Err(NameProblem::NotUtf8 { at: 2 }));
        for (name, ch, at) in [
            ("a b", ' ', 1),
            ("a\nb", '\n', 1),
            ("\tx", '\t', 0),
            ("x=1", '=', 1),
            ("x:float", ':', 1),
            ("a,b", ',', 1),
            ("ä\u{7F}", '\u{7F}', 2),
            ("x\u{85}", '\u{85}', 1),
            ("x\u{A0}", '\u{A0}', 1),
            ("x\u{2028}", '\u{2028}', 1),
            ("x\u{3000}", '\u{3000}', 1),
        ] {
            assert_eq!(
                check_name(name.as_bytes()),
                Err(NameProblem::Forbidden { ch, at }),
                "{name:?}"
            );
        }
    }

    #[test]
    fn duplicates() {
        let names: [&[u8]; 5] = [b"a", b"b", b"ab", b"b", b"a"];
        assert_eq!(
            first_duplicate(names.iter().copied()),
            Some((1, 3, &b"b"[..]))
        );
        assert_eq!(first_duplicate(names[..3].iter().copied()), None);
    }

    /// The sorting search (with `alloc`) finds the same pair as the pairwise one, on
    /// every list of up to 6 names from a 3-name alphabet.
    #[test]
    fn both_duplicate_searches_agree() {
        let alphabet: [&[u8]; 3] = [b"a", b"b", b"ab"];
        for len in 0..=6u32 {
            for mut k in 0..3usize.pow(len) {
                let mut names = [&b""[..]; 6];
                for n in names.iter_mut().take(len as usize) {
                    *n = alphabet[k % 3];
                    k /= 3;
                }
                let names = &names[..len as usize];
                assert_eq!(
                    duplicate(names.iter().copied()),
                    first_duplicate(names.iter().copied()),
                    "{names:?}"
                );
            }
        }
    }

    #[test]
    fn excerpts_escape_and_cut() {
        extern crate alloc;
        use alloc::format;
        assert_eq!(format!("{}", NameExcerpt::of(b"a b\n")), "\"a b\\n\"");
        assert_eq!(format!("{}", NameExcerpt::of(b"x\xFFy")), "\"x\\xffy\"");
        let long = [b'z'; 50];
        let shown = format!("{}", NameExcerpt::of(&long));
        assert_eq!(shown, format!("\"{}\"…", "z".repeat(NameExcerpt::CAP)));
    }
}
