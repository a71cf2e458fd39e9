/* armurdf_support.h — what the importer's tests and fuzz target share: a URDF text through
 * parse, import and write into memory, and the INI armd loads from the written sections. */
#ifndef ARMD_TESTS_ARMURDF_SUPPORT_H
#define ARMD_TESTS_ARMURDF_SUPPORT_H

#include <stddef.h>

#include "tools/armurdf/urdf.h"

typedef struct {
    urdf_robot *r;
    urdf_arm arm;
    char *ini; /* the [joint NAME] sections as armurdf writes them */
} imported;

/* urdf_parse + urdf_import + urdf_write_ini; 0, or -1 with err (nothing to free then). */
int import_text(const char *text, size_t len, const char *file, const urdf_options *opt,
                imported *out, urdf_error *err);
void imported_free(imported *im);

/* A whole INI: [arm] (name t, rate_hz 1000, then arm_extra lines), [driver] (armlink), and the
 * joint sections with the keys a URDF does not give added to each (acceleration, kp, kd, id,
 * torque_per_amp). malloc'd. */
char *complete_ini(const char *joints, const char *arm_extra);

/* A file's bytes, NUL-terminated (*len without the NUL); NULL when unreadable. */
char *read_text(const char *path, size_t *len);

#endif
