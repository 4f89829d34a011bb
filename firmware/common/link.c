/* The serial link: the runner's frame protocol (docs/copapy-run.md) over the board's UART,
 * so that Python drives the board with cp.Target(runner="serial:...") as it drives a
 * copapy-run over TCP. docs/firmware.md, "The serial link", has the wire format.
 *
 * A UART has no message boundaries and loses or flips bytes, so each message travels as
 *   COBS( seq:u8 | kind:u8 | payload | crc32(seq | kind | payload):u32 LE ) 0x00
 * COBS leaves no 0x00 inside a frame: a 0x00 always ends one, so after noise the next
 * 0x00 resynchronises the stream. A frame is acted on only when it is whole and its
 * CRC-32 matches; a corrupted one gets an ERR with seq 0 and changes nothing. Requests
 * are received into the buffer that does not hold the loaded program file, so a LOAD
 * that fails (on the wire or in copapy_load) leaves the running program as it was. */
#include "board.h"
#include "copapy_runner.h"
#include "io.h"
#include "link.h"
#include "memory.h"

/* request and reply kinds: the TCP protocol's (crates/copapy-run/src/protocol.rs) */
enum {
    K_LOAD = 0x01,
    K_WRITE = 0x02,
    K_READ = 0x03,
    K_RUN = 0x04,
    K_INFO = 0x08,
    K_STOP = 0x0A,
    K_PERIODIC = 0x0C,
    K_OK = 0x80,
    K_ERR = 0xEE
};

#define FILE_CAP (64u * 1024u) /* the largest program file it takes */
#define FRAME_CAP (FILE_CAP + 16u) /* seq, kind, a request's fixed fields, CRC */
#define SEQ_REJECTED 0u            /* the seq of the reply to a frame that was not intact */

/* Two receive buffers: requests land in the one that does not hold the loaded file
 * (copapy_symbol reads its symbol table there). */
static uint8_t frames[2][FRAME_CAP] __attribute__((aligned(4)));
static uint8_t reply_buf[FRAME_CAP] __attribute__((aligned(4)));
static struct copapy_program prog;
static int loaded;
static unsigned program_frame; /* which of `frames` holds the loaded file */

