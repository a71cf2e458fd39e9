/*
 * payload.c — armctl payload [show] | set MASS [X Y Z] [--inertia I6] | clear | estimate
 * [--apply] [--move-time S]: the tool payload (payload.get,
 * payload.set, payload.estimate).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/armctl.h"

/* "mass 2.000 kg at x y z m (tool frame), inertia ..." */
static void print_payload(const arm_info *a, json_t *r)
{
    (void)a;
    printf("payload: %.4g kg", num(json_object_get(r, "mass")));
    printf(" at %.4g %.4g %.4g m (tool frame)", vec_at(r, "com", 0), vec_at(r, "com", 1),
           vec_at(r, "com", 2));
    printf(", inertia %.4g %.4g %.4g %.4g %.4g %.4g kg m^2 about it\n", vec_at(r, "inertia", 0),
           vec_at(r, "inertia", 1), vec_at(r, "inertia", 2), vec_at(r, "inertia", 3),
           vec_at(r, "inertia", 4), vec_at(r, "inertia", 5));
}

/* The estimate with its standard deviations, and the [arm] lines that make it permanent. */
static void print_estimate(const arm_info *a, json_t *r)
{
    (void)a;
    double m = num(json_object_get(r, "mass")), sm = num(json_object_get(r, "sd_mass"));
    printf("mass      %.4g kg (sd %.2g)\n", m, sm);
    json_t *com = json_object_get(r, "com");
    if (json_is_array(com))
        printf("com       %.4g %.4g %.4g m, tool frame (sd %.2g %.2g %.2g)\n", vec_at(r, "com", 0),
               vec_at(r, "com", 1), vec_at(r, "com", 2), vec_at(r, "sd_com", 0),
               vec_at(r, "sd_com", 1), vec_at(r, "sd_com", 2));
    else
        printf("com       unknown: the mass is not above 3 standard deviations\n");
    if (json_is_array(json_object_get(r, "inertia")))
        printf("inertia   %.4g %.4g %.4g %.4g %.4g %.4g kg m^2 about the com\n",
               vec_at(r, "inertia", 0), vec_at(r, "inertia", 1), vec_at(r, "inertia", 2),
               vec_at(r, "inertia", 3), vec_at(r, "inertia", 4), vec_at(r, "inertia", 5));
    printf("fit       residual %.3g N m RMS, condition number %.3g, %d poses, %.1f s of motion, "
           "%lld equations (%lld left out: far off the fit)\n",
           num(json_object_get(r, "residual_rms")), num(json_object_get(r, "cond")),
           (int)json_integer_value(json_object_get(r, "poses")),
           num(json_object_get(r, "duration")),
           (long long)json_integer_value(json_object_get(r, "rows")),
           (long long)json_integer_value(json_object_get(r, "rows_left_out")));
    json_t *w = json_object_get(r, "warnings");
    for (size_t i = 0; i < json_array_size(w); i++)
        printf("warning   %s\n", json_string_value(json_array_get(w, i)));
    json_t *v = json_object_get(r, "validation");
    bool passed = json_is_true(json_object_get(v, "passed"));
    printf("check     %.3g N m RMS unexplained on %lld held-out equations (the payload in use: "
           "%.3g)\n",
           num(json_object_get(v, "rms")),
           (long long)json_integer_value(json_object_get(v, "rows")),
           num(json_object_get(v, "rms_in_use")));
    if (!passed) {
        const char *why = json_string_value(json_object_get(v, "why"));
        printf("not validated: %s\n", why ? why : "this armd does not check its estimate");
        return;
    }
    if (json_is_true(json_object_get(r, "applied")))
        printf("applied   (until the next payload set or a restart)\n");
    else if (json_is_array(com))
        printf("not applied: armctl payload set %.6g %.6g %.6g %.6g\n", m, vec_at(r, "com", 0),
               vec_at(r, "com", 1), vec_at(r, "com", 2));
    if (json_is_array(com))
        printf("for the INI, [arm]:\npayload_mass = %.6g\npayload_com = %.6g %.6g %.6g\n", m,
               vec_at(r, "com", 0), vec_at(r, "com", 1), vec_at(r, "com", 2));
}

