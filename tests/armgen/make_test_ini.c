/* make_test_ini — writes a random, physically valid arm as an armd INI (a test input for
 * armgen, built at build time; tests/armgen/meson.build lists the arms):
 *   make_test_ini NAME SEED FORM N P_PRISMATIC EXTRAS SMOOTHING OUT.ini
 * FORM standard | modified | urdf (the same random standard-DH arm, re-described), P_PRISMATIC
 * the probability of a prismatic joint, EXTRAS 1 for armature, friction, tool and payload,
 * SMOOTHING the friction_smoothing [rad/s]. Numbers are written with 17 digits: the loader
 * reads back exactly the generated description. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"

static void vec(FILE *f, const char *key, const double *v, int k)
{
    fprintf(f, "%s =", key);
    for (int i = 0; i < k; i++) fprintf(f, " %.17g", v[i]);
    fprintf(f, "\n");
}

static void write_ini(FILE *f, const char *name, const dyn_model_desc *d)
{
    fprintf(f, "; random test arm %s, written by tests/armgen/make_test_ini\n\n[arm]\n", name);
    fprintf(f, "name = %s\nrate_hz = 200\n", name);
    vec(f, "gravity", d->gravity, 3);
    vec(f, "tool_xyz", d->tool_xyz, 3);
    vec(f, "tool_rpy", d->tool_rpy, 3);
    fprintf(f, "payload_mass = %.17g\n", d->payload.mass);
    vec(f, "payload_com", d->payload.com, 3);
    vec(f, "payload_inertia", d->payload.inertia, 6);
    fprintf(f, "friction_smoothing = %.17g\n\n", d->friction_smoothing);
    fprintf(f, "[driver]\ntype = armlink\nport = /dev/null\nbaud = 1000000\n\n");
    for (int i = 0; i < d->n; i++) {
        const dyn_joint_desc *j = &d->joint[i];
        fprintf(f, "[joint j%d]\ntype = %s\n", i + 1,
                j->type == DYN_PRISMATIC ? "prismatic" : "revolute");
        if (j->form == DYN_URDF) {
            vec(f, "origin_xyz", j->origin_xyz, 3);
            vec(f, "origin_rpy", j->origin_rpy, 3);
            vec(f, "axis", j->axis, 3);
        } else {
            fprintf(f, "dh = %s\na = %.17g\nalpha = %.17g\nd = %.17g\ntheta = %.17g\n",
                    j->form == DYN_DH_MODIFIED ? "modified" : "standard", j->a, j->alpha, j->d,
                    j->theta);
        }
        fprintf(f, "mass = %.17g\n", j->mass);
        vec(f, "com", j->com, 3);
        vec(f, "inertia", j->inertia, 6);
        fprintf(f, "armature = %.17g\nviscous = %.17g\ncoulomb = %.17g %.17g\n", j->armature,
                j->viscous, j->coulomb_pos, j->coulomb_neg);
        /* a torque limit far above what the random links and payload need anywhere in the
         * ranges (the loader refuses a payload the arm could not hold) */
        fprintf(f, "lower = -3\nupper = 3\nvelocity = 2\nacceleration = 5\ntorque = 10000\n");
        fprintf(f, "kp = 100\nkd = 20\nid = %d\ntorque_per_amp = 1\n\n", i + 1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 9) {
        fprintf(stderr, "usage: make_test_ini NAME SEED FORM N P_PRISMATIC EXTRAS SMOOTHING "
                        "OUT.ini\n");
        return 2;
    }
    const char *forms[] = {"standard", "modified", "urdf"};
    int form = -1;
    for (int k = 0; k < 3; k++)
        if (strcmp(argv[3], forms[k]) == 0) form = k;
    int n = atoi(argv[4]);
    if (form < 0 || n < 1 || n > DYN_MAX_DOF) {
        fprintf(stderr, "make_test_ini: FORM standard|modified|urdf, N 1..%d\n", DYN_MAX_DOF);
        return 2;
    }
    static dyn_model_desc std, out;
    rng_seed(strtoull(argv[2], NULL, 10));
    arm_random(&std, n, DYN_DH_STANDARD, atof(argv[5]), atoi(argv[6]));
    std.friction_smoothing = atof(argv[7]);
    if (form == DYN_DH_STANDARD)
        out = std;
    else
        arm_convert(&std, form, &out);
    FILE *f = fopen(argv[8], "w");
    if (!f) {
        perror(argv[8]);
        return 1;
    }
    write_ini(f, argv[1], &out);
    return fclose(f) == 0 ? 0 : 1;
}
