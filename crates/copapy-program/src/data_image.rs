//! A program's initial data image as a file stores it.
//!
//! Versions 2 to 8 store the bytes as they are. Most of a program's data is zero (the
//! slots of outputs and intermediate values; Kalman: 82 of 95 words), so version 9
//! ([`crate::compact_file`]) stores a map of the non-zero words and only those: the data
//! as 4-byte words (the last one shorter when the length is not a multiple of 4), one
//! bit per word (bit `i % 8` of map byte `i / 8`, the map `ceil(words / 8)` bytes long)
//! set where the word is stored, then the stored words in order. A stored word of zeros
//! and a set bit past the last word are refused (each image has one encoding).

use crate::format::{sub, Section};
use crate::FormatError;

/// A data image: `len` bytes, stored raw or as version 9's map of non-zero words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataImage<'a> {
    stored: &'a [u8],
    len: usize,
    mapped: bool,
    /// Version 10: a map of the words stored as their high half follows the word map.
    half: bool,
}

/// Bytes of word `i` of a `len`-byte image.
const fn word_len(i: usize, len: usize) -> usize {
    let start = i * 4;
    if len - start < 4 {
        len - start
    } else {
        4
    }
}

/// Whether a stored word of `bytes` may be stored as its high half: a whole word whose
/// low half is zero.
fn halvable(bytes: &[u8]) -> bool {
    matches!(bytes, [0, 0, _, _])
}

/// Whether bit `i` of `map` is set.
fn bit(map: &[u8], i: usize) -> bool {
    map.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1)
}

/// Whether version 10's half-word map makes an image shorter: it costs one bit per stored
/// word and saves two bytes per whole word whose low half is zero (constants such as
/// 2.0 or 10.0; a neural network's random weights have none).
fn half_map_pays(stored: usize, halvable: usize) -> bool {
    2 * halvable > stored.div_ceil(8)
}

