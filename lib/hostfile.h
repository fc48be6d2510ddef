/* hostfile.h: Open MPI's hostfile, the nodes of a system launched by mpirun.
 *
 * A line is a host name, then options of the form KEY=VALUE (slots,
 * max_slots or max-slots: a whole number from 1), or blank; '#' starts a
 * comment.  A system file's mpirun.hostfile names one ("~/hosts_24": a line
 * "<ip> slots=8" per node, as the p3dn document has it): benchctl nodes,
 * stage and the launch read the nodes there.
 */
#ifndef BD_HOSTFILE_H
#define BD_HOSTFILE_H

#include "err.h"

/* The hosts of a hostfile's text, in order, each once (a host named again
 * is an error: Open MPI adds its slots, benchd would call its benchd twice).
 * 0 with *ret (NULL-terminated, strv_free), or -EINVAL with
 * "LABEL:LINE: ..." in err. */
int hostfile_parse(const char *text, const char *label, char ***ret, struct bd_err *err);

/* The same of a file (~/ expanded): -errno with the file named when it
 * cannot be read. */
int hostfile_read(const char *path, char ***ret, struct bd_err *err);

#endif