static uint32_t crc32(const uint8_t *p, uint32_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* COBS-encodes reply_buf[0..n) onto the UART, then the 0x00 that ends the frame. */
static void send_encoded(uint32_t n) {
    uint32_t start = 0;
    for (;;) {
        uint32_t run = 0; /* non-zero bytes in this block, at most 254 */
        while (start + run < n && reply_buf[start + run] != 0 && run < 254) run++;
        board_link_put((uint8_t)(run + 1));
        for (uint32_t i = 0; i < run; i++) board_link_put(reply_buf[start + i]);
        start += run;
        if (start == n) break;
        if (run < 254) start++; /* the 0x00 this block's code stands for */
    }
    board_link_put(0);
}

/* Replies with `kind` and the `len` payload bytes already at reply_buf + 2. */
static void send(uint8_t seq, uint8_t kind, uint32_t len) {
    reply_buf[0] = seq;
    reply_buf[1] = kind;
    put32(reply_buf + 2 + len, crc32(reply_buf, 2 + len));
    send_encoded(2 + len + 4);
}

static uint32_t append(uint32_t at, const char *s) {
    while (*s && at < FRAME_CAP - 8) reply_buf[2 + at++] = (uint8_t)*s++;
    return at;
}

static uint32_t append_dec(uint32_t at, int32_t v) {
    char buf[12];
    uint32_t len = runner_format_dec(buf, v);
    for (uint32_t i = 0; i < len; i++) reply_buf[2 + at++] = (uint8_t)buf[i];
    return at;
}

static void send_error(uint8_t seq, const char *what) {
    send(seq, K_ERR, append(0, what));
}

/* "DURING error CODE: MESSAGE" for a copapy library error; the client maps CODE too. */
static uint32_t append_library_error(uint32_t at, const char *during, int32_t code) {
    at = append(at, during);
    at = append(at, " error ");
    at = append_dec(at, code);
    at = append(at, ": ");
    return append(at, copapy_error_message(code));
}

static void load(uint8_t seq, unsigned frame, const uint8_t *file, uint32_t len) {
    struct copapy_program p;
    const char *import = 0;
    uint32_t import_len = 0;
    int32_t r = copapy_load_with_imports(file, len, runner_code, RUNNER_CODE_CAP, runner_data,
                                         RUNNER_DATA_CAP, io_imports, IO_IMPORT_COUNT, &p, &import,
                                         &import_len);
    if (r < 0) {
        uint32_t at = append_library_error(0, "load", r);
        if (import) { /* which import is missing or has another signature */
            at = append(at, ": ");
            while (import_len-- && at < FRAME_CAP - 8) reply_buf[2 + at++] = (uint8_t)*import++;
        }
        send(seq, K_ERR, at);
        return;
    }
    io_reset();
    board_code_written(runner_code, runner_header_number(file, 1)); /* the code size */
    prog = p;
    loaded = 1;
    program_frame = frame;
    send(seq, K_OK, 0);
}

/* Runs `steps` steps, one every `period` timer ticks with absolute deadlines (the first
 * one period from now), as copapy-run --period does; replies with the steps run, the
 * overruns (steps that ended after the next deadline), the deadlines skipped for them,
 * and the largest and mean lateness of a wake-up after its deadline in ns. */
static void run_periodic(uint8_t seq, uint32_t steps, uint32_t period_us) {
    uint32_t period = period_us * board_ticks_per_us;
    if (period_us == 0 || period / board_ticks_per_us != period_us) {
        send_error(seq, "period must be 1 us to 2^32 timer ticks");
        return;
    }
    uint32_t overruns = 0, skipped = 0, late_max = 0, late_sum = 0;
    uint64_t deadline = board_ticks() + period;
    for (uint32_t k = 0; k < steps; k++) {
        uint64_t woke;
        while ((woke = board_ticks()) < deadline) {
        }
        copapy_run(&prog);
        uint64_t done = board_ticks();
        uint32_t late = (uint32_t)(woke - deadline);
        if (late > late_max) late_max = late;
        late_sum = late_sum + late < late_sum ? 0xFFFFFFFFu : late_sum + late;
        deadline += period;
        if (done > deadline) {
            uint32_t missed = (uint32_t)(done - deadline) / period + 1;
            overruns++;
            skipped += missed;
            deadline += (uint64_t)missed * period;
        }
    }
    uint32_t ns = board_ns_per_tick, mean = steps ? late_sum / steps : 0;
    put32(reply_buf + 2, steps);
    put32(reply_buf + 6, overruns);
    put32(reply_buf + 10, skipped);
    put32(reply_buf + 14, late_max > 0xFFFFFFFFu / ns ? 0xFFFFFFFFu : late_max * ns);
    put32(reply_buf + 18, mean > 0xFFFFFFFFu / ns ? 0xFFFFFFFFu : mean * ns);
    send(seq, K_OK, 20);
}

/* Acts on one intact request: frames[frame][0..len), CRC already stripped. */
static void handle(unsigned frame, uint32_t len) {
    const uint8_t *f = frames[frame];
    uint8_t seq = f[0], kind = f[1];
    const uint8_t *pl = f + 2;
    uint32_t n = len - 2;
    if (kind == K_INFO || kind == K_STOP) {
        send(seq, K_OK, kind == K_INFO ? append(0, board_target) : 0);
        return;
    }
    if (kind == K_LOAD) {
        load(seq, frame, pl, n);
        return;
    }
    if (kind != K_WRITE && kind != K_READ && kind != K_RUN && kind != K_PERIODIC) {
        send_error(seq, "unknown request kind: this firmware serves LOAD, WRITE, READ, RUN, "
                        "PERIODIC, INFO and STOP");
        return;
    }
    if (!loaded) {
        send_error(seq, "no program loaded: send LOAD first");
        return;
    }
    uint32_t fixed = kind == K_WRITE || kind == K_RUN ? 4u : 8u;
    if (n < fixed || (kind != K_WRITE && n != fixed)) {
        send_error(seq, "malformed request: wrong payload length");
        return;
    }
    uint32_t a = get32(pl), b = kind == K_WRITE ? n - 4 : get32(pl + 4);
    if (kind == K_RUN) {
        for (uint32_t s = 0; s < a; s++) copapy_run(&prog);
        send(seq, K_OK, 0);
        return;
    }
    if (kind == K_PERIODIC) {
        run_periodic(seq, a, b);
        return;
    }
    if (a > prog.data_len || b > prog.data_len - a) {
        send_error(seq, "data range outside the program's data memory");
        return;
    }
    uint8_t *mem = prog.data + a;
    if (kind == K_WRITE) {
        for (uint32_t i = 0; i < b; i++) mem[i] = pl[4 + i];
        send(seq, K_OK, 0);
    } else {
        for (uint32_t i = 0; i < b; i++) reply_buf[2 + i] = mem[i];
        send(seq, K_OK, b);
    }
}

void link_main(void) {
    for (;;) {
        unsigned frame = loaded ? 1u - program_frame : 0u;
        uint8_t *buf = frames[frame];
        uint32_t len = 0, block_left = 0;
        int zero_due = 0, broken = 0;
        uint8_t c;
        /* COBS decode until the 0x00 that ends the frame */
        while ((c = board_link_get()) != 0) {
            if (block_left == 0) {
                if (zero_due) {
                    if (len < FRAME_CAP) buf[len] = 0;
                    len++;
                }
                zero_due = c != 0xFF;
                block_left = c - 1u;
                continue;
            }
            if (len < FRAME_CAP) buf[len] = c;
            len++;
            block_left--;
        }
        if (len == 0 && block_left == 0 && !zero_due) continue; /* empty frame: a resync */
        broken = block_left != 0 || len > FRAME_CAP || len < 6;
        if (!broken && crc32(buf, len - 4) != get32(buf + len - 4)) broken = 1;
        if (broken) {
            send_error(SEQ_REJECTED, len > FRAME_CAP ? "frame rejected: larger than the firmware's buffer"
                                                     : "frame rejected: CRC mismatch or cut short");
            continue;
        }
        handle(frame, len - 4);
    }
}
