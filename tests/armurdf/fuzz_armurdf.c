/*
 * fuzz_armurdf.c — arbitrary bytes into the URDF importer: no crash, no leak, no hang; a refusal
 * is one line naming the file or the option; what it imports, config/ loads as that many joints,
 * and when the completed INI is valid the model holds exactly the importer's numbers (the axis
 * aside: the loader normalises it once more).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "tests/armurdf/armurdf_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A refusal's message: "fuzz.urdf:LINE: ..." or "armurdf: ...", one line. */
static void check_message(const urdf_error *err)
{
    if (strncmp(err->msg, "fuzz.urdf:", 10) != 0 && strncmp(err->msg, "armurdf: ", 9) != 0) abort();
    if (strchr(err->msg, '\n')) abort();
}

/* The written sections, completed, load as arm->n joints carrying the importer's numbers. */
static void check_loads(const imported *im)
{
    static armd_config cfg;
    char *ini = complete_ini(im->ini, "");
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load_string(ini, "fuzz.ini", &cfg, &rep);
    if (cfg.n_joints != im->arm.n) abort();
    for (int i = 0; errors == 0 && i < im->arm.n; i++) {
        const urdf_chain_joint *c = &im->arm.j[i];
        const dyn_joint_desc *j = &cfg.model.joint[i];
        if (j->mass != c->mass || memcmp(j->com, c->com, sizeof j->com) != 0 ||
            memcmp(j->inertia, c->inertia, sizeof j->inertia) != 0 ||
            memcmp(j->origin_xyz, c->origin.xyz, sizeof j->origin_xyz) != 0)
            abort();
    }
    cfg_report_free(&rep);
    free(ini);
}

/* Imports with the default base and tip, and again with the last link as the tip. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    urdf_error err;
    urdf_robot *r;
    if (urdf_parse((const char *)data, size, "fuzz.urdf", &r, &err)) {
        check_message(&err);
        return 0;
    }
    const char *tips[2] = {NULL, r->link[r->n_links - 1].name};
    for (int k = 0; k < 2; k++) {
        urdf_options opt = {.tip = tips[k]};
        imported im;
        if (import_text((const char *)data, size, "fuzz.urdf", &opt, &im, &err)) {
            check_message(&err);
            continue;
        }
        check_loads(&im);
        imported_free(&im);
    }
    urdf_free(r);
    return 0;
}
