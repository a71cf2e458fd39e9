/* urdf_error.c — armurdf's one-line messages, numbers as text, and the joint type names. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/armurdf/urdf_internal.h"

int urdf_fail(urdf_error *e, const char *file, int line, const char *fmt, ...)
{
    int k = snprintf(e->msg, sizeof e->msg, "%s:%d: ", file, line);
    if (k < 0 || (size_t)k >= sizeof e->msg) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + k, sizeof e->msg - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

int urdf_fail_opt(urdf_error *e, const char *fmt, ...)
{
    int k = snprintf(e->msg, sizeof e->msg, "armurdf: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + k, sizeof e->msg - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* Shortest %.Ng (N = 1..17) that strtod reads back as v, with at least as many digits as the
 * integer part has (1000, not 1e+03); -0 is written as 0. */
const char *urdf_num(double v, char buf[URDF_NUM_LEN])
{
    if (v == 0) v = 0;
    int digits = fabs(v) >= 1 && fabs(v) < 1e17 ? (int)floor(log10(fabs(v))) + 1 : 1;
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, URDF_NUM_LEN, "%.*g", p > digits ? p : digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

const char *urdf_type_name(urdf_joint_type t)
{
    static const char *const names[] = {"fixed",     "revolute", "continuous",
                                        "prismatic", "floating", "planar"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

bool urdf_moves(urdf_joint_type t)
{
    return t == URDF_REVOLUTE || t == URDF_CONTINUOUS || t == URDF_PRISMATIC;
}
