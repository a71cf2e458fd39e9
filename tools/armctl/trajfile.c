/*
 * trajfile.c — trajectory files for `armctl send` (see trajfile.h).
 */
#include "tools/armctl/trajfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdbool.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* JSON: {"points": [...]} or [...]; the daemon checks each point. */
static json_t *load_json(const char *path, char *err, size_t err_len)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        snprintf(err, err_len, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        return NULL;
    }
    json_t *pts = json_is_array(root) ? root : json_object_get(root, "points");
    if (!json_is_array(pts)) {
        snprintf(err, err_len, "%s: expected an array of points or an object with \"points\"",
                 path);
        json_decref(root);
        return NULL;
    }
    json_incref(pts);
    json_decref(root);
    return pts;
}

/* CSV: t,q1..qn per row. */
static json_t *load_csv(const char *path, int n, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return NULL;
    }
    json_t *pts = json_array();
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '#' || *s == '\n' || *s == '\r' || *s == '\0') continue;
        double v[1 + 64];
        int k = 0;
        bool header = false;
        char *p = s;
        while (*p && *p != '\n' && *p != '\r') {
            char *end;
            errno = 0;
            double x = strtod(p, &end);
            if (end == p) {
                header = true;
                break;
            }
            if (k < 1 + 64) v[k] = x;
            k++;
            if (!isfinite(x)) {
                snprintf(err, err_len, "%s:%d: field %d is not a finite number", path, lineno, k);
                goto fail;
            }
            p = end;
            while (*p == ' ' || *p == '\t') p++;
            if (*p == ',') p++;
            while (*p == ' ' || *p == '\t') p++;
        }
        if (header) {
            if (json_array_size(pts) == 0 && lineno == 1) continue;
            snprintf(err, err_len, "%s:%d: expected numbers t,q1..q%d", path, lineno, n);
            goto fail;
        }
        if (k != n + 1) {
            snprintf(err, err_len, "%s:%d: %d fields, expected %d (t and one q per joint)", path,
                     lineno, k, n + 1);
            goto fail;
        }
        json_t *q = json_array();
        for (int i = 0; i < n; i++) json_array_append_new(q, json_real(v[1 + i]));
        json_array_append_new(pts, json_pack("{s:f, s:o}", "t", v[0], "q", q));
    }
    free(line);
    fclose(f);
    if (json_array_size(pts) == 0) {
        snprintf(err, err_len, "%s: no waypoints", path);
        json_decref(pts);
        return NULL;
    }
    return pts;
fail:
    free(line);
    fclose(f);
    json_decref(pts);
    return NULL;
}

json_t *trajfile_load(const char *path, int n, char *err, size_t err_len)
{
    if (ends_with(path, ".json")) return load_json(path, err, err_len);
    if (ends_with(path, ".csv")) return load_csv(path, n, err, err_len);
    snprintf(err, err_len, "%s: expected a .json or .csv file", path);
    return NULL;
}
