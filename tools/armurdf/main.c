/*
 * main.c — armurdf: a URDF to the [joint NAME] sections of an armd INI (see --help, armurdf(1) and
 * README "Bring up your own arm"). Exit status 0 written, 1 the URDF cannot be imported,
 * 2 a bad command line or an unreadable/unwritable file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armurdf/urdf.h"

#define MAX_AT 256

static const char usage[] =
    "usage: armurdf ROBOT.urdf [--base LINK] [--tip LINK] [--at JOINT=VALUE ...] [-o FILE]\n"
    "\n"
    "Writes the [joint NAME] sections of an armd INI (URDF kinematic form, SI units) for the\n"
    "serial chain of ROBOT.urdf from LINK --base to LINK --tip.\n"
    "\n"
    "  --base LINK          the link fixed to the world (default: the URDF's root link)\n"
    "  --tip LINK           the end of the arm (default: the only leaf link below the base)\n"
    "  --at JOINT=VALUE     the position [rad | m] of a joint in a side branch (a gripper\n"
    "                       finger, ...) while its links are lumped into the chain link it\n"
    "                       hangs from (default 0; mimic joints follow their rule); repeatable\n"
    "  -o, --output FILE    write to FILE (default: standard output)\n"
    "  -h, --help           this text\n"
    "\n"
    "Fixed joints are merged into their parent link (mass, COM and inertia exact); links before\n"
    "the first moving joint are left out (they never move). Floating and planar joints, closed\n"
    "loops and a mimic joint on the chain are refused with FILE:LINE: <element>: message.\n"
    "Exit status: 0 written, 1 the URDF cannot be imported, 2 bad usage or file.\n";

/* The whole file into a NUL-terminated buffer (*len bytes); NULL with a message on error. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "armurdf: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap && cap <= URDF_MAX_BYTES) {
            char *b = realloc(buf, cap * 2 + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        } else if (n == cap) {
            break; /* over the limit: urdf_parse says so */
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        fprintf(stderr, "armurdf: %s: %s\n", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* The INI text into path (or stdout); 0, or -1 with a message. */
static int write_out(const char *path, const urdf_robot *r, const urdf_arm *arm)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "armurdf: %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = urdf_write_ini(f, r, arm);
    if (path && fclose(f) != 0) rc = -1;
    if (!path && fflush(f) != 0) rc = -1;
    if (rc) fprintf(stderr, "armurdf: %s: write error\n", path ? path : "standard output");
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"base", required_argument, NULL, 'b'}, {"tip", required_argument, NULL, 't'},
        {"at", required_argument, NULL, 'a'},   {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0}};
    static urdf_at at[MAX_AT];
    urdf_options opt = {.at = at};
    const char *out = NULL;
    urdf_error err;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            opt.base = optarg;
            break;
        case 't':
            opt.tip = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'a':
            if (opt.n_at == MAX_AT) {
                fprintf(stderr, "armurdf: --at: more than %d\n", MAX_AT);
                return 2;
            }
            if (urdf_at_parse(optarg, &at[opt.n_at], &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return 2;
            }
            opt.n_at++;
            break;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fputs(usage, stderr);
        return 2;
    }
    size_t len;
    char *text = read_file(argv[optind], &len);
    if (!text) return 2;
    urdf_robot *r;
    urdf_arm arm;
    int rc = urdf_parse(text, len, argv[optind], &r, &err) || urdf_import(r, &opt, &arm, &err);
    free(text);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        urdf_free(r);
        return 1;
    }
    rc = write_out(out, r, &arm) ? 2 : 0;
    if (!rc) urdf_warn_placeholders(stderr, r, &arm);
    if (!rc && out) fprintf(stderr, "armurdf: %s: %d joints written\n", out, arm.n);
    urdf_arm_free(&arm);
    urdf_free(r);
    return rc;
}
