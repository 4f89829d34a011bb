/* copapy math library (float32). See mathlib.h for the rules and docs/math.md for
 * the measured accuracy.
 *
 * Only IEEE float32 + - * / and int<->float conversions are used on floats; all other
 * work is integer. Every loop has a constant trip count. Compile with
 * -ffp-contract=off (no fused multiply-add): several algorithms below (TwoSum,
 * Dekker's product) are exact only with separately rounded operations. */
#include <stdint.h>
#include "mathlib.h"

#define CPM_INLINE static inline __attribute__((always_inline))
#define CPM_NAN_BITS 0x7fc00000u

typedef union {
    float f;
    uint32_t u;
} cpm_fu;

CPM_INLINE uint32_t cpm_bits(float x) {
    cpm_fu v;
    v.f = x;
    return v.u;
}

CPM_INLINE float cpm_from_bits(uint32_t u) {
    cpm_fu v;
    v.u = u;
    return v.f;
}

/* floor(log2(v)) for 0 < v < 2^24: the int->float conversion is exact, so its
 * exponent field is the position of the leading bit (no clz, which some targets
 * would turn into a library call). */
CPM_INLINE int cpm_ilog2_24(uint32_t v) {
    return (int)(cpm_bits((float)(int32_t)v) >> 23) - 127;
}

/* ------------------------------------------------------------------ floor */

CPM_NOINLINE float cpm_floorf(float x) {
    uint32_t u = cpm_bits(x);
    int e = (int)((u >> 23) & 0xffu) - 127;
    if (e >= 23) /* already integral, or inf / NaN (returned unchanged) */
        return x;
    if (e < 0) { /* |x| < 1 */
        if ((u << 1) == 0)
            return x; /* +-0 */
        return (u >> 31) ? -1.0f : 0.0f;
    }
    uint32_t frac = 0x007fffffu >> e;
    if ((u & frac) == 0)
        return x;
    if (u >> 31)
        u += frac; /* round the magnitude up for negatives (carries into the exponent) */
    return cpm_from_bits(u & ~frac);
}

/* ------------------------------------------------------------------ fmod */

/* (a * b) mod my for a, b < 2^24, my in [2^23, 2^24), inv = floor(2^48 / my).
 * Barrett reduction: the quotient estimate is at most 2 too small. */
CPM_INLINE uint32_t cpm_mulmod(uint32_t a, uint32_t b, uint32_t my, uint32_t inv) {
    uint64_t n = (uint64_t)a * b;                                 /* < 2^48 */
    uint32_t top = (uint32_t)(n >> 23);                           /* < 2^25 */
    uint32_t qe = (uint32_t)(((uint64_t)top * inv) >> 25);        /* q - 2 <= qe <= q */
    uint32_t r = (uint32_t)(n - (uint64_t)qe * my);               /* < 3 my */
    r = r >= my ? r - my : r;
    r = r >= my ? r - my : r;
    return r;
}

/* Exact fmodf: |x| = mx 2^ex, |y| = my 2^ey (integer mantissas), so
 * |x| mod |y| = ((mx * 2^(ex-ey)) mod my) 2^ey. 2^d mod my is computed by
 * square-and-multiply over the 9 bits of d (d <= 276) with Barrett reductions,
 * so the cost does not depend on the operands. */
CPM_NOINLINE float cpm_fmodf(float x, float y) {
    uint32_t ux = cpm_bits(x), uy = cpm_bits(y);
    uint32_t sx = ux & 0x80000000u;
    uint32_t ax = ux & 0x7fffffffu, ay = uy & 0x7fffffffu;
    if (ax >= 0x7f800000u || ay > 0x7f800000u || ay == 0)
        return cpm_from_bits(CPM_NAN_BITS); /* x inf/NaN, y NaN or 0 */
    if (ax < ay)
        return x; /* includes y = +-inf */

    uint32_t ex = ax >> 23, ey = ay >> 23;
    uint32_t mx = (ax & 0x007fffffu) | (ex ? 0x00800000u : 0u);
    uint32_t my = (ay & 0x007fffffu) | (ey ? 0x00800000u : 0u);
    ex = ex ? ex : 1u; /* subnormals share the exponent of the smallest normal */
    ey = ey ? ey : 1u;

    /* normalise my to [2^23, 2^24); s > 0 only for a subnormal y */
    int s = 23 - cpm_ilog2_24(my);
    my <<= s;
    uint32_t d = ex - ey + (uint32_t)s; /* 0 <= d <= 276, since |x| >= |y| */

    /* inv = floor(2^48 / my) by restoring division (fixed 24 steps) */
    uint32_t rem = (1u << 24) - my, inv = 1;
    if (rem >= my) {
        rem -= my;
        inv = 2;
    }
    /* both loops fully unrolled: straight-line steps, so the stencil build bounds
     * fmod's instruction count (stencils/bounds.py) without a loop to walk */
#pragma clang loop unroll(full)
    for (int k = 0; k < 24; k++) {
        rem <<= 1;
        inv <<= 1;
        uint32_t ge = rem >= my;
        rem -= ge ? my : 0u;
        inv |= ge;
    }

    /* t = 2^d mod my */
    uint32_t t = 1;
#pragma clang loop unroll(full)
    for (int k = 8; k >= 0; k--) {
        t = cpm_mulmod(t, t, my, inv);
        t <<= (d >> k) & 1u;
        t = t >= my ? t - my : t;
    }
    uint32_t r = cpm_mulmod(mx, t, my, inv);
    if (r == 0)
        return cpm_from_bits(sx); /* +-0 with the sign of x */

    /* the result r 2^(ey - 150 - s) is a multiple of 2^-149, so r >> s is exact */
    r >>= s;
    int lr = cpm_ilog2_24(r);
    int be = lr + (int)ey - 23; /* biased exponent of the result */
    uint32_t out;
    if (be >= 1)
        out = ((uint32_t)(be - 1) << 23) + (r << (23 - lr));
    else
        out = r << (ey - 1); /* subnormal: value / 2^-149 */
    return cpm_from_bits(out | sx);
}

