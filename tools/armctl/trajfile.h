/*
 * trajfile.h — reads a trajectory file for `armctl send`: JSON ({"points": [...]} or a bare
 * array of {t, q, qd?, qdd?}) or CSV (rows t,q1..qn; an optional header row; '#' comments).
 */
#ifndef ARMCTL_TRAJFILE_H
#define ARMCTL_TRAJFILE_H

#include <jansson.h>
#include <stddef.h>

/* Returns the points array (new reference) for an arm with n joints, or NULL with a message
 * naming the file and line in err. */
json_t *trajfile_load(const char *path, int n, char *err, size_t err_len);

#endif
