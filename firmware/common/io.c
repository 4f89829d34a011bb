/* The functions the reference firmware offers programs as imports (cp.extern in Python;
 * docs/firmware.md, "Adding your own I/O functions"), on the board's real peripherals:
 *
 *   pwm_write(duty)     "v(f)"  the actuator: duty * 1000, truncated and limited to
 *                               0..1000000, written to the board's actuator UART as 4
 *                               bytes little-endian (board_actuator_write), and kept as
 *                               the simulated plant's input
 *   adc_read(channel)   "f(i)"  the sensor: channel 0 steps a simulated plant driven by
 *                               the last value written, a first-order lag in integer
 *                               millivolts (y += (u - y) / 8, truncated), returning
 *                               y / 1000; other channels read 0
 *   timer_ticks()       "i()"   the board timer's count (low 32 bits): a free-running
 *                               counter register
 *
 * The plant is integer arithmetic and the conversions are single float32 operations, so
 * the same loop on the host with Python imports doing the same computes the same bits
 * (tests/deploy/test_serial_link.py reads the actuator's bytes where QEMU writes them). */
#include "board.h"
#include "io.h"

#define DUTY_LIMIT 1000000u

static int32_t plant_mv;
static uint32_t actuator; /* the last value written: what drives the plant */

static void pwm_write(float duty) {
    float scaled = duty * 1000.0f;
    actuator = !(scaled > 0.0f) ? 0u : scaled >= (float)DUTY_LIMIT ? DUTY_LIMIT : (uint32_t)scaled;
    board_actuator_write(actuator);
}

static float adc_read(int32_t channel) {
    if (channel != 0) return 0.0f;
    int32_t u = (int32_t)actuator;
    plant_mv += (u - plant_mv) / 8;
    return (float)plant_mv / 1000.0f;
}

static int32_t timer_ticks(void) {
    return (int32_t)(uint32_t)board_ticks();
}

const struct copapy_import io_imports[IO_IMPORT_COUNT] = {
    {"pwm_write", (void *)pwm_write, "v(f)"},
    {"adc_read", (void *)adc_read, "f(i)"},
    {"timer_ticks", (void *)timer_ticks, "i()"},
};

void io_reset(void) {
    plant_mv = 0;
    actuator = 0; /* nothing goes out: the actuator's bytes are the program's writes only */
}
