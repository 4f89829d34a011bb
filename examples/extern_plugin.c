/* A copapy-run plugin: the plant of extern_closed_loop.py in C, serving the imports
 * adc_read and pwm_write of that example's program (docs/copapy-run.md, "--plugin"). The
 * arithmetic is the Python plant's, in double, so the duties copapy-run prints are the
 * example's to the bit (tests/api/test_examples.py checks it; -ffp-contract=off keeps
 * gcc from fusing the multiply and add where the CPU has FMA).
 *
 *   gcc -O2 -ffp-contract=off -shared -fPIC -o libplant.so examples/extern_plugin.c
 *   python examples/extern_closed_loop.py --save loop.cpy
 *   copapy-run loop.cpy --plugin ./libplant.so -n 100 --print duty
 */
#include <stdint.h>

struct copapy_import { const char *name; void *fn; const char *signature; };

static double y;

static float adc_read(int32_t channel) { return channel == 0 ? (float)y : 0.0f; }

static void pwm_write(float duty) { y += 0.05 * ((double)duty - y) / 0.5; }

static const struct copapy_import table[] = {
    {"adc_read", (void *)adc_read, "f(i)"},
    {"pwm_write", (void *)pwm_write, "v(f)"},
};

const struct copapy_import *copapy_imports(uint32_t *count) {
    *count = sizeof table / sizeof table[0];
    return table;
}
