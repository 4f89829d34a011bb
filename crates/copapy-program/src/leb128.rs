//! Unsigned LEB128 numbers (7 bits per byte, low first, the top bit set on every byte
//! but the last), as the compact sections of program files store them.
//!
//! Only the shortest encoding of a number is read: a reader refuses a last byte of 0
//! after others (`80 00` for 0 is overlong) and a tenth byte above 1 (bits past 64), so
//! every number, and so every program, has exactly one encoding (a file that decodes and
//! encodes back gives the same bytes).

/// The longest encoding of a `u64`: 64 bits in groups of 7.
pub const MAX_BYTES: usize = 10;

/// The number at the start of `bytes` and the bytes it took, or None if it does not
/// end within [`MAX_BYTES`] bytes or the input, or is not the shortest encoding of its
/// value.
///
/// ```
/// use copapy_program::leb128::read;
/// assert_eq!(read(&[0xE5, 0x8E, 0x26]), Some((624_485, 3)));
/// assert_eq!(read(&[0x80, 0x00]), None); // 0 in two bytes
/// ```
pub fn read(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(MAX_BYTES) {
        let last = b & 0x80 == 0;
        // the tenth byte holds bit 63 only; a last byte of 0 after others adds nothing
        if (i == MAX_BYTES - 1 && b > 1) || (last && b == 0 && i > 0) {
            return None;
        }
        value |= u64::from(b & 0x7f).wrapping_shl(7 * i as u32);
        if last {
            return Some((value, i + 1));
        }
    }
    None
}

/// Appends the shortest encoding of `v`.
#[cfg(feature = "alloc")]
pub fn write(out: &mut alloc::vec::Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn encoded(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out, v);
        out
    }

    /// Numbers around every 7-bit boundary and pseudo-random ones.
    fn samples() -> impl Iterator<Item = u64> {
        let edges = (0..64).flat_map(|bit| {
            let p = 1u64 << bit;
            [p - 1, p, p + 1]
        });
        let mut state = 0x1eb_u64;
        let random = core::iter::repeat_with(move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> (state % 64)
        })
        .take(2000);
        edges.chain(random).chain([u64::MAX])
    }

    #[test]
    fn every_number_reads_back_from_its_shortest_encoding() {
        for v in samples() {
            let b = encoded(v);
            assert_eq!(
                b.len(),
                (64 - v.leading_zeros() as usize).max(1).div_ceil(7)
            );
            assert_eq!(read(&b), Some((v, b.len())), "{v}");
            // bytes after the number are not read
            let mut longer = b.clone();
            longer.extend_from_slice(&[0xff, 0x00]);
            assert_eq!(read(&longer), Some((v, b.len())));
            // a cut number is refused
            assert_eq!(read(&b[..b.len() - 1]), None);
        }
    }

    #[test]
    fn overlong_encodings_are_refused() {
        for v in samples() {
            let mut b = encoded(v);
            // the same value with one or more zero groups added at the top
            while b.len() < MAX_BYTES {
                *b.last_mut().unwrap() |= 0x80;
                b.push(0);
                assert_eq!(read(&b), None, "{v} as {b:02x?}");
            }
        }
        // a tenth byte carrying more than bit 63, or an eleventh byte
        let mut max = encoded(u64::MAX);
        assert_eq!(max.len(), MAX_BYTES);
        for top in 2..=0x7f {
            max[9] = top;
            assert_eq!(read(&max), None);
        }
        max[9] = 0x81;
        max.push(0x01);
        assert_eq!(read(&max), None);
    }

    /// Every byte string of up to three bytes: whatever reads is the one encoding of its
    /// value (reading and writing back gives the bytes read).
    #[test]
    fn whatever_reads_writes_back_to_the_same_bytes() {
        for len in 1..=3usize {
            for n in 0..1u32 << (8 * len) {
                let b: Vec<u8> = (0..len).map(|i| (n >> (8 * i)) as u8).collect();
                if let Some((v, used)) = read(&b) {
                    assert_eq!(encoded(v), b[..used], "{b:02x?}");
                }
            }
        }
    }
}
