/*
 * dyngen.c — finds and checks the generated dynamics of an arm (see dyngen.h).
 */
#include "daemon/dyngen.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "tools/armgen/builtin.h"

/* Why module g does not fit model m with hash h, or NULL when it does. */
static const char *mismatch(const dyn_gen_module *g, const dyn_model *m, unsigned long long h,
                            char *buf, size_t len)
{
    if (g->abi != DYN_GEN_ABI)
        snprintf(buf, len, "it was made for another armd (interface %u, this armd %d)", g->abi,
                 DYN_GEN_ABI);
    else if (g->n != dyn_model_dof(m))
        snprintf(buf, len, "it has %d joints, the configuration %d", g->n, dyn_model_dof(m));
    else if (g->hash != h)
        snprintf(buf, len,
                 "it was generated for a different model (hash 0x%016llx, this configuration's "
                 "0x%016llx: kinematics, masses, friction, payload or gravity differ)",
                 g->hash, h);
    else
        return NULL;
    return buf;
}

/* Refuses a file armd should not load as code: not a regular file, owned by someone other
 * than root or armd's user, or writable by group or others. */
static const char *unsafe(const struct stat *st, char *buf, size_t len)
{
    if (!S_ISREG(st->st_mode))
        snprintf(buf, len, "it is not a regular file");
    else if (st->st_uid != 0 && st->st_uid != geteuid())
        snprintf(buf, len, "it is owned by uid %u, neither root nor armd's user", st->st_uid);
    else if (st->st_mode & (S_IWGRP | S_IWOTH))
        snprintf(buf, len, "it is writable by %s (chmod go-w)",
                 (st->st_mode & S_IWOTH) ? "everyone" : "its group");
    else
        return NULL;
    return buf;
}

/* Loads the shared object at path; a matching module into out, else why not into why. */
static void try_shared(const char *path, const char *config_path, const dyn_model *m,
                       unsigned long long h, dyngen *out, char *why, size_t len)
{
    struct stat st;
    char reason[256];
    if (stat(path, &st) != 0) {
        snprintf(why, len, "%.500s does not exist", path);
        return;
    }
    out->refused = 1; /* until it is found fit */
    if (unsafe(&st, reason, sizeof reason)) {
        snprintf(why, len, "%.500s is not loaded: %s", path, reason);
        return;
    }
    void *hd = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!hd) {
        snprintf(why, len, "%.500s cannot be loaded: %.300s", path, dlerror());
        return;
    }
    const dyn_gen_module *g = dlsym(hd, "armgen_module");
    if (!g) {
        snprintf(why, len, "%.500s has no armgen_module: not made by armgen --shared", path);
    } else if (mismatch(g, m, h, reason, sizeof reason)) {
        snprintf(why, len, "%.400s is not used: %s; regenerate it: armgen --shared -c %.400s", path,
                 reason, config_path);
    } else {
        out->module = g;
        out->handle = hd;
        out->refused = 0;
        snprintf(out->what, sizeof out->what,
                 "generated code of arm %s from %.500s (model hash 0x%016llx)", g->arm, path, h);
        return;
    }
    dlclose(hd);
}

void dyngen_find(const char *config_path, const dyn_model *m, dyngen *out)
{
    memset(out, 0, sizeof *out);
    const unsigned long long h = dyn_model_hash(m);
    char reason[256];
    for (int i = 0; armgen_builtin[i]; i++) {
        if (!mismatch(armgen_builtin[i], m, h, reason, sizeof reason)) {
            out->module = armgen_builtin[i];
            snprintf(out->what, sizeof out->what,
                     "generated code of arm %s, built in (model hash 0x%016llx)", out->module->arm,
                     h);
            return;
        }
    }
    char path[512], why[1200];
    if (cfg_sibling_path(config_path, CFG_DYNAMICS_SUFFIX, path, sizeof path) != 0) {
        snprintf(out->what, sizeof out->what,
                 "general core: no generated code built in for this model (hash 0x%016llx), "
                 "and the configuration's path is too long to look for a shared object",
                 h);
        return;
    }
    try_shared(path, config_path, m, h, out, why, sizeof why);
    if (!out->module)
        snprintf(out->what, sizeof out->what,
                 "general core: no generated code for this model (hash 0x%016llx): none built "
                 "in, and %.1200s",
                 h, why);
}

void dyngen_release(dyngen *g)
{
    if (g->handle) dlclose(g->handle);
    memset(g, 0, sizeof *g);
}