/* ------------------------------------------------------------------ NumPy divmod */

/* NumPy's npy_divmodf, step for step (numpy/_core/src/npymath/npy_math_internal.h.src). */
CPM_INLINE float cpm_divmodf(float a, float b, float *modulus) {
    float div, mod, floordiv;
    mod = cpm_fmodf(a, b);
    if (!b) {
        *modulus = mod;
        return a / b;
    }
    div = (a - mod) / b;
    if (mod) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= 1.0f;
        }
    } else {
        mod = cpm_from_bits(cpm_bits(b) & 0x80000000u); /* copysign(0, b) */
    }
    if (div) {
        floordiv = cpm_floorf(div);
        if (div - floordiv > 0.5f)
            floordiv += 1.0f;
    } else {
        floordiv = cpm_from_bits(cpm_bits(a / b) & 0x80000000u); /* copysign(0, a/b) */
    }
    *modulus = mod;
    return floordiv;
}

CPM_NOINLINE float cpm_floordivf(float a, float b) {
    float mod;
    return cpm_divmodf(a, b, &mod);
}

CPM_NOINLINE float cpm_remainderf(float a, float b) {
    float mod;
    cpm_divmodf(a, b, &mod);
    return mod;
}

/* ------------------------------------------------------------------ sin / cos */

/* Error-free transformations (exact with round-to-nearest, no FMA contraction). */
CPM_INLINE void cpm_two_sum(float a, float b, float *s, float *e) {
    float x = a + b;
    float bv = x - a;
    float av = x - bv;
    *e = (a - av) + (b - bv);
    *s = x;
}

CPM_INLINE void cpm_fast_two_sum(float a, float b, float *s, float *e) { /* |a| >= |b| or a == 0 */
    float x = a + b;
    *e = b - (x - a);
    *s = x;
}

CPM_INLINE void cpm_split(float a, float *hi, float *lo) { /* Veltkamp, 12 + 12 bits */
    float c = 4097.0f * a;
    float h = c - (c - a);
    *hi = h;
    *lo = a - h;
}

CPM_INLINE void cpm_two_prod(float a, float b, float *p, float *e) { /* Dekker */
    float x = a * b, ah, al, bh, bl;
    cpm_split(a, &ah, &al);
    cpm_split(b, &bh, &bl);
    *e = (((ah * bh - x) + ah * bl) + al * bh) + al * bl;
    *p = x;
}

/* 2/pi: 32 zero bits (so windows may start before the binary point), then
 * 224 bits of the fraction (checked against an exact computation by ulp_error.py). */
static const uint32_t cpm_two_over_pi_bits[8] = {
    0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u,
    0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
};

/* pi/2 = C1 + C2 + C3 + C4 (+ 1e-23): C1..C3 have at most 15 significant bits, so
 * k * Ci is exact for k < 2^9. */
#define CPM_PIO2_C1 0x1.922p+0f
#define CPM_PIO2_C2 (-0x1.2afp-18f)
#define CPM_PIO2_C3 0x1.0b48p-34f
#define CPM_PIO2_C4 (-0x1.ee59dap-50f)
/* pi/2 = HI + LO to 48 bits */
#define CPM_PIO2_HI 0x1.921fb6p+0f
#define CPM_PIO2_LO (-0x1.777a5cp-25f)
#define CPM_TWO_OVER_PI 0x1.45f306p-1f

/* Reduce |x| (ax = its bits, pi/4 < |x| < inf) to |x| = q pi/2 + (rh + rl),
 * |rh + rl| <= pi/4 (+ a hair), rh + rl accurate to ~2^-60 absolute. */
