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

impl<'a> DataImage<'a> {
    /// The image stored as it is (versions 2 to 8).
    pub const fn raw(bytes: &'a [u8]) -> DataImage<'a> {
        DataImage {
            stored: bytes,
            len: bytes.len(),
            mapped: false,
        }
    }

    /// Reads a `len`-byte mapped image at the start of `rest`, checks it, and gives it
    /// with the bytes it takes in the file.
    pub(crate) fn parse_mapped(
        rest: &'a [u8],
        len: u64,
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
        let mut at = map_len;
        for (byte_index, &byte) in map.iter().enumerate() {
            for bit in 0..8 {
                if byte >> bit & 1 == 0 {
                    continue;
                }
                let word = byte_index * 8 + bit;
                if word >= words {
                    return Err(FormatError::BadDataImage { word });
                }
                let n = word_len(word, len);
                let stored = rest.get(at..at + n).ok_or(truncated((at + n) as u64))?;
                if stored.iter().all(|&b| b == 0) {
                    return Err(FormatError::BadDataImage { word });
                }
                at += n;
            }
        }
        let image = DataImage {
            stored: sub(rest, 0, at),
            len,
            mapped: true,
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
        let mut at = map_len;
        for (i, chunk) in out.chunks_mut(4).enumerate() {
            let stored = map.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1);
            if stored {
                let word = self.stored.get(at..).unwrap_or(&[]);
                for (d, s) in chunk.iter_mut().zip(word) {
                    *d = *s;
                }
                at += chunk.len();
            } else {
                chunk.fill(0);
            }
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

/// `data` as version 9 stores it: the map of non-zero words, then those words.
#[cfg(feature = "alloc")]
pub(crate) fn encode_mapped(data: &[u8], out: &mut alloc::vec::Vec<u8>) {
    let words = data.len().div_ceil(4);
    let map_at = out.len();
    out.resize(map_at + words.div_ceil(8), 0);
    for (i, word) in data.chunks(4).enumerate() {
        if word.iter().any(|&b| b != 0) {
            out[map_at + i / 8] |= 1 << (i % 8);
            out.extend_from_slice(word);
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
                encode_mapped(&data, &mut file);
                let zero_words = data.chunks(4).filter(|w| w.iter().all(|&b| b == 0)).count();
                let stored_bytes: usize = data
                    .chunks(4)
                    .filter(|w| w.iter().any(|&b| b != 0))
                    .map(<[u8]>::len)
                    .sum();
                assert_eq!(file.len(), len.div_ceil(4).div_ceil(8) + stored_bytes);
                assert!(zero_words == 0 || file.len() < len + len.div_ceil(32) + 1);
                file.extend_from_slice(&[1, 2, 3]); // what follows is not read
                let (image, used) = DataImage::parse_mapped(&file, len as u64).unwrap();
                assert_eq!(used, file.len() - 3);
                assert_eq!(image.to_vec(), data);
                for cut in 0..used {
                    assert!(DataImage::parse_mapped(&file[..cut], len as u64).is_err());
                }
            }
        }
    }

    #[test]
    fn a_stored_zero_word_or_a_bit_past_the_end_is_refused() {
        // 6 bytes: two words, the second 2 bytes long
        assert_eq!(
            DataImage::parse_mapped(&[0b01, 0, 0, 0, 0], 6),
            Err(FormatError::BadDataImage { word: 0 })
        );
        assert_eq!(
            DataImage::parse_mapped(&[0b10, 0, 0], 6),
            Err(FormatError::BadDataImage { word: 1 })
        );
        assert_eq!(
            DataImage::parse_mapped(&[0b100], 6),
            Err(FormatError::BadDataImage { word: 2 })
        );
        let (image, used) = DataImage::parse_mapped(&[0b10, 0, 7], 6).unwrap();
        assert_eq!((image.to_vec(), used), (alloc::vec![0, 0, 0, 0, 0, 7], 3));
        // copying into a shorter buffer writes what fits
        let mut short = [9u8; 5];
        image.copy_to(&mut short);
        assert_eq!(short, [0, 0, 0, 0, 0]);
    }
}
