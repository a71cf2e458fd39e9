/* armurdf_support.c — import into memory, and the completed INI (see armurdf_support.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/armurdf/armurdf_support.h"

int import_text(const char *text, size_t len, const char *file, const urdf_options *opt,
                imported *out, urdf_error *err)
{
    memset(out, 0, sizeof *out);
    if (urdf_parse(text, len, file, &out->r, err)) return -1;
    if (urdf_import(out->r, opt, &out->arm, err)) {
        urdf_free(out->r);
        out->r = NULL;
        return -1;
    }
    size_t n;
    FILE *f = open_memstream(&out->ini, &n);
    if (!f || urdf_write_ini(f, out->r, &out->arm) || fclose(f)) abort();
    return 0;
}

void imported_free(imported *im)
{
    urdf_arm_free(&im->arm);
    urdf_free(im->r);
    free(im->ini);
    memset(im, 0, sizeof *im);
}

char *complete_ini(const char *joints, const char *arm_extra)
{
    char *out;
    size_t n;
    FILE *f = open_memstream(&out, &n);
    if (!f) abort();
    fprintf(f, "[arm]\nname = t\nrate_hz = 1000\n%s\n[driver]\ntype = armlink\nport = /dev/null\n",
            arm_extra);
    int id = 0;
    for (const char *p = joints; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p + 1) : strlen(p);
        fwrite(p, 1, len, f);
        if (strncmp(p, "[joint ", 7) == 0)
            fprintf(f, "%sacceleration = 10\nkp = 100\nkd = 20\nid = %d\ntorque_per_amp = 1\n",
                    eol ? "" : "\n", ++id);
        p += len;
    }
    if (fclose(f)) abort();
    return out;
}

char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 + 1 > cap) {
            cap = (n + 4096 + 1) * 2;
            char *b = realloc(buf, cap);
            if (!b) abort();
            buf = b;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}
