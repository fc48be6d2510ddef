/* cpuset.h: sets of CPU (or NUMA node) numbers and their list syntax
 * ("0-5,48-53"), as in sysfs cpulist files and numactl options. */
#ifndef BD_CPUSET_H
#define BD_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define BD_CPUSET_MAX 4096

struct bd_cpuset {
        uint64_t bits[BD_CPUSET_MAX / 64];
};

void cpuset_clear(struct bd_cpuset *s);
int cpuset_add(struct bd_cpuset *s, int cpu);
bool cpuset_has(const struct bd_cpuset *s, int cpu);
int cpuset_count(const struct bd_cpuset *s);
/* Parses "0-5,48-53" (whitespace at the end allowed, empty string = empty set). */
int cpuset_parse(struct bd_cpuset *s, const char *list);
/* Appends the compact list form ("0-5,48-53"; "" for an empty set). */
void cpuset_format(const struct bd_cpuset *s, struct bd_buf *out);
/* The first "model name" of a /proc/cpuinfo file into buf (len bytes):
 * 1 when one was found, 0 when none, -errno when the file cannot be read
 * (buf is left alone unless 1). */
int cpuinfo_model_name(const char *path, char *buf, size_t len);

#endif