CPM_INLINE uint32_t cpm_rem_pio2(uint32_t ax, float *rh, float *rl) {
    float y = cpm_from_bits(ax);
    if (ax < 0x44000000u) {
        /* |x| < 512: Cody-Waite, k < 2^9 */
        int32_t ki = (int32_t)(y * CPM_TWO_OVER_PI + 0.5f);
        float k = (float)ki;
        float t1 = y - k * CPM_PIO2_C1; /* exact (Sterbenz-like: same grid, smaller) */
        float h, l, s, e;
        cpm_two_sum(t1, -(k * CPM_PIO2_C2), &h, &l);
        cpm_two_sum(h, -(k * CPM_PIO2_C3), &s, &e);
        l = (l + e) - k * CPM_PIO2_C4;
        cpm_fast_two_sum(s, l, rh, rl);
        return (uint32_t)ki;
    }
    /* Payne-Hanek: |x| = m 2^E, m < 2^24 integer. Bits of 2/pi with weight >= 4 in
     * m 2^E 2/pi contribute multiples of 4 and are skipped: take a 96-bit window W
     * starting at the bit of weight 2^1, then (m W mod 2^96) 2^-94 = |x| 2/pi mod 4
     * with an error < 2^-70. */
    uint32_t m = (ax & 0x007fffffu) | 0x00800000u;
    int E = (int)(ax >> 23) - 150;      /* -14 ... 104 */
    uint32_t pos = (uint32_t)(E + 30);   /* bit index of b_(E-1) in the table */
    uint32_t w = pos >> 5, sh = pos & 31u;
    /* x86_64 non-PIC code would index the table with an absolute 32-bit address
     * (R_X86_64_32S / R_X86_64_32), which cannot reach code placed above 2 GiB and
     * which the copapy linker rejects: take its address with a RIP-relative lea. */
    const uint32_t *T;
#if defined(__x86_64__)
    __asm__("leaq %1, %0" : "=r"(T) : "m"(cpm_two_over_pi_bits[0]));
#else
    T = cpm_two_over_pi_bits;
#endif
    T += w;
    uint32_t W2 = (uint32_t)(((((uint64_t)T[0] << 32) | T[1]) << sh) >> 32);
    uint32_t W1 = (uint32_t)(((((uint64_t)T[1] << 32) | T[2]) << sh) >> 32);
    uint32_t W0 = (uint32_t)(((((uint64_t)T[2] << 32) | T[3]) << sh) >> 32);
    uint64_t p0 = (uint64_t)m * W0, p1 = (uint64_t)m * W1, p2 = (uint64_t)m * W2;
    uint64_t t = (p0 >> 32) + (uint32_t)p1;
    uint32_t R0 = (uint32_t)p0, R1 = (uint32_t)t;
    uint32_t R2 = (uint32_t)((t >> 32) + (p1 >> 32) + (uint32_t)p2);
    /* quadrant = the 2 integer bits, rounded by the first fraction bit */
    uint32_t q = (R2 >> 30) + ((R2 >> 29) & 1u);
    /* f in [-1/2, 1/2) as a signed 64-bit fixed-point number (2^-64 units) */
    uint64_t F = ((uint64_t)R2 << 34) | ((uint64_t)R1 << 2) | (R0 >> 30);
    int32_t c2 = (int32_t)((int64_t)F >> 43);         /* signed 21 bits */
    int32_t c1 = (int32_t)((F >> 22) & 0x1fffffu);    /* 21 bits */
    int32_t c0 = (int32_t)(F & 0x3fffffu);            /* 22 bits */
    float h, l, fh, fl;
    cpm_fast_two_sum((float)c2 * 0x1p-21f, (float)c1 * 0x1p-42f, &h, &l);
    l = l + (float)c0 * 0x1p-64f;
    cpm_fast_two_sum(h, l, &fh, &fl);
    /* r = f pi/2 in double-float */
    float ph, pl;
    cpm_two_prod(fh, CPM_PIO2_HI, &ph, &pl);
    pl = pl + (fh * CPM_PIO2_LO + fl * CPM_PIO2_HI);
    cpm_fast_two_sum(ph, pl, rh, rl);
    return q;
}

/* |x| (bits ax, finite) as rh + rl in [-pi/4, pi/4] and its quadrant; arguments already
 * that small pass through unreduced. Shared by sin/cos and tan. */
CPM_INLINE uint32_t cpm_reduce(uint32_t ax, float *rh, float *rl) {
    if (ax <= 0x3f490fdbu) { /* |x| <= pi/4 */
        *rh = cpm_from_bits(ax);
        *rl = 0.0f;
        return 0;
    }
    return cpm_rem_pio2(ax, rh, rl);
}

/* sin(rh + rl) for |rh| <= pi/4, |rl| <= ulp(rh). Minimax coefficients for sin(x)/x
 * on [-pi/4, pi/4] (from FreeBSD/musl __sindf, |error| < 2^-37.5). */
CPM_INLINE float cpm_sin_kernel(float rh, float rl) {
    const float S1 = -0.166666666416265235595f, S2 = 0.0083333293858894631756f,
                S3 = -0.000198393348360966317347f, S4 = 0.0000027183114939898219064f;
    float z = rh * rh;
    float s3 = (rh * z) * (S1 + z * (S2 + z * (S3 + z * S4)));
    float small = (rl - (0.5f * z) * rl) + s3; /* rl cos(rh) + rh^3 P(rh^2) */
    return rh + small;
}

/* cos(rh + rl) for |rh| <= pi/4. 1 - rh^2/2 is formed exactly (Dekker product plus
 * the rounding error of the subtraction) so only the final addition rounds at full
 * weight. Coefficients from FreeBSD/musl __cosdf (C0 + 0.5 folded separately). */
CPM_INLINE float cpm_cos_kernel(float rh, float rl) {
    const float C0P = 2.748968996879e-9f, /* -0.499999997251031003120 + 0.5 */
        C1 = 0.0416666233237390631894f, C2 = -0.00138867637746099294692f,
                C3 = 0.0000243904487962774090654f;
    float z, ez;
    cpm_two_prod(rh, rh, &z, &ez);
    float hz = 0.5f * z;
    float w = 1.0f - hz;
    float werr = (1.0f - w) - hz;
    float tail = z * C0P + (z * z) * (C1 + z * (C2 + z * C3));
    return w + (werr + (tail - (0.5f * ez + rh * rl)));
}

CPM_INLINE float cpm_sincos(float x, uint32_t cosine) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    if (ax >= 0x7f800000u)
        return cpm_from_bits(CPM_NAN_BITS);
    if (ax < 0x39800000u) /* |x| < 2^-12: x (sin) and 1 (cos) are correctly rounded */
        return cosine ? 1.0f : x;
    float rh, rl;
    uint32_t q = cpm_reduce(ax, &rh, &rl);
    q += cosine;
    float v = (q & 1u) ? cpm_cos_kernel(rh, rl) : cpm_sin_kernel(rh, rl);
    /* sign: quadrants 2 and 3 negate; sin is odd, cos even */
    uint32_t neg = ((q >> 1) ^ (cosine ? 0u : (ux >> 31))) & 1u;
    return cpm_from_bits(cpm_bits(v) ^ (neg << 31));
}

