/* The reference firmware's imports with array arguments (io_arrays.c), rows of io.c's
 * table: a buffer is a pointer and an int32 element count (signature codes F / I). */
#ifndef IO_ARRAYS_H
#define IO_ARRAYS_H

#include <stdint.h>

#define IO_DAC_CHANNELS 8

void dac_write(const float *values, int32_t n);
int32_t adc_scan(float *samples, int32_t n);
void counter_scan(int32_t *counts, int32_t n);

#endif /* IO_ARRAYS_H */
