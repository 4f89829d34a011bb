/* The four workloads of benches/workloads.py written by hand in C (float32, the same
 * loops and operation order), for benches/bench_workloads.py: gcc -O2, called through
 * ctypes. Each `loop_*` runs its step `n` times on the same arguments (the step is not
 * inlined, so each iteration is one full call) and returns one result to keep it live. */
#include <math.h>

#define DT 0.01f

static const float KF_F[16] = {1, 0, DT, 0, 0, 1, 0, DT, 0, 0, 1, 0, 0, 0, 0, 1};
static const float KF_H[8] = {1, 0, 0, 0, 0, 1, 0, 0};
static const float KF_Q[16] = {1e-4f, 0, 0, 0, 0, 1e-4f, 0, 0, 0, 0, 1e-2f, 0, 0, 0, 0, 1e-2f};
static const float KF_R[4] = {0.05f, 0, 0, 0.05f};

__attribute__((noinline)) void pid(const float *state, const float *meas, float *out) {
    const float kp = 2.0f, ki = 0.5f, kd = 0.1f, dt = DT, umax = 10.0f;
    float integral = state[0], previous = state[1];
    float e = meas[0] - meas[1];
    float grown = integral + e * dt;
    float u_raw = kp * e + ki * grown + kd * (e - previous) / dt;
    float u = fminf(fmaxf(u_raw, -umax), umax);
    out[0] = u;
    out[1] = u_raw == u ? grown : integral;
    out[2] = e;
}

/* n x k times k x m (b given as m x k when bt), row-major, left to right sums */
static inline void matmul(const float *a, const float *b, int n, int k, int m, int bt, float *out) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            float s = a[i * k] * (bt ? b[j * k] : b[j]);
            for (int q = 1; q < k; q++) s = s + a[i * k + q] * (bt ? b[j * k + q] : b[q * m + j]);
            out[i * m + j] = s;
        }
}

__attribute__((noinline)) void kalman(const float *x, const float *p, const float *z, float *out) {
    float xp[4], fp[16], pp[16], hp[8], s[4], inv[4], pht[8], gain[8], hx[2], inn[2], corr[4], khp[16];
    matmul(KF_F, x, 4, 4, 1, 0, xp);
    matmul(KF_F, p, 4, 4, 4, 0, fp);
    matmul(fp, KF_F, 4, 4, 4, 1, pp);
    for (int i = 0; i < 16; i++) pp[i] = pp[i] + KF_Q[i];
    matmul(KF_H, pp, 2, 4, 4, 0, hp);
    matmul(hp, KF_H, 2, 4, 2, 1, s);
    for (int i = 0; i < 4; i++) s[i] = s[i] + KF_R[i];
    float det = s[0] * s[3] - s[1] * s[2];
    inv[0] = s[3] / det; inv[1] = -s[1] / det; inv[2] = -s[2] / det; inv[3] = s[0] / det;
    matmul(pp, KF_H, 4, 4, 2, 1, pht);
    matmul(pht, inv, 4, 2, 2, 0, gain);
    matmul(KF_H, xp, 2, 4, 1, 0, hx);
    inn[0] = z[0] - hx[0]; inn[1] = z[1] - hx[1];
    matmul(gain, inn, 4, 2, 1, 0, corr);
    for (int i = 0; i < 4; i++) out[i] = xp[i] + corr[i];
    matmul(gain, hp, 4, 2, 4, 0, khp);
    for (int i = 0; i < 16; i++) out[4 + i] = pp[i] - khp[i];
}

__attribute__((noinline)) void ik(const float *theta, const float *target, float *out) {
    const float l1 = 1.8f, l2 = 2.0f, alpha = 0.1f;
    float t1 = theta[0], t2 = theta[1], err = 0.0f;
    for (int step = 0; step < 48; step++) {
        float c1 = cosf(t1), s1 = sinf(t1), c12 = cosf(t1 + t2), s12 = sinf(t1 + t2);
        float ex = target[0] - (l1 * c1 + l2 * c12);
        float ey = target[1] - (l1 * s1 + l2 * s12);
        err = ex * ex + ey * ey;
        float g2 = 2.0f * ex * (l2 * s12) - 2.0f * ey * (l2 * c12);
        float g1 = 2.0f * ex * (l1 * s1 + l2 * s12) - 2.0f * ey * (l1 * c1 + l2 * c12);
        t1 = t1 - alpha * g1;
        t2 = t2 - alpha * g2;
    }
    out[0] = t1; out[1] = t2; out[2] = err;
}

static inline void layer(const float *w, const float *b, const float *x, int n_in, int n_out, int squash, float *out) {
    for (int i = 0; i < n_out; i++) {
        float s = b[i];
        for (int k = 0; k < n_in; k++) s = s + w[i * n_in + k] * x[k];
        out[i] = squash ? tanhf(s) : s;
    }
}

/* the weights come from Python (workloads.MLP_WEIGHTS) through set_mlp_weights */
static float W1[32 * 16], B1[32], W2[32 * 32], B2[32], W3[4 * 32], B3[4];

void set_mlp_weights(const float *w1, const float *b1, const float *w2, const float *b2,
                     const float *w3, const float *b3) {
    for (int i = 0; i < 32 * 16; i++) W1[i] = w1[i];
    for (int i = 0; i < 32; i++) B1[i] = b1[i];
    for (int i = 0; i < 32 * 32; i++) W2[i] = w2[i];
    for (int i = 0; i < 32; i++) B2[i] = b2[i];
    for (int i = 0; i < 4 * 32; i++) W3[i] = w3[i];
    for (int i = 0; i < 4; i++) B3[i] = b3[i];
}

__attribute__((noinline)) void mlp(const float *x, float *out) {
    float h1[32], h2[32];
    layer(W1, B1, x, 16, 32, 1, h1);
    layer(W2, B2, h1, 32, 32, 1, h2);
    layer(W3, B3, h2, 32, 4, 0, out);
}

float loop_pid(const float *a, const float *b, float *out, int n) {
    for (int i = 0; i < n; i++) pid(a, b, out);
    return out[0];
}
float loop_kalman(const float *a, const float *b, const float *c, float *out, int n) {
    for (int i = 0; i < n; i++) kalman(a, b, c, out);
    return out[0];
}
float loop_ik(const float *a, const float *b, float *out, int n) {
    for (int i = 0; i < n; i++) ik(a, b, out);
    return out[0];
}
float loop_mlp(const float *a, float *out, int n) {
    for (int i = 0; i < n; i++) mlp(a, out);
    return out[0];
}