CPM_NOINLINE float cpm_sinf(float x) { return cpm_sincos(x, 0); }

CPM_NOINLINE float cpm_cosf(float x) { return cpm_sincos(x, 1); }

/* ------------------------------------------------------------------ double-float helpers */

/* A value hi + lo with |lo| <= ulp(hi)/2 (about 48 significant bits). */
typedef struct {
    float h, l;
} cpm_df;

CPM_INLINE cpm_df cpm_df_sum(float a, float b) { /* exact a + b */
    cpm_df r;
    cpm_two_sum(a, b, &r.h, &r.l);
    return r;
}

CPM_INLINE cpm_df cpm_df_norm(float a, float b) { /* |a| >= |b| or a == 0 */
    cpm_df r;
    cpm_fast_two_sum(a, b, &r.h, &r.l);
    return r;
}

CPM_INLINE cpm_df cpm_df_add(cpm_df a, cpm_df b) {
    cpm_df s = cpm_df_sum(a.h, b.h);
    return cpm_df_norm(s.h, s.l + (a.l + b.l));
}

CPM_INLINE cpm_df cpm_df_mul(cpm_df a, cpm_df b) {
    float p, e;
    cpm_two_prod(a.h, b.h, &p, &e);
    e = e + (a.h * b.l + a.l * b.h);
    return cpm_df_norm(p, e);
}

CPM_INLINE cpm_df cpm_df_div(cpm_df a, cpm_df b) {
    float q = a.h / b.h, p, e;
    cpm_two_prod(q, b.h, &p, &e);
    float r = (((a.h - p) - e) + a.l) - q * b.l; /* a - q b, a.h - p is exact */
    return cpm_df_norm(q, r / b.h);
}

/* v * 2^n for n in [-151, 128] with a single rounding (two steps when the result is
 * subnormal or 2^n is not a normal float). */
CPM_INLINE float cpm_scale2(float v, int n) {
    if (n > 127)
        return (v * 0x1p127f) * cpm_from_bits((uint32_t)(n - 127 + 127) << 23);
    if (n < -126)
        return (v * cpm_from_bits((uint32_t)(n + 64 + 127) << 23)) * 0x1p-64f;
    return v * cpm_from_bits((uint32_t)(n + 127) << 23);
}

/* ------------------------------------------------------------------ exp / log / pow */

/* ln 2 = C1 + C2 + C3 (to 2^-62): C1 and C2 have 16 significant bits, so n * C1 and
 * n * C2 are exact for |n| < 2^8. */
#define CPM_LN2_C1 0x1.62e4p-1f
#define CPM_LN2_C2 0x1.7f7ep-20f
#define CPM_LN2_C3 (-0x1.c610cap-37f)
#define CPM_LOG2E 0x1.715476p+0f
#define CPM_INF_BITS 0x7f800000u

/* exp(rh + rl) for |rh| <= 0.36, |rl| <= 2^-20, as an unrounded sum hi + lo in
 * [0.7, 1.42]: 1 + rh + rh^2/2 are summed exactly (Dekker square, Fast2Sum, TwoSum)
 * so only the final addition rounds at full weight; the tail rh^3 Q(rh) (< 0.008) is a
 * minimax fit, |error| < 2^-31.7 (fit_poly.py). */
CPM_INLINE cpm_df cpm_exp_kernel(float rh, float rl) {
    const float Q0 = 0x1.555556p-3f, Q1 = 0x1.5554dcp-5f, Q2 = 0x1.11108ap-7f,
                Q3 = 0x1.6d5b88p-10f, Q4 = 0x1.a1abc2p-13f;
    float z, ez, s2, e2;
    cpm_two_prod(rh, rh, &z, &ez);
    float s = 1.0f + rh;
    float e1 = (1.0f - s) + rh;
    cpm_two_sum(s, 0.5f * z, &s2, &e2);
    float tail = (rh * z) * (Q0 + rh * (Q1 + rh * (Q2 + rh * (Q3 + rh * Q4))));
    float lo = ((e1 + e2) + 0.5f * ez) + ((rl + rl * rh) + tail);
    return (cpm_df){s2, lo};
}

/* exp(wh + wl) for -104 <= wh <= 89, |wl| <= ulp(wh): Cody-Waite reduction by n ln 2
 * (wh - n C1 is exact: |result| <= 0.35 is below both operands), the kernel, and the
 * scaling by 2^n (n in [-150, 128]) with one rounding, also for subnormal results. */
/* exp(wh + wl) = (k.h + k.l) 2^n, unrounded: the reduction and kernel shared by exp,
 * pow and tanh. */
CPM_INLINE cpm_df cpm_exp_split(float wh, float wl, int32_t *np) {
    /* round to nearest: +-0.5 with the sign of wh (by bits: a ternary on two float
     * constants becomes a 2-entry table with an absolute address on x86_64) */
    float half = cpm_from_bits(0x3f000000u | (cpm_bits(wh) & 0x80000000u));
    int32_t n = (int32_t)(wh * CPM_LOG2E + half);
    float fn = (float)n;
    float t = wh - fn * CPM_LN2_C1;
    cpm_df r = cpm_df_sum(t, -(fn * CPM_LN2_C2));
    cpm_df rr = cpm_df_sum(r.h, r.l + (wl - fn * CPM_LN2_C3));
    *np = n;
    return cpm_exp_kernel(rr.h, rr.l);
}