/* Numbers argv[*i + 1 ..] into a new array of n; advances *i. NULL (reported) when short. */
static json_t *numbers(int argc, char **argv, int *i, int n, const char *what)
{
    json_t *v = json_array();
    for (int k = 0; k < n; k++) {
        double x;
        if (*i + 1 >= argc || !parse_double(argv[*i + 1], &x)) {
            json_decref(v);
            usage_error("payload: %s needs finite numbers", what);
            return NULL;
        }
        json_array_append_new(v, json_real(x));
        (*i)++;
    }
    return v;
}

static int payload_set(armctl_conn *c, int argc, char **argv)
{
    double mass;
    if (argc < 2 || !parse_double(argv[1], &mass))
        return usage_error("payload set: give MASS [X Y Z] [--inertia IXX IXY IXZ IYY IYZ IZZ]%s",
                           "");
    json_t *p = json_pack("{s:f}", "mass", mass);
    int i = 1;
    if (i + 1 < argc && strcmp(argv[i + 1], "--inertia") != 0) {
        json_t *com = numbers(argc, argv, &i, 3, "X Y Z");
        if (!com) {
            json_decref(p);
            return 2;
        }
        json_object_set_new(p, "com", com);
    }
    for (i++; i < argc; i++) {
        json_t *in =
            strcmp(argv[i], "--inertia") == 0 ? numbers(argc, argv, &i, 6, "--inertia") : NULL;
        if (!in) {
            json_decref(p);
            return strcmp(argv[i], "--inertia") == 0
                       ? 2
                       : usage_error("payload set: unexpected '%s'", argv[i]);
        }
        json_object_set_new(p, "inertia", in);
    }
    json_t *r = call(c, "payload.set", p);
    return r ? print_result(NULL, r, print_payload) : 1;
}

static int payload_estimate(armctl_conn *c, int argc, char **argv)
{
    json_t *p = json_object();
    for (int i = 1; i < argc; i++) {
        double v;
        if (strcmp(argv[i], "--apply") == 0) {
            json_object_set_new(p, "apply", json_true());
        } else if (strcmp(argv[i], "--move-time") == 0 && i + 1 < argc &&
                   parse_double(argv[i + 1], &v)) {
            json_object_set_new(p, "move_time", json_real(v));
            i++;
        } else {
            json_decref(p);
            return usage_error("payload estimate: '%s': expected --apply or --move-time S",
                               argv[i]);
        }
    }
    fprintf(stderr, "armctl: payload estimate: the arm moves through 8 poses and back ...\n");
    json_t *r = call(c, "payload.estimate", p);
    if (!r) return 1;
    /* an estimate its held-out samples do not confirm is shown, never offered for use */
    bool passed = json_is_true(json_object_get(json_object_get(r, "validation"), "passed"));
    print_result(NULL, r, print_estimate);
    if (!passed) fprintf(stderr, "armctl: payload estimate: not validated: nothing to use\n");
    return passed ? 0 : 1;
}

int cmd_payload(armctl_conn *c, int argc, char **argv)
{
    const char *sub = argc ? argv[0] : "show";
    if (strcmp(sub, "show") == 0 && argc <= 1) {
        json_t *r = call(c, "payload.get", NULL);
        return r ? print_result(NULL, r, print_payload) : 1;
    }
    if (strcmp(sub, "set") == 0) return payload_set(c, argc, argv);
    if (strcmp(sub, "clear") == 0 && argc == 1) {
        json_t *r = call(c, "payload.set", json_pack("{s:f}", "mass", 0.0));
        return r ? print_result(NULL, r, print_payload) : 1;
    }
    if (strcmp(sub, "estimate") == 0) return payload_estimate(c, argc, argv);
    return usage_error("payload: '%s': expected show, set, clear or estimate", sub);
}
