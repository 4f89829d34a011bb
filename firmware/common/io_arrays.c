/* Imports with array arguments (cp.extern with cp.array / cp.vector; docs/firmware.md,
 * "Adding your own I/O functions"): a loopback of eight converter channels in RAM.
 *
 *   dac_write(values, n)     "v(F)"  latches channels 0..min(n, 8)-1: value * 1000 in
 *                                    millivolts, truncated toward zero and limited to
 *                                    -1000000..1000000 (NaN counts as -1000000)
 *   adc_scan(samples, n)     "i(F)"  fills samples[k] (k < n): the latched channel k in
 *                                    volts (mV / 1000) plus what samples[k] held (an offset
 *                                    the program passes in); 0 plus it beyond channel 7;
 *                                    returns the number of channels read, min(n, 8)
 *   counter_scan(counts, n)  "v(I)"  adds k + 1 to counts[k], wrapping at 2^32
 *
 * Each is a single float32 operation per step (or integer arithmetic), so the same program
 * with Python imports computing the same gives the same bits on the host
 * (tests/deploy/test_extern_arrays.py). The channels keep their values between runs and
 * loads: a program that reads them writes them first. */
#include "io_arrays.h"

#define DAC_LIMIT 1000000

static int32_t dac_mv[IO_DAC_CHANNELS];

void dac_write(const float *values, int32_t n) {
    for (int32_t k = 0; k < n && k < IO_DAC_CHANNELS; k++) {
        float scaled = values[k] * 1000.0f;
        dac_mv[k] = !(scaled > -(float)DAC_LIMIT) ? -DAC_LIMIT
                    : scaled >= (float)DAC_LIMIT   ? DAC_LIMIT
                                                   : (int32_t)scaled;
    }
}

int32_t adc_scan(float *samples, int32_t n) {
    for (int32_t k = 0; k < n; k++) {
        float volts = k < IO_DAC_CHANNELS ? (float)dac_mv[k] / 1000.0f : 0.0f;
        samples[k] = volts + samples[k];
    }
    return n < IO_DAC_CHANNELS ? n : IO_DAC_CHANNELS;
}

void counter_scan(int32_t *counts, int32_t n) {
    for (int32_t k = 0; k < n; k++) counts[k] = (int32_t)((uint32_t)counts[k] + (uint32_t)k + 1u);
}