CPM_INLINE float cpm_exp_df(float wh, float wl) {
    int32_t n;
    cpm_df k = cpm_exp_split(wh, wl, &n);
    if (n > -126 || (n == -126 && k.h >= 1.0f)) /* normal result: scaling is exact */
        return cpm_scale2(k.h + k.l, n);
    /* subnormal result: scaled by 2^64 (exactly) it lies below B = 2^-62, whose binade
     * has the spacing 2^-85 of the subnormal grid times 2^64; adding B makes the one
     * rounding happen on that grid, subtracting B and scaling back are exact. */
    float sc = cpm_from_bits((uint32_t)(n + 64 + 127) << 23);
    float hs, es;
    cpm_two_sum(0x1p-62f, k.h * sc, &hs, &es);
    float v = hs + (es + k.l * sc);
    return (v - 0x1p-62f) * 0x1p-64f;
}

CPM_NOINLINE float cpm_expf(float x) {
    uint32_t ax = cpm_bits(x) & 0x7fffffffu;
    if (ax > CPM_INF_BITS)
        return cpm_from_bits(CPM_NAN_BITS);
    if (x > 89.0f) /* > ln(FLT_MAX) + 0.3: overflow (also +inf) */
        return cpm_from_bits(CPM_INF_BITS);
    if (x < -104.0f) /* < ln(2^-150): rounds to 0 (also -inf) */
        return 0.0f;
    return cpm_exp_df(x, 0.0f);
}

/* log(x) as a double-float for finite x > 0, relative error about 2^-40:
 * x = 2^e m with m in [sqrt(1/2), sqrt(2)), s = (m - 1)/(m + 1) in double-float
 * (|s| <= 0.1716), log m = 2 atanh(s) = 2s + s^3 (2/3 + s^2 T(s^2)) with the first two
 * terms in double-float; T is a minimax fit, |s^5 T - (2 atanh s - 2s - 2s^3/3)| < 2^-42.
 * e ln 2 = e C1 + e C2 (both exact) + e C3. */
CPM_INLINE cpm_df cpm_log_df(float x) {
    const float T0 = 0x1.999998p-2f, T1 = 0x1.2493bap-2f, T2 = 0x1.c63eaap-3f,
                T3 = 0x1.905558p-3f;
    const float C23H = 0x1.555556p-1f, C23L = -0x1.555556p-26f; /* 2/3 */
    uint32_t u = cpm_bits(x);
    int32_t k = 0;
    if (u < 0x00800000u) { /* subnormal: scale up exactly */
        u = cpm_bits(x * 0x1p25f);
        k = -25;
    }
    uint32_t v = u - 0x3f3504f3u; /* bits of sqrt(1/2): exponent split there */
    int32_t e = k + ((int32_t)v >> 23);
    float m = cpm_from_bits((v & 0x007fffffu) + 0x3f3504f3u);
    cpm_df num = {m - 1.0f, 0.0f}; /* exact (Sterbenz) */
    cpm_df s = cpm_df_div(num, cpm_df_sum(m, 1.0f));
    cpm_df s2 = cpm_df_mul(s, s);
    float z = s2.h;
    cpm_df c = cpm_df_sum(C23H, z * (T0 + z * (T1 + z * (T2 + z * T3))));
    c.l += C23L;
    cpm_df r = cpm_df_mul(cpm_df_mul(s2, s), c);
    cpm_df lm = cpm_df_add((cpm_df){2.0f * s.h, 2.0f * s.l}, r);
    float fe = (float)e;
    cpm_df el = cpm_df_sum(fe * CPM_LN2_C1, fe * CPM_LN2_C2);
    el.l += fe * CPM_LN2_C3;
    return cpm_df_add(el, lm);
}

CPM_NOINLINE float cpm_logf(float x) {
    uint32_t u = cpm_bits(x);
    if ((u << 1) == 0) /* +-0 */
        return cpm_from_bits(0xff800000u);
    if (u > CPM_INF_BITS) /* negative (incl. -inf) or NaN */
        return cpm_from_bits(CPM_NAN_BITS);
    if (u == CPM_INF_BITS)
        return x;
    cpm_df r = cpm_log_df(x);
    return r.h + r.l;
}

/* C99 / IEEE powf. |x|^y = exp(y log|x|): log in double-float (above), the product
 * y log|x| with Dekker's exact product, exp of the double-float result. */
