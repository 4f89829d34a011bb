/* A host test of the C ABI, as firmware would use it: load a program file into
 * caller-owned buffers, run it, read and write variables by name.
 *
 *   run_program FILE STEPS [NAME=V1,V2,... ...] -- NAME ...
 *
 * Sets the first elements of each NAME before the first step, runs STEPS steps, then prints
 * "NAME=V1,V2,..." for each NAME after "--" (floats with %.9g). On a load error it
 * prints "error CODE MESSAGE" and exits 1.
 *
 * The host needs the code executable: both buffers live in one mapping (x86_64
 * relative addressing wants them close), written while read+write and switched to
 * read+execute before the first run, never both.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "copapy_runner.h"

#define CODE_CAP (1u << 20)
#define DATA_CAP (1u << 16)

static uint8_t file_buf[1u << 22];

static void print_var(const struct copapy_program *p, const char *name) {
    uint32_t offset;
    uint8_t dtype;
    int32_t n = copapy_symbol(p, name, 0, &offset, &dtype);
    if (n < 0) {
        printf("%s=error %d %s\n", name, n, copapy_error_message(n));
        return;
    }
    printf("%s=", name);
    for (int32_t i = 0; i < n; i++) {
        copapy_symbol(p, name, (uint32_t)i, &offset, &dtype);
        const uint8_t *slot = p->data + offset;
        if (dtype == 0) {
            float f;
            memcpy(&f, slot, 4);
            printf("%s%.9g", i ? "," : "", (double)f);
        } else if (dtype == 3) { /* a byte element: one byte, not a 4-byte slot */
            printf("%s%u", i ? "," : "", (unsigned)slot[0]);
        } else {
            int32_t v;
            memcpy(&v, slot, 4);
            printf("%s%d", i ? "," : "", v);
        }
    }
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: run_program FILE STEPS [NAME=VALUE ...] -- NAME ...\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    size_t len = fread(file_buf, 1, sizeof file_buf, f);
    fclose(f);
    long steps = atol(argv[2]);

    uint8_t *region = mmap(NULL, CODE_CAP + DATA_CAP, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    struct copapy_program p;
    int32_t r = copapy_load(file_buf, len, region, CODE_CAP, region + CODE_CAP, DATA_CAP, &p);
    if (r < 0) {
        printf("error %d %s\n", r, copapy_error_message(r));
        return 1;
    }
    if (mprotect(region, CODE_CAP, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        return 2;
    }
    int i = 3;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) continue;
        *eq = 0;
        uint32_t offset;
        uint8_t dtype;
        char *text = eq + 1;
        for (uint32_t k = 0; *text; k++) {
            int32_t n = copapy_symbol(&p, argv[i], k, &offset, &dtype);
            if (n < 0) {
                printf("error %d %s\n", n, copapy_error_message(n));
                return 1;
            }
            char *end;
            if (dtype == 0) {
                float v = strtof(text, &end);
                memcpy(p.data + offset, &v, 4);
            } else {
                long v = strtol(text, &end, 10);
                if (dtype == 3 && (v < 0 || v > 255)) {
                    printf("error byte %ld of %s is outside 0..255\n", v, argv[i]);
                    return 1;
                }
                if (dtype == 3) {
                    p.data[offset] = (uint8_t)v;
                } else {
                    int32_t w = (int32_t)v;
                    memcpy(p.data + offset, &w, 4);
                }
            }
            text = *end == ',' ? end + 1 : end + strlen(end);
        }
    }
    for (long k = 0; k < steps; k++) {
        r = copapy_run(&p);
        if (r < 0) {
            printf("error %d %s\n", r, copapy_error_message(r));
            return 1;
        }
    }
    for (i++; i < argc; i++) print_var(&p, argv[i]);
    return 0;
}