impl<'a> DataImage<'a> {
    /// The image stored as it is (versions 2 to 8).
    pub const fn raw(bytes: &'a [u8]) -> DataImage<'a> {
        DataImage {
            stored: bytes,
            len: bytes.len(),
            mapped: false,
            half: false,
        }
    }

    /// Reads a `len`-byte mapped image at the start of `rest`, checks it, and gives it
    /// with the bytes it takes in the file. `half`: None in version 9, else version 10's
    /// header flag saying a half-word map follows the word map.
    pub(crate) fn parse_mapped(
        rest: &'a [u8],
        len: u64,
        half: Option<bool>,
    ) -> Result<(DataImage<'a>, usize), FormatError> {
        let words = len.div_ceil(4);
        let map_len = words.div_ceil(8);
        let truncated = |expected: u64| FormatError::Truncated {
            section: Section::Data,
            expected,
            found: rest.len() as u64,
        };
        if (rest.len() as u64) < map_len {
            return Err(truncated(map_len));
        }
        let (map_len, words, len) = (map_len as usize, words as usize, len as usize);
        let map = sub(rest, 0, map_len);
        let stored_words = map.iter().map(|b| b.count_ones() as usize).sum::<usize>();
        let half_len = if half == Some(true) {
            stored_words.div_ceil(8)
        } else {
            0
        };
        if rest.len() < map_len + half_len {
            return Err(truncated((map_len + half_len) as u64));
        }
        let half_map = sub(rest, map_len, map_len + half_len);
        let mut at = map_len + half_len;
        let (mut nth, mut halvables) = (0usize, 0usize);
        for word in (0..map_len * 8).filter(|&w| bit(map, w)) {
            if word >= words {
                return Err(FormatError::BadDataImage { word });
            }
            let full = word_len(word, len);
            let is_half = bit(half_map, nth);
            let n = if is_half { 2 } else { full };
            let stored = rest.get(at..at + n).ok_or(truncated((at + n) as u64))?;
            // one encoding per image: no stored zero word, a half word only for a whole
            // word, and with the half map every word that can be half is
            if stored.iter().all(|&b| b == 0)
                || (is_half && full != 4)
                || (half == Some(true) && halvable(stored))
            {
                return Err(FormatError::BadDataImage { word });
            }
            halvables += usize::from(is_half || halvable(stored));
            at += n;
            nth += 1;
        }
        // and the half map is there exactly when it makes the image shorter (a bit past
        // the last stored word is refused too)
        let past = half_map.len() * 8 > nth && (nth..half_map.len() * 8).any(|i| bit(half_map, i));
        if half.is_some_and(|h| h != half_map_pays(nth, halvables)) || past {
            return Err(FormatError::BadDataImage { word: words });
        }
        let image = DataImage {
            stored: sub(rest, 0, at),
            len,
            mapped: true,
            half: half == Some(true),
        };
        Ok((image, at))
    }

    /// Bytes of data the program uses.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether the program has no data.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the image takes in the file.
    pub const fn stored_len(&self) -> usize {
        self.stored.len()
    }

    /// Writes the image to the start of `out` (as much of it as fits).
    pub fn copy_to(&self, out: &mut [u8]) {
        let out_len = out.len();
        let out = out.get_mut(..self.len.min(out_len)).unwrap_or(&mut []);
        if !self.mapped {
            for (d, s) in out.iter_mut().zip(self.stored) {
                *d = *s;
            }
            return;
        }
        let words = self.len.div_ceil(4);
        // `get` rather than slicing or `split_at`: no panic path (see `format.rs`)
        let map_len = words.div_ceil(8);
        let map = self.stored.get(..map_len).unwrap_or(&[]);
        let half_len = if self.half {
            map.iter()
                .map(|b| b.count_ones() as usize)
                .sum::<usize>()
                .div_ceil(8)
        } else {
            0
        };
        let half_map = self.stored.get(map_len..map_len + half_len).unwrap_or(&[]);
        let (mut at, mut nth) = (map_len + half_len, 0);
        for (i, chunk) in out.chunks_mut(4).enumerate() {
            chunk.fill(0);
            if !bit(map, i) {
                continue;
            }
            let word = self.stored.get(at..).unwrap_or(&[]);
            let target = if bit(half_map, nth) {
                chunk.get_mut(2..).unwrap_or(&mut [])
            } else {
                chunk
            };
            for (d, s) in target.iter_mut().zip(word) {
                *d = *s;
            }
            at += target.len();
            nth += 1;
        }
    }

    /// The image's bytes.
    #[cfg(feature = "alloc")]
    pub fn to_vec(&self) -> alloc::vec::Vec<u8> {
        let mut out = alloc::vec![0; self.len];
        self.copy_to(&mut out);
        out
    }
}

/// Whether version 10 stores `data` with its half-word map ([`half_map_pays`]).
#[cfg(feature = "alloc")]
pub(crate) fn half_words_pay(data: &[u8]) -> bool {
    let stored = data.chunks(4).filter(|w| w.iter().any(|&b| b != 0));
    let (count, halvables) = stored.fold((0, 0), |(c, h), w| (c + 1, h + usize::from(halvable(w))));
    half_map_pays(count, halvables)
}

/// `data` as version 9 stores it: the map of non-zero words, then those words; with
/// `half` (version 10), the half-word map between them and those words' high halves.
#[cfg(feature = "alloc")]
pub(crate) fn encode_mapped(data: &[u8], out: &mut alloc::vec::Vec<u8>, half: bool) {
    let words = data.len().div_ceil(4);
    let map_at = out.len();
    out.resize(map_at + words.div_ceil(8), 0);
    let stored: alloc::vec::Vec<&[u8]> = data
        .chunks(4)
        .enumerate()
        .filter(|(_, w)| w.iter().any(|&b| b != 0))
        .map(|(i, w)| {
            out[map_at + i / 8] |= 1 << (i % 8);
            w
        })
        .collect();
    let half_at = out.len();
    if half {
        out.resize(half_at + stored.len().div_ceil(8), 0);
    }
    for (nth, w) in stored.iter().enumerate() {
        if half && halvable(w) {
            out[half_at + nth / 8] |= 1 << (nth % 8);
            out.extend_from_slice(&w[2..]);
        } else {
            out.extend_from_slice(w);
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn images_of_every_length_and_zero_pattern_come_back() {
        let mut state = 0x5eed_u64;
        for len in 0..70usize {
            for _ in 0..20 {
                let data: Vec<u8> = (0..len)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        // mostly zero words, some zero bytes inside stored words
                        if (state >> 40).is_multiple_of(3) {
                            (state >> 33) as u8
                        } else {
                            0
                        }
                    })
                    .collect();
                let mut file = Vec::new();
                encode_mapped(&data, &mut file, false);
                let zero_words = data.chunks(4).filter(|w| w.iter().all(|&b| b == 0)).count();
                let stored_bytes: usize = data
                    .chunks(4)
                    .filter(|w| w.iter().any(|&b| b != 0))
                    .map(<[u8]>::len)
                    .sum();
                assert_eq!(file.len(), len.div_ceil(4).div_ceil(8) + stored_bytes);
                assert!(zero_words == 0 || file.len() < len + len.div_ceil(32) + 1);
                file.extend_from_slice(&[1, 2, 3]); // what follows is not read
                let (image, used) = DataImage::parse_mapped(&file, len as u64, None).unwrap();
                assert_eq!(used, file.len() - 3);
                assert_eq!(image.to_vec(), data);
                for cut in 0..used {
                    assert!(DataImage::parse_mapped(&file[..cut], len as u64, None).is_err());
                }
            }
        }
    }

    #[test]
    fn a_stored_zero_word_or_a_bit_past_the_end_is_refused() {
        // 6 bytes: two words, the second 2 bytes long
        assert_eq!(
            DataImage::parse_mapped(&[0b01, 0, 0, 0, 0], 6, None),
            Err(FormatError::BadDataImage { word: 0 })
        );
        assert_eq!(
            DataImage::parse_mapped(&[0b10, 0, 0], 6, None),
            Err(FormatError::BadDataImage { word: 1 })
        );
        assert_eq!(
            DataImage::parse_mapped(&[0b100], 6, None),
            Err(FormatError::BadDataImage { word: 2 })
        );
        let (image, used) = DataImage::parse_mapped(&[0b10, 0, 7], 6, None).unwrap();
        assert_eq!((image.to_vec(), used), (alloc::vec![0, 0, 0, 0, 0, 7], 3));
        // copying into a shorter buffer writes what fits
        let mut short = [9u8; 5];
        image.copy_to(&mut short);
        assert_eq!(short, [0, 0, 0, 0, 0]);
    }

    /// Version 10's half words: every image comes back, with the half-word map exactly
    /// when it is shorter, and every other choice of map or storage is refused.
    #[test]
    fn half_words_come_back_and_keep_one_encoding() {
        let mut state = 0x4a1f_u64;
        for len in 0..70usize {
            for _ in 0..30 {
                let data: Vec<u8> = (0..len)
                    .map(|i| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        // words like 2.0f32 (00 00 00 40): low halves often zero
                        if i % 4 < 2 && !(state >> 40).is_multiple_of(4)
                            || (state >> 50).is_multiple_of(3)
                        {
                            0
                        } else {
                            (state >> 33) as u8
                        }
                    })
                    .collect();
                let half = half_words_pay(&data);
                let mut file = Vec::new();
                encode_mapped(&data, &mut file, half);
                let (image, used) = DataImage::parse_mapped(&file, len as u64, Some(half)).unwrap();
                assert_eq!((image.to_vec(), used), (data.clone(), file.len()));
                let mut plain = Vec::new();
                encode_mapped(&data, &mut plain, false);
                assert!(file.len() <= plain.len());
                // the other choice of map is refused
                let mut other = Vec::new();
                encode_mapped(&data, &mut other, !half);
                assert!(
                    DataImage::parse_mapped(&other, len as u64, Some(!half)).is_err()
                        || data.iter().all(|&b| b == 0),
                    "{data:02x?}"
                );
                for cut in 0..used {
                    assert!(DataImage::parse_mapped(&file[..cut], len as u64, Some(half)).is_err());
                }
            }
        }
    }

