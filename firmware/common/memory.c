/* The program buffers and the number formatting shared by runner.c and link.c. */
#include "memory.h"

/* memory.h has their sizes; each board's link.ld puts both sections at fixed addresses
 * (what pre-linked images are saved for) */
uint8_t runner_code[RUNNER_CODE_CAP] __attribute__((aligned(64), section(".code_ram")));
uint8_t runner_data[RUNNER_DATA_CAP] __attribute__((aligned(64), section(".program_data")));

uint32_t runner_format_dec(char out[12], int32_t v) {
    char digits[10];
    uint32_t n = 0, len = 0;
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) out[len++] = '-';
    while (n) out[len++] = digits[--n];
    return len;
}