CPM_NOINLINE float cpm_powf(float x, float y) {
    uint32_t ux = cpm_bits(x), uy = cpm_bits(y);
    uint32_t ax = ux & 0x7fffffffu, ay = uy & 0x7fffffffu;
    if (ay == 0 || ux == 0x3f800000u) /* pow(x, +-0) = pow(1, y) = 1, even for NaN */
        return 1.0f;
    if (ax > CPM_INF_BITS || ay > CPM_INF_BITS)
        return cpm_from_bits(CPM_NAN_BITS);
    /* y: 0 = not an integer, 1 = odd integer, 2 = even integer */
    int32_t ey = (int32_t)(ay >> 23) - 127;
    uint32_t yint;
    if (ey >= 24)
        yint = 2;
    else if (ey < 0)
        yint = 0;
    else if (ay & (0x007fffffu >> ey))
        yint = 0;
    else
        yint = ((ay >> (23 - ey)) & 1u) ? 1u : 2u;
    uint32_t sign = ((ux >> 31) && yint == 1) ? 0x80000000u : 0u;
    uint32_t ypos = !(uy >> 31);
    uint32_t big = ax > 0x3f800000u; /* |x| > 1 */
    if (ay == CPM_INF_BITS) {        /* y = +-inf */
        if (ax == 0x3f800000u)
            return 1.0f; /* x = -1 */
        return cpm_from_bits(big == ypos ? CPM_INF_BITS : 0u);
    }
    if (ax == 0) /* x = +-0 */
        return cpm_from_bits(sign | (ypos ? 0u : CPM_INF_BITS));
    if (ax == CPM_INF_BITS) /* x = +-inf */
        return cpm_from_bits(sign | (ypos ? CPM_INF_BITS : 0u));
    if ((ux >> 31) && yint == 0) /* negative base, non-integer exponent */
        return cpm_from_bits(CPM_NAN_BITS);
    if (ax == 0x3f800000u) /* x = -1, y integer */
        return cpm_from_bits(sign | 0x3f800000u);
    if (ay >= 0x4f800000u) /* |y| >= 2^32 > 150 / min|log|x||: over/underflow */
        return cpm_from_bits(sign | (big == ypos ? CPM_INF_BITS : 0u));
    cpm_df l = cpm_log_df(cpm_from_bits(ax));
    float wh, wl;
    cpm_two_prod(l.h, y, &wh, &wl);
    cpm_df w = cpm_df_norm(wh, wl + l.l * y);
    float r;
    if (w.h > 89.0f)
        r = cpm_from_bits(CPM_INF_BITS);
    else if (w.h < -104.0f)
        r = 0.0f;
    else
        r = cpm_exp_df(w.h, w.l);
    return cpm_from_bits(cpm_bits(r) | sign);
}

/* ------------------------------------------------------------------ tan */

/* tan x = x + x^3 T(x^2) on [-pi/4, pi/4], minimax, relative error < 2^-27.3. On
 * r = rh + rl from the sin/cos reduction: tan(r) = th + tl in double-float (the rl
 * term is rl (1 + tan^2 rh)); odd quadrants give -1/tan(r), one Newton step on the
 * double-float. */
CPM_NOINLINE float cpm_tanf(float x) {
    const float T0 = 0x1.555556p-2f, T1 = 0x1.111106p-3f, T2 = 0x1.ba1fbcp-5f,
                T3 = 0x1.65f7aap-6f, T4 = 0x1.268764p-7f, T5 = 0x1.9c5a50p-9f,
                T6 = 0x1.3c61e4p-9f, T7 = -0x1.37bbccp-11f, T8 = 0x1.f705c0p-11f;
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    if (ax >= CPM_INF_BITS)
        return cpm_from_bits(CPM_NAN_BITS);
    if (ax < 0x39800000u) /* |x| < 2^-12: x is correctly rounded */
        return x;
    float rh, rl;
    uint32_t q = cpm_reduce(ax, &rh, &rl);
    float z = rh * rh;
    float p = (rh * z) *
              (T0 + z * (T1 + z * (T2 + z * (T3 + z * (T4 + z * (T5 + z * (T6 + z * (T7 + z * T8))))))));
    float t0 = rh + p;
    cpm_df t = cpm_df_norm(rh, p);
    t = cpm_df_norm(t.h, t.l + (rl + rl * (t0 * t0)));
    float v;
    if (q & 1u) { /* -1/t: q0 = -1/th, d = 1 + q0 t, result q0 (1 + d) */
        float q0 = -1.0f / t.h, pp, pe;
        cpm_two_prod(q0, t.h, &pp, &pe);
        float d = ((1.0f + pp) + pe) + q0 * t.l;
        v = q0 + q0 * d;
    } else {
        v = t.h + t.l;
    }
    return cpm_from_bits(cpm_bits(v) ^ (ux & 0x80000000u)); /* tan is odd */
}

/* ------------------------------------------------------------------ tanh */

/* tanh |x| = (e - 1)/(e + 1) with e = exp(2|x|) as a double-float (the exp reduction
 * and kernel, scaled by 2^n exactly: 1 <= n <= 28 here, a normal result): e - 1 is exact
 * to the kernel's absolute error (e.h - 1 by Sterbenz for small x), which is of the order
 * of |x|^3 2^-34, so the quotient is good to about 2^-38 relative and rounds once.
 * Below 2^-12, tanh x = x rounds correctly; from 9.5 on, tanh x rounds to 1. Odd. */
CPM_NOINLINE float cpm_tanhf(float x) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    if (ax > CPM_INF_BITS)
        return cpm_from_bits(CPM_NAN_BITS);
    if (ax < 0x39800000u) /* |x| < 2^-12, also +-0 and subnormals */
        return x;
    float v;
    if (ax >= 0x41180000u) { /* |x| >= 9.5, also inf */
        v = 1.0f;
    } else {
        int32_t n;
        cpm_df k = cpm_exp_split(2.0f * cpm_from_bits(ax), 0.0f, &n);
        float s = cpm_from_bits((uint32_t)(n + 127) << 23);
        cpm_df e = cpm_df_norm(k.h * s, k.l * s);
        cpm_df num = cpm_df_add(e, (cpm_df){-1.0f, 0.0f});
        cpm_df den = cpm_df_add(e, (cpm_df){1.0f, 0.0f});
        cpm_df t = cpm_df_div(num, den);
        v = t.h + t.l;
    }
    return cpm_from_bits(cpm_bits(v) | (ux & 0x80000000u));
}

/* ------------------------------------------------------------------ asin / acos */

