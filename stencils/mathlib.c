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
    for (int k = 0; k < 24; k++) {
        rem <<= 1;
        inv <<= 1;
        uint32_t ge = rem >= my;
        rem -= ge ? my : 0u;
        inv |= ge;
    }

    /* t = 2^d mod my */
    uint32_t t = 1;
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
    uint32_t q;
    if (ax <= 0x3f490fdbu) { /* |x| <= pi/4 */
        rh = cpm_from_bits(ax);
        rl = 0.0f;
        q = 0;
    } else {
        q = cpm_rem_pio2(ax, &rh, &rl);
    }
    q += cosine;
    float v = (q & 1u) ? cpm_cos_kernel(rh, rl) : cpm_sin_kernel(rh, rl);
    /* sign: quadrants 2 and 3 negate; sin is odd, cos even */
    uint32_t neg = ((q >> 1) ^ (cosine ? 0u : (ux >> 31))) & 1u;
    return cpm_from_bits(cpm_bits(v) ^ (neg << 31));
}

CPM_NOINLINE float cpm_sinf(float x) { return cpm_sincos(x, 0); }

CPM_NOINLINE float cpm_cosf(float x) { return cpm_sincos(x, 1); }
