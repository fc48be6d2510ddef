/* stage-int.h: what stage.c and stage-record.c share, not for other users. */
#ifndef BD_STAGE_INT_H
#define BD_STAGE_INT_H

#include "stage.h"

char *record_path(const char *state_dir, const char *name);
/* Writes STATE_DIR/NAME.state atomically (creating STATE_DIR). */
int record_save(const char *state_dir, const struct bd_stage_record *r, struct bd_err *err);

#endif