#define CPM_PIO2_LOF (-0x1.777a5cp-25f) /* pi/2 - CPM_PIO2_HI */
#define CPM_PI_HI 0x1.921fb6p+1f
#define CPM_PI_LO (-0x1.777a5cp-24f)

/* asin x - x = x^3 P(x^2) on [0, 1/2], minimax, relative error < 2^-34. */
CPM_INLINE float cpm_asin_tail(float x, float z) {
    const float P0 = 0x1.555556p-3f, P1 = 0x1.3332aap-4f, P2 = 0x1.6ddac0p-5f,
                P3 = 0x1.ed5d1ep-6f, P4 = 0x1.931f70p-6f, P5 = 0x1.ec2674p-8f,
                P6 = 0x1.1bd246p-5f;
    return (x * z) * (P0 + z * (P1 + z * (P2 + z * (P3 + z * (P4 + z * (P5 + z * P6))))));
}

/* For 1/2 < a <= 1: asin(s + sl) - s as a float where s + sl = sqrt((1 - a)/2) (sl the
 * exact-product correction of the rounded square root); returns s in *sp. */
CPM_INLINE float cpm_asin_half(float a, float *sp) {
    float z = (1.0f - a) * 0.5f; /* exact */
    float s = __builtin_sqrtf(z), p, pe;
    cpm_two_prod(s, s, &p, &pe);
    float sl = s > 0.0f ? ((z - p) - pe) / (s + s) : 0.0f;
    *sp = s;
    /* asin'(s) = 1/sqrt(1 - z) ~ 1 + z/2 on the tiny sl */
    return (sl + sl * (0.5f * z)) + cpm_asin_tail(s, z);
}

CPM_NOINLINE float cpm_asinf(float x) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    if (ax > 0x3f800000u) /* |x| > 1, inf, NaN */
        return cpm_from_bits(CPM_NAN_BITS);
    if (ax < 0x39800000u) /* |x| < 2^-12: x is correctly rounded */
        return x;
    float a = cpm_from_bits(ax), r;
    if (a <= 0.5f) {
        r = a + cpm_asin_tail(a, a * a);
    } else { /* pi/2 - 2 asin(sqrt((1 - a)/2)) */
        float s, lo = cpm_asin_half(a, &s), h, e;
        cpm_two_sum(CPM_PIO2_HI, -2.0f * s, &h, &e);
        r = h + (e + (CPM_PIO2_LOF - 2.0f * lo));
    }
    return cpm_from_bits(cpm_bits(r) | (ux & 0x80000000u));
}

CPM_NOINLINE float cpm_acosf(float x) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    if (ax > 0x3f800000u)
        return cpm_from_bits(CPM_NAN_BITS);
    float a = cpm_from_bits(ax), h, e;
    if (a <= 0.5f) { /* pi/2 - asin x */
        cpm_two_sum(CPM_PIO2_HI, -x, &h, &e);
        return h + (e + (CPM_PIO2_LOF - cpm_asin_tail(x, x * x)));
    }
    float s, lo = cpm_asin_half(a, &s);
    if (!(ux >> 31)) /* 2 asin(sqrt((1 - x)/2)) */
        return 2.0f * (s + lo);
    cpm_two_sum(CPM_PI_HI, -2.0f * s, &h, &e); /* pi - 2 asin(sqrt((1 + x)/2)) */
    return h + (e + (CPM_PI_LO - 2.0f * lo));
}

/* ------------------------------------------------------------------ atan / atan2 */

/* atan(th + tl) for 0 <= th <= 1 as a double-float. [0, 7/16): the polynomial directly;
 * [7/16, 11/16): atan(1/2) + atan((t - 1/2)/(1 + t/2)); [11/16, 1]: pi/4 +
 * atan((t - 1)/(t + 1)); the reduced argument is a double-float quotient.
 * atan u - u = u^3 A(u^2) on |u| <= 7/16, minimax, relative error < 2^-28.9. */
CPM_INLINE cpm_df cpm_atan01(float th, float tl) {
    const float A0 = -0x1.555556p-2f, A1 = 0x1.99998cp-3f, A2 = -0x1.248fc4p-3f,
                A3 = 0x1.c6ae26p-4f, A4 = -0x1.6f4006p-4f, A5 = 0x1.18ccf6p-4f,
                A6 = -0x1.239866p-5f;
    float ch = 0.0f, cl = 0.0f;
    cpm_df u = {th, tl};
    if (th >= 0.4375f) {
        cpm_df n, d;
        if (th < 0.6875f) {
            n = cpm_df_sum(th - 0.5f, tl); /* th - 1/2 is exact */
            d = cpm_df_sum(1.0f, 0.5f * th);
            d.l += 0.5f * tl;
            ch = 0x1.dac670p-2f; /* atan(1/2) */
            cl = 0x1.586ed4p-28f;
        } else {
            n = cpm_df_sum(th - 1.0f, tl);
            d = cpm_df_sum(1.0f, th);
            d.l += tl;
            ch = 0x1.921fb6p-1f; /* pi/4 */
            cl = -0x1.777a5cp-26f;
        }
        u = cpm_df_div(n, d);
    }
    float z = u.h * u.h;
    float tail = (u.h * z) * (A0 + z * (A1 + z * (A2 + z * (A3 + z * (A4 + z * (A5 + z * A6))))));
    cpm_df s = cpm_df_sum(ch, u.h);
    return cpm_df_norm(s.h, s.l + (cl + ((u.l - u.l * z) + tail)));
}

