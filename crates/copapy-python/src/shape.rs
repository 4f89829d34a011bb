//! The shape algebra of every container (`tensor`, `vector`, `cp.array`, packing), in plain
//! Rust: strides, index positions, broadcasting, strided views (indexing, transposes, broadcasts), the
//! grouping of reductions over axes, reshapes and the size limit. `ndcore/` binds it to
//! Python; nothing here knows Python, so each rule is one function with its unit test.

/// Row-major strides (in elements) of `shape`.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        st[i] = st[i + 1] * shape[i + 1];
    }
    st
}

/// Int index `i` as a position on an axis of length `n`, as Python's: wrapped once if
/// negative, `None` outside `-n..n` (each caller says in its own words what was out of range).
pub fn position(i: i64, n: usize) -> Option<usize> {
    let n = n as i64;
    (-n..n).contains(&i).then(|| i.rem_euclid(n) as usize)
}

/// NumPy's broadcast of two shapes, `None` when they do not fit.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let at = |s: &[usize], i: usize| {
        if i + s.len() < n {
            1
        } else {
            s[i + s.len() - n]
        }
    };
    (0..n)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y || y == 1 => Some(x),
            (1, y) => Some(y),
            _ => None,
        })
        .collect()
}

/// Strides that read an array of `shape` as the broadcast shape `target`: 0 along the
/// dimensions it is repeated over.
pub fn broadcast_strides(shape: &[usize], target: &[usize]) -> Vec<usize> {
    let pad = target.len() - shape.len();
    let own = strides(shape);
    (0..target.len())
        .map(|i| {
            if i < pad || shape[i - pad] == 1 {
                0
            } else {
                own[i - pad]
            }
        })
        .collect()
}

/// Flat indices of the elements of a strided view, in row-major order of `shape` (a stride
/// is negative for a slice with a negative step).
pub fn view_indices(offset: isize, shape: &[usize], strides: &[isize]) -> Vec<usize> {
    let mut idx = vec![offset];
    for (&n, &s) in shape.iter().zip(strides) {
        idx = idx
            .iter()
            .flat_map(|&i| (0..n as isize).map(move |k| i + k * s))
            .collect();
    }
    idx.into_iter().map(|i| i.max(0) as usize).collect()
}

/// The (size, stride) dimensions of a strided walk with size-1 dimensions dropped and
/// contiguous neighbours merged (at least one): what one strided-copy stencil walks.
pub fn merged(shape: &[usize], strides: &[isize]) -> Vec<(usize, isize)> {
    let mut dims: Vec<(usize, isize)> = Vec::new();
    for (&n, &st) in shape.iter().zip(strides) {
        match dims.last_mut() {
            _ if n == 1 => {}
            Some(last) if last.1 == st * n as isize => *last = (last.0 * n, st),
            _ => dims.push((n, st)),
        }
    }
    if dims.is_empty() {
        dims.push((1, 0));
    }
    dims
}

/// Signed strides, as views take them.
pub fn signed(strides: &[usize]) -> Vec<isize> {
    strides.iter().map(|&s| s as isize).collect()
}

/// `shape` with its axes permuted by `perm`, and the strides that read it.
pub fn transposed(shape: &[usize], perm: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let st = strides(shape);
    (
        perm.iter().map(|&a| shape[a]).collect(),
        perm.iter().map(|&a| st[a]).collect(),
    )
}

/// The flat indices of `shape` grouped for a reduction over the sorted `axes`: one group per
/// result element (row-major over the kept axes), holding its terms in row-major order of
/// the reduced axes (the documented order of reductions over axes); also the kept axes.
pub fn reduction_groups(shape: &[usize], axes: &[usize]) -> (Vec<Vec<usize>>, Vec<usize>) {
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let st = strides(shape);
    let pick = |ds: &[usize]| -> (Vec<usize>, Vec<usize>) {
        (
            ds.iter().map(|&d| shape[d]).collect(),
            ds.iter().map(|&d| st[d]).collect(),
        )
    };
    let (ks, kst) = pick(&kept);
    let (rs, rst) = pick(axes);
    let terms = view_indices(0, &rs, &signed(&rst));
    let groups = view_indices(0, &ks, &signed(&kst))
        .into_iter()
        .map(|base| terms.iter().map(|t| base + t).collect())
        .collect();
    (groups, kept)
}

/// Applies NumPy's reshape rules: at most one negative dimension, inferred from `size`; the
/// product must be `size`. The error names the shape (the caller names the container).
pub fn reshape(dims: &[i64], size: usize) -> Result<Vec<usize>, ReshapeError> {
    let unknown: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] < 0).collect();
    if unknown.len() > 1 {
        return Err(ReshapeError::TwoUnknown);
    }
    let known = dims
        .iter()
        .filter(|&&d| d >= 0)
        .try_fold(1usize, |acc, &d| acc.checked_mul(d as usize));
    let mut out: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
    match (known, unknown.first()) {
        (Some(k), Some(&i)) if k != 0 && size.is_multiple_of(k) => out[i] = size / k,
        (Some(k), None) if k == size => {}
        _ => return Err(ReshapeError::Mismatch),
    }
    Ok(out)
}

