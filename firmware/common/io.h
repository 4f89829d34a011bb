/* The reference firmware's imports (io.c): the table copapy_load_with_imports gets. */
#ifndef IO_H
#define IO_H

#include "copapy_runner.h"

#define IO_IMPORT_COUNT 3
extern const struct copapy_import io_imports[IO_IMPORT_COUNT];

/* Puts the actuator value and the simulated plant back to 0 (after each load, so a
 * program starts from the same plant every time). */
void io_reset(void);

#endif /* IO_H */