/* (kh + kl) + sgn * r, rounded once */
CPM_INLINE float cpm_atan_finish(float kh, float kl, cpm_df r, uint32_t neg) {
    float rh = neg ? -r.h : r.h, rl = neg ? -r.l : r.l;
    cpm_df s = cpm_df_sum(kh, rh);
    return s.h + (s.l + (kl + rl));
}

CPM_NOINLINE float cpm_atanf(float x) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    if (ax > CPM_INF_BITS)
        return cpm_from_bits(CPM_NAN_BITS);
    if (ax < 0x39800000u) /* |x| < 2^-12: x is correctly rounded */
        return x;
    float a = cpm_from_bits(ax), r;
    if (ax >= 0x4c800000u) { /* |x| >= 2^26: pi/2 - 1/x rounds to pi/2 */
        r = CPM_PIO2_HI;
    } else if (a <= 1.0f) {
        cpm_df t = cpm_atan01(a, 0.0f);
        r = t.h + t.l;
    } else { /* pi/2 - atan(1/a), 1/a as a double-float */
        float th = 1.0f / a, p, pe;
        cpm_two_prod(th, a, &p, &pe);
        float tl = ((1.0f - p) - pe) / a;
        r = cpm_atan_finish(CPM_PIO2_HI, CPM_PIO2_LOF, cpm_atan01(th, tl), 1);
    }
    return cpm_from_bits(cpm_bits(r) | (ux & 0x80000000u));
}

/* v * 2^k for k in [-254, 254], exact unless the result is subnormal */
CPM_INLINE float cpm_ldexp2(float v, int32_t k) {
    int32_t k1 = k / 2;
    return (v * cpm_from_bits((uint32_t)(k1 + 127) << 23)) *
           cpm_from_bits((uint32_t)(k - k1 + 127) << 23);
}

/* C atan2f(y, x) with all C99 special cases (signed zeros, infinities). */
CPM_NOINLINE float cpm_atan2f(float y, float x) {
    uint32_t uy = cpm_bits(y), ux = cpm_bits(x);
    uint32_t ay = uy & 0x7fffffffu, ax = ux & 0x7fffffffu;
    uint32_t sy = uy & 0x80000000u, xneg = ux >> 31;
    if (ax > CPM_INF_BITS || ay > CPM_INF_BITS)
        return cpm_from_bits(CPM_NAN_BITS);
    /* the constant results are picked by bit masks: a ternary on float constants
     * becomes a table indexed with an absolute address on x86_64 */
    uint32_t xm = 0u - xneg;
    float r;
    if (ay == 0) /* atan2(+-0, x) = +-0 for x >= +0, +-pi for x <= -0 */
        r = cpm_from_bits(0x40490fdbu & xm); /* pi or +0 */
    else if (ax == 0 || (ay == CPM_INF_BITS && ax != CPM_INF_BITS))
        r = CPM_PIO2_HI;
    else if (ax == CPM_INF_BITS && ay == CPM_INF_BITS) /* 3 pi/4 or pi/4 */
        r = cpm_from_bits((0x4016cbe4u & xm) | (0x3f490fdbu & ~xm));
    else if (ax == CPM_INF_BITS)
        r = cpm_from_bits(0x40490fdbu & xm);
    else {
        /* both finite and nonzero: t = min/max of the magnitudes, scaled exactly so
         * that the larger is in [2^32, 2^33) (the smaller stays normal unless
         * t < 2^-158, where the result underflows anyway) */
        uint32_t swap = ay > ax;
        uint32_t big = swap ? ay : ax, small = swap ? ax : ay;
        float fb = cpm_from_bits(big), fs = cpm_from_bits(small);
        if (big < 0x00800000u) { /* both subnormal */
            fb *= 0x1p64f;
            fs *= 0x1p64f;
            big = cpm_bits(fb);
        }
        int32_t k = 159 - (int32_t)(big >> 23);
        fb = cpm_ldexp2(fb, k);
        fs = cpm_ldexp2(fs, k);
        float th = fs / fb, p, pe;
        cpm_two_prod(th, fb, &p, &pe);
        /* below 2^-100 the residual underflows; atan t = t there and t = fs/fb is
         * correctly rounded on its own */
        float tl = th >= 0x1p-100f ? ((fs - p) - pe) / fb : 0.0f;
        cpm_df a = cpm_atan01(th, tl);
        /* x > 0: a or pi/2 - a; x < 0: pi - a or pi/2 + a */
        if (swap)
            r = cpm_atan_finish(CPM_PIO2_HI, CPM_PIO2_LOF, a, !xneg);
        else if (xneg)
            r = cpm_atan_finish(CPM_PI_HI, CPM_PI_LO, a, 1);
        else
            r = a.h + a.l;
    }
    return cpm_from_bits(cpm_bits(r) | sy);
}

/* ---------------------------------------------------------------- integer division */

#if CPM_NO_HW_DIVIDE
CPM_NOINLINE int32_t cpm_div_s32(int32_t x, int32_t d) {
    uint32_t negative = (uint32_t)((x ^ d) < 0);
    uint32_t ux = x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
    uint32_t ud = d < 0 ? 0u - (uint32_t)d : (uint32_t)d;
    uint32_t q = 0, r = 0;
    for (int k = 31; k >= 0; k--) {
        r = (r << 1) | ((ux >> k) & 1u);
        uint32_t take = 0u - (uint32_t)(r >= ud); /* all ones when ud fits */
        r -= ud & take;
        q |= (take & 1u) << k;
    }
    return (int32_t)(negative ? 0u - q : q);
}
#endif