/// Why a reshape failed.
#[derive(Debug, PartialEq)]
pub enum ReshapeError {
    TwoUnknown,
    Mismatch,
}

/// Whether `dims` stays within `max` elements; as NumPy, a shape with a zero dimension is
/// refused too if its other dimensions multiply beyond the limit. `Err` carries the count.
pub fn check_size(dims: &[usize], max: usize) -> Result<(), u128> {
    let nonzero: u128 = dims
        .iter()
        .filter(|&&d| d != 0)
        .map(|&d| d as u128)
        .product();
    if nonzero > max as u128 {
        Err(nonzero)
    } else {
        Ok(())
    }
}

/// A shape as Python writes the tuple: `()`, `(3,)`, `(2, 3)`.
pub fn show<T: std::fmt::Display>(shape: &[T]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `fold` over a non-empty sequence in the documented summation order (stencils/README.md,
/// "Array stencils"): term k goes into partial k % 8, then partials l and l + 4 are
/// combined, then l and l + 2, then the last two (partials that got no term are left out).
pub fn tree_fold<T, E>(
    terms: impl IntoIterator<Item = T>,
    mut fold: impl FnMut(T, T) -> Result<T, E>,
) -> Result<Option<T>, E> {
    let mut parts: Vec<Option<T>> = Vec::with_capacity(8);
    for (k, t) in terms.into_iter().enumerate() {
        if k < 8 {
            parts.push(Some(t));
        } else if let Some(acc) = parts[k & 7].take() {
            parts[k & 7] = Some(fold(acc, t)?);
        }
    }
    for half in [4, 2, 1] {
        for lane in 0..half.min(parts.len().saturating_sub(half)) {
            if let (Some(a), Some(b)) = (parts[lane].take(), parts[lane + half].take()) {
                parts[lane] = Some(fold(a, b)?);
            }
        }
        parts.truncate(half);
    }
    Ok(parts.into_iter().next().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts_as_numpy() {
        assert_eq!(broadcast(&[2, 1, 3], &[4, 1]), Some(vec![2, 4, 3]));
        assert_eq!(broadcast(&[], &[2]), Some(vec![2]));
        assert_eq!(broadcast(&[3], &[4]), None);
        assert_eq!(broadcast_strides(&[3, 1], &[2, 3, 4]), vec![0, 1, 0]);
    }

    #[test]
    fn positions_wrap_once() {
        assert_eq!(position(2, 3), Some(2));
        assert_eq!(position(-1, 3), Some(2));
        assert_eq!(position(-3, 3), Some(0));
        assert_eq!(
            (position(3, 3), position(-4, 3), position(0, 0)),
            (None, None, None)
        );
        assert_eq!(position(i64::MIN, 2), None);
    }

    #[test]
    fn views_transposes_and_groups() {
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
        let (s, st) = transposed(&[2, 3], &[1, 0]);
        assert_eq!(view_indices(0, &s, &signed(&st)), vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(view_indices(2, &[3], &[-1]), vec![2, 1, 0]);
        assert_eq!(merged(&[2, 1, 3], &[3, 9, 1]), vec![(6, 1)]);
        assert_eq!(merged(&[2, 3], &[1, 2]), vec![(2, 1), (3, 2)]);
        assert_eq!(merged(&[1], &[5]), vec![(1, 0)]);
        let (groups, kept) = reduction_groups(&[2, 3], &[0]);
        assert_eq!(
            (groups, kept),
            (vec![vec![0, 3], vec![1, 4], vec![2, 5]], vec![1])
        );
    }

    #[test]
    fn reshapes_and_limits() {
        assert_eq!(reshape(&[-1, 3], 6), Ok(vec![2, 3]));
        assert_eq!(reshape(&[-1, -1], 6), Err(ReshapeError::TwoUnknown));
        assert_eq!(reshape(&[4, -1], 6), Err(ReshapeError::Mismatch));
        assert_eq!(reshape(&[0, -1], 0), Err(ReshapeError::Mismatch));
        assert_eq!(check_size(&[0, 1 << 31, 1 << 31], 1 << 26), Err(1 << 62));
        assert_eq!(show::<usize>(&[]), "()");
        assert_eq!(show(&[3]), "(3,)");
        assert_eq!(show(&[2, 3]), "(2, 3)");
    }

    #[test]
    fn folds_in_the_documented_order() {
        let show = |a: String, b: String| Ok::<_, ()>(format!("({a}+{b})"));
        let terms = (0..10).map(|k| k.to_string());
        let got = tree_fold(terms, show).unwrap().unwrap();
        assert_eq!(got, "((((0+8)+4)+(2+6))+(((1+9)+5)+(3+7)))");
        assert_eq!(tree_fold(Vec::<String>::new(), show), Ok(None));
    }
}
