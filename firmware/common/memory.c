/* The program buffers, the number formatting and the header reading shared by runner.c and
 * link.c. */
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

uint32_t runner_header_number(const uint8_t *file, uint32_t index) {
    const uint8_t *at = file + 12; /* version 10: 12 fixed bytes */
    for (;; index--) {
        uint32_t value = 0, shift = 0;
        uint8_t byte;
        do {
            byte = *at++;
            if (shift < 32) value |= (uint32_t)(byte & 0x7f) << shift;
            shift += 7;
        } while (byte & 0x80);
        if (index == 0) return value;
    }
}
