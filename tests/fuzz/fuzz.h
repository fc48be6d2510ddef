/* fuzz.h: what the harnesses of tests/fuzz/ share.
 *
 * Each fuzz-NAME.c defines LLVMFuzzerTestOneInput(): libFuzzer calls it with
 * generated inputs (fuzz-NAME, make fuzz), replay.c with the files of a
 * corpus (replay-NAME, make check).  A harness checks what its parser
 * promises, not only that it returns: FUZZ_CHECK() names the broken promise
 * and aborts, which both drivers report as a finding.
 *
 * Harnesses whose parser reads files write the input under fuzz_dir(), one
 * directory per process (on /dev/shm where it can be: no disk I/O between
 * executions), removed at exit.
 */
#ifndef BD_FUZZ_H
#define BD_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

_noreturn_ void fuzz_fail(const char *file, int line, const char *fmt, ...) _printf_(3, 4);
#define FUZZ_CHECK(cond, ...)                                                   \
        do {                                                                    \
                if (!(cond))                                                    \
                        fuzz_fail(__FILE__, __LINE__, __VA_ARGS__);             \
        } while (0)

/* The process's scratch directory (created on first use). */
const char *fuzz_dir(void);
/* FUZZ_DIR/name (caller frees). */
char *fuzz_path(const char *name);
/* Writes data to path (replacing it); aborts when it cannot. */
void fuzz_write(const char *path, const void *data, size_t size);
/* The input as a NUL-terminated string (caller frees); NULs inside stay. */
char *fuzz_str(const uint8_t *data, size_t size);
/* Whether s holds only valid UTF-8 (str_utf8_char_len()). */
bool fuzz_utf8_valid(const char *s);

#endif
