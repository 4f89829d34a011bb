//! Timing statistics of a periodic run in constant memory: a fixed log-scale histogram
//! of nanoseconds (exact below 128 ns, then 128 buckets per power of two), with the
//! exact minimum and maximum. A day at 100 kHz costs the same ~58 KiB as ten steps.
//!
//! Resolution: a reported percentile is the lower edge of the bucket holding the
//! nearest-rank sample, clamped to [min, max]; it is never above the exact value and
//! less than 1/128 (0.8 %) below it ([`RELATIVE_RESOLUTION`]).
#![forbid(unsafe_code)]

use std::fmt;

/// log2 of the buckets per power of two (and of the first exact values).
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets needed for every `u64`.
const BUCKETS: usize = ((64 - SUB_BITS as usize) * SUB as usize) + SUB as usize;

/// A reported percentile `r` of exact value `x` satisfies `x·(1 − RELATIVE_RESOLUTION) < r ≤ x`.
pub const RELATIVE_RESOLUTION: f64 = 1.0 / SUB as f64;

/// Summary of a set of durations in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    /// Smallest (exact).
    pub min: u64,
    /// 50th percentile.
    pub median: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest (exact).
    pub max: u64,
    /// Mean (exact unless the sum saturated).
    pub mean: u64,
}

/// Streaming nanosecond histogram: `record` never allocates.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    count: u64,
    min: u64,
    max: u64,
    sum: u64, // saturating: the mean of a run is what a PERIODIC reply reports
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - SUB_BITS;
    (((shift as u64) << SUB_BITS) + (v >> shift)) as usize
}

/// The smallest value that falls in bucket `b`.
fn lower_edge(b: usize) -> u64 {
    let b = b as u64;
    if b < 2 * SUB {
        return b;
    }
    let shift = (b >> SUB_BITS) - 1;
    ((b & (SUB - 1)) | SUB) << shift
}

impl Histogram {
    /// An empty histogram (its one allocation).
    pub fn new() -> Histogram {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    /// Adds one sample.
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.count += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum = self.sum.saturating_add(ns);
    }

    /// Nearest-rank percentile `p` (0 < p ≤ 1), to the resolution above.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((p * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(lower_edge(b).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// The summary; `None` without samples.
    pub fn summary(&self) -> Option<Summary> {
        Some(Summary {
            count: self.count,
            min: self.min,
            median: self.percentile(0.5)?,
            p99: self.percentile(0.99)?,
            p999: self.percentile(0.999)?,
            max: self.max,
            mean: self.sum / self.count,
        })
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "min {:.2} µs, median {:.2} µs, p99 {:.2} µs, p99.9 {:.2} µs, max {:.2} µs ({} samples)",
            us(self.min),
            us(self.median),
            us(self.p99),
            us(self.p999),
            us(self.max),
            self.count
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest-rank percentile of sorted samples: the exact reference.
    fn exact(sorted: &[u64], p: f64) -> u64 {
        let k = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[k - 1]
    }

    fn check(samples: &[u64]) {
        let mut h = Histogram::new();
        for &s in samples {
            h.record(s);
        }
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        for p in [0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let (want, got) = (exact(&sorted, p), h.percentile(p).unwrap());
            assert!(got <= want, "p{p}: {got} above exact {want}");
            assert!(
                (want - got) as f64 <= want as f64 * RELATIVE_RESOLUTION,
                "p{p}: {got} too far below exact {want}"
            );
        }
        let s = h.summary().unwrap();
        assert_eq!((s.min, s.max), (sorted[0], *sorted.last().unwrap()));
        assert_eq!(s.count, samples.len() as u64);
    }

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut values: Vec<u64> = (0..4096).collect();
        for e in 7..64 {
            let p = 1u64 << e;
            values.extend([p - 1, p, p + 1, p + (p >> 7), p | (p >> 1)]);
        }
        values.push(u64::MAX);
        values.sort_unstable();
        let mut last = 0;
        for v in values {
            let b = bucket(v);
            assert!(b < BUCKETS && b >= last, "{v}");
            assert!(
                lower_edge(b) <= v && v - lower_edge(b) <= v >> SUB_BITS,
                "{v}"
            );
            assert_eq!(bucket(lower_edge(b)), b, "{v}");
            last = b;
        }
    }

    #[test]
    fn percentiles_within_the_documented_resolution() {
        let mut v: Vec<u64> = (1..=1000).rev().collect();
        check(&v);
        let mut h = Histogram::new();
        v.iter().for_each(|&x| h.record(x));
        let s = h.summary().unwrap();
        assert_eq!((s.min, s.median, s.p99, s.max), (1, 500, 988, 1000));
        check(&[7]);
        assert!(Histogram::new().summary().is_none());
        // a pseudo-random spread over nine decades, with heavy ties and a long tail
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        v = (0..200_000)
            .map(|k| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match k % 4 {
                    0 => 1000 + x % 50,
                    1 => x % 1_000_000_000,
                    2 => (x % 30) << (x % 34),
                    _ => 250_000,
                }
            })
            .collect();
        check(&v);
    }
}
