/* mllog.h: MLPerf-format log lines, written by rank 0 only.
 *
 *     :::MLLOG {"namespace": "", "time_ms": 1600000000000, "event_type": "POINT_IN_TIME",
 *               "key": "run_start", "value": null, "metadata": {"file": "x.c", "lineno": 42}}
 *
 * Values and extra metadata are JSON text made with the mllog_* helpers below
 * (or NULL for null).  Each line is written with one write() so a crash leaves
 * whole lines only.
 */
#ifndef BD_MLLOG_H
#define BD_MLLOG_H

#include <stdio.h>

void mllog_init(FILE *out, int rank);
/* The rank this process's launcher gave it (mpirun, PMIx, PMI, srun), read
 * from the environment before MPI_Init, so that a usage error is printed once
 * and without starting MPI; 0 when no launcher set one. */
int mllog_launch_rank(void);
/* event: "POINT_IN_TIME", "INTERVAL_START" or "INTERVAL_END"; metadata_extra is
 * JSON members without braces ("\"epoch_num\": 3") or NULL. */
void mllog_write(const char *event, const char *key, const char *value_json, const char *metadata_extra,
                 const char *file, int line);

#define MLLOG_EVENT(key, value, meta) mllog_write("POINT_IN_TIME", key, value, meta, __FILE__, __LINE__)
#define MLLOG_START(key, value, meta) mllog_write("INTERVAL_START", key, value, meta, __FILE__, __LINE__)
#define MLLOG_END(key, value, meta) mllog_write("INTERVAL_END", key, value, meta, __FILE__, __LINE__)

/* JSON text of a value, in a small rotating set of static buffers (valid until
 * 8 more calls). */
const char *mllog_str(const char *s);
const char *mllog_int(long long v);
const char *mllog_num(double v);

#endif