    #[test]
    fn a_half_word_of_a_short_last_word_or_a_whole_halvable_word_is_refused() {
        // 8 bytes: no halvable word, the half map never pays; two halvable words
        // (2.0f32 = 00 00 00 40, -10.0f32) pay for its one byte
        let one = [0, 1, 0, 0x40, 1, 0, 0, 0];
        assert!(!half_words_pay(&one));
        let two = [0, 0, 0, 0x40, 0, 0, 0x20, 0xc1];
        assert!(half_words_pay(&two));
        let mut file = Vec::new();
        encode_mapped(&two, &mut file, true);
        assert_eq!(file, [0b11, 0b11, 0, 0x40, 0x20, 0xc1]);
        assert!(DataImage::parse_mapped(&file, 8, Some(true)).is_ok());
        // a whole word written out where the half map is present
        let whole = [0b11, 0b01, 0, 0x40, 0, 0, 0x20, 0xc1];
        assert!(DataImage::parse_mapped(&whole, 8, Some(true)).is_err());
        // a half bit past the stored words
        let past = [0b11, 0b111, 0, 0x40, 0x20, 0xc1];
        assert!(DataImage::parse_mapped(&past, 8, Some(true)).is_err());
        // a half word as the 2-byte last word of a 6-byte image
        let short = [0b11, 0b10, 1, 0, 0, 0, 0x20, 0xc1];
        assert!(DataImage::parse_mapped(&short, 6, Some(true)).is_err());
        // a half word of zeros
        let zero = [0b01, 0b01, 0, 0];
        assert!(DataImage::parse_mapped(&zero, 4, Some(true)).is_err());
    }
}
