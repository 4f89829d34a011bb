/* The board-independent part of the reference firmware: load each program of a job
 * list with copapy_load, run it, and print every variable's bits over the console.
 *
 * Job list (little-endian, placed in RAM by the test: QEMU -device loader):
 *   u32 magic "CPJL", u32 job count, then per job
 *   u32 file_len, u32 steps, u32 cpu_features (0xFFFFFFFF: the library's own),
 *   u32 flags (bit 0: load with copapy_load_prelinked, which takes pre-linked images only),
 *   file_len bytes of program file, zero padding to a multiple of 4.
 *
 * Output, one line each:
 *   copapy BOARD features HEX
 *   job N load CODE MESSAGE             (CODE 0: loaded; negative: refused, nothing ran)
 *   job N needs HEX has HEX             (after COPAPY_E_FEATURES)
 *   NAME TYPE HEX[,HEX...]              (per variable after the steps; TYPE f i b u:
 *                                        float32, int32, bool, byte; 8 or 2 hex digits)
 *   done
 *
 * Without a job list at __copapy_jobs the firmware serves the serial link instead
 * (link.c): programs then come from Python over the UART.
 */
#include "board.h"
#include "copapy_runner.h"
#include "link.h"
#include "memory.h"

#define JOB_MAGIC 0x4C4A5043u /* "CPJL" */
#define KEEP_FEATURES 0xFFFFFFFFu
#define JOB_HEADER 16u

static void put(const char *s) {
    while (*s) board_putc(*s++);
}

static void put_n(const char *s, uint32_t n) {
    while (n--) board_putc(*s++);
}

static void put_hex(uint32_t v, int digits) {
    for (int i = digits - 1; i >= 0; i--) board_putc("0123456789abcdef"[(v >> (4 * i)) & 0xF]);
}

static void put_dec(int32_t v) {
    char buf[12];
    put_n(buf, runner_format_dec(buf, v));
}

static uint32_t read32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void print_variables(const struct copapy_program *p) {
    for (uint32_t var = 0; var < p->symbol_count; var++) {
        const char *name;
        uint32_t name_len, offset;
        uint8_t dtype;
        int32_t n = copapy_symbol_at(p, var, 0, &offset, &dtype, &name, &name_len);
        if (n < 0) {
            put("variable error ");
            put(copapy_error_message(n));
            put("\n");
            continue;
        }
        put_n(name, name_len);
        board_putc(' ');
        board_putc("fibu"[dtype & 3]);
        board_putc(' ');
        for (int32_t i = 0; i < n; i++) {
            copapy_symbol_at(p, var, (uint32_t)i, &offset, &dtype, NULL, NULL);
            if (i) board_putc(',');
            if (dtype == 3) {
                put_hex(p->data[offset], 2);
            } else {
                put_hex(read32(p->data + offset), 8);
            }
        }
        board_putc('\n');
    }
}

static void run_job(uint32_t number, const uint8_t *job, uint32_t default_features) {
    uint32_t file_len = read32(job), steps = read32(job + 4), features = read32(job + 8);
    uint32_t prelinked_only = read32(job + 12) & 1u;
    const uint8_t *file = job + JOB_HEADER;
    copapy_set_cpu_features(features == KEEP_FEATURES ? default_features : features);
    struct copapy_program p;
    int32_t r = prelinked_only
        ? copapy_load_prelinked(file, file_len, runner_code, RUNNER_CODE_CAP, runner_data, RUNNER_DATA_CAP,
                                NULL, 0, &p, NULL, NULL)
        : copapy_load(file, file_len, runner_code, RUNNER_CODE_CAP, runner_data, RUNNER_DATA_CAP, &p);
    put("job ");
    put_dec((int32_t)number);
    put(" load ");
    put_dec(r);
    board_putc(' ');
    put(copapy_error_message(r));
    board_putc('\n');
    if (r == COPAPY_E_FEATURES) {
        put("job ");
        put_dec((int32_t)number);
        put(" needs ");
        put_hex(runner_header_number(file, 0), 8); /* the header's feature bits */
        put(" has ");
        put_hex(copapy_cpu_features(), 8);
        board_putc('\n');
    }
    if (r < 0) return;
    board_code_written(runner_code, runner_header_number(file, 1)); /* the code size */
    for (uint32_t s = 0; s < steps; s++) {
        r = copapy_run(&p);
        if (r < 0) {
            put("run error ");
            put(copapy_error_message(r));
            board_putc('\n');
            return;
        }
    }
    print_variables(&p);
}

void runner_main(void) {
    uint32_t default_features = copapy_cpu_features();
    const uint8_t *at = __copapy_jobs;
    if (read32(at) != JOB_MAGIC) link_main(); /* no job list: serve the serial link */
    put("copapy ");
    put(board_name);
    put(" features ");
    put_hex(default_features, 8);
    board_putc('\n');
    uint32_t count = read32(at + 4);
    at += 8;
    for (uint32_t i = 0; i < count; i++) {
        run_job(i, at, default_features);
        at += JOB_HEADER + ((read32(at) + 3u) & ~3u);
    }
    copapy_set_cpu_features(default_features);
    put("done\n");
    board_exit(0);
}
