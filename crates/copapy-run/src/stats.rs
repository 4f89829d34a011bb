//! Timing statistics of a periodic run: nearest-rank percentiles over all samples.
#![forbid(unsafe_code)]

use std::fmt;

/// Summary of a set of durations in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Number of samples.
    pub count: usize,
    /// Smallest.
    pub min: u64,
    /// 50th percentile.
    pub median: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

/// Nearest-rank percentile `p` (0 < p ≤ 1) of sorted samples.
fn rank(sorted: &[u64], p: f64) -> u64 {
    let k = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[k - 1]
}

impl Summary {
    /// Summarises `samples` (sorted in place); `None` if there are none.
    pub fn of(samples: &mut [u64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        Some(Summary {
            count: samples.len(),
            min: samples[0],
            median: rank(samples, 0.5),
            p99: rank(samples, 0.99),
            p999: rank(samples, 0.999),
            max: samples[samples.len() - 1],
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

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u64> = (1..=1000).rev().collect();
        let s = Summary::of(&mut v).unwrap();
        assert_eq!(
            (s.min, s.median, s.p99, s.p999, s.max),
            (1, 500, 990, 999, 1000)
        );
        let mut one = vec![7];
        let s = Summary::of(&mut one).unwrap();
        assert_eq!((s.min, s.median, s.p999, s.max), (7, 7, 7, 7));
        assert!(Summary::of(&mut []).is_none());
    }
}
