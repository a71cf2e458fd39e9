/*
 * tool.c — armctl tool [status] | move OPENING [--speed V] | grasp WIDTH [--force N] [--speed V]
 * [--epsilon-inner E] [--epsilon-outer E] | release [--speed V] | stop: the tool (gripper) of
 * the arm's [tool] section, over the methods tool.move, tool.grasp, tool.release, tool.stop
 * and status's "tool" (armd-api(7)).
 *
 * Arguments in SI units as everywhere in armctl (OPENING, WIDTH, E in m, V in m/s, N in N);
 * the answer is printed in mm and N, the size a gripper is read in. armd answers a tool command
 * when the fingers are done, so armctl waits that long; Ctrl-C leaves the command running in
 * armd (armctl tool stop, from another shell, stops it). Exit status 0 for the outcomes
 * reached and grasped, 1 for any other outcome or an error, 2 on usage errors (nothing sent).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tools/armctl/armctl.h"

/* The options of the tool commands: flag, params key, what it needs (for the usage error),
 * whether 0 is allowed. */
static const struct tool_option {
    const char *flag, *key, *needs;
    bool zero_ok;
} tool_options[] = {
    {"--speed", "speed", "a finite speed > 0 [m/s]", false},
    {"--force", "force", "a finite force > 0 [N]", false},
    {"--epsilon-inner", "epsilon_inner", "a finite width >= 0 [m]", true},
    {"--epsilon-outer", "epsilon_outer", "a finite width >= 0 [m]", true},
};
#define N_OPTIONS (int)(sizeof tool_options / sizeof tool_options[0])
#define OPT(k)    (1u << (k)) /* tool_options[k] allowed */

/* The subcommands that send a tool command: name, method, the positional argument's params
 * key and name (NULL: none), the options allowed (OPT bits) and their list for usage errors. */
static const struct tool_command {
    const char *name, *method, *arg_key, *arg_name;
    unsigned allowed;
    const char *allowed_text;
} tool_commands[] = {
    {"move", "tool.move", "opening", "OPENING", OPT(0), "--speed V"},
    {"grasp", "tool.grasp", "width", "WIDTH", OPT(0) | OPT(1) | OPT(2) | OPT(3),
     "--force N, --speed V, --epsilon-inner E, --epsilon-outer E"},
    {"release", "tool.release", NULL, NULL, OPT(0), "--speed V"},
    {"stop", "tool.stop", NULL, NULL, 0, NULL},
};
#define N_TOOL_COMMANDS (int)(sizeof tool_commands / sizeof tool_commands[0])

/* The outcomes of a tool command (armd-api(7), tool.move and tool.grasp): whether it is a
 * success (exit status 0), and what a failure means, with the next step. */
static const struct {
    const char *outcome;
    bool ok;
    const char *meaning;
} outcomes[] = {
    {"reached", true, NULL},
    {"grasped", true, NULL},
    {"no_object", false,
     "the fingers closed below WIDTH - epsilon_inner: nothing, or something narrower, is "
     "between them"},
    {"blocked", false,
     "the fingers stopped short of the target: something in the way, or (grasp) an object "
     "wider than WIDTH + epsilon_outer"},
    {"stopped", false, "tool stop or a newer tool command stopped it"},
    {"aborted", false,
     "the arm left holding and moving (disable, estop or a fault): see armctl status"},
};
#define N_OUTCOMES (int)(sizeof outcomes / sizeof outcomes[0])

/* "tool grasp: --force needs a force > 0 [N]" and the like, as a usage error (exit status 2). */
__attribute__((format(printf, 1, 2))) static int tool_usage(const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return usage_error("%s", msg);
}

/* Reads argv[1..] of a tool command (after its name) into params p: the positional value and
 * the options. 0, or the usage exit status. */
static int parse_command(const struct tool_command *k, int argc, char **argv, json_t *p)
{
    bool have_arg = false;
    if (!k->arg_key && !k->allowed && argc > 1)
        return tool_usage("tool %s: takes no arguments ('%s' given)", k->name, argv[1]);
    for (int i = 1; i < argc; i++) {
        double v;
        if (argv[i][0] == '-' && argv[i][1] == '-') {
            int o = 0;
            while (o < N_OPTIONS && strcmp(argv[i], tool_options[o].flag) != 0) o++;
            if (o == N_OPTIONS || !(k->allowed & OPT(o)))
                return tool_usage("tool %s: unknown option '%s' (the options are %s)", k->name,
                                  argv[i], k->allowed_text);
            const struct tool_option *opt = &tool_options[o];
            if (json_object_get(p, opt->key))
                return tool_usage("tool %s: %s given twice", k->name, opt->flag);
            if (i + 1 >= argc || !parse_double(argv[i + 1], &v) || !(opt->zero_ok ? v >= 0 : v > 0))
                return tool_usage("tool %s: %s needs %s", k->name, opt->flag, opt->needs);
            json_object_set_new(p, opt->key, json_real(v));
            i++;
        } else if (k->arg_key && !have_arg) {
            if (!parse_double(argv[i], &v))
                return tool_usage("tool %s: '%s' is not a number (%s [m])", k->name, argv[i],
                                  k->arg_name);
            json_object_set_new(p, k->arg_key, json_real(v));
            have_arg = true;
        } else {
            return tool_usage("tool %s: unexpected argument '%s'", k->name, argv[i]);
        }
    }
    if (k->arg_key && !have_arg) return tool_usage("tool %s: needs %s [m]", k->name, k->arg_name);
    return 0;
}

/* "grasped: opening 20.05 mm, force 9.87 N"; for an outcome that is no success, what it means
 * on stderr. Returns the exit status: 0 for reached or grasped, else 1. */
static int report(const struct tool_command *k, json_t *r)
{
    const char *outcome = json_string_value(json_object_get(r, "outcome"));
    int o = 0;
    while (o < N_OUTCOMES && !(outcome && strcmp(outcome, outcomes[o].outcome) == 0)) o++;
    if (opt_json)
        print_json(r);
    else
        printf("%s: opening %.2f mm, force %.2f N\n", outcome ? outcome : "(no outcome)",
               1e3 * num(json_object_get(r, "opening")), num(json_object_get(r, "force")));
    if (o < N_OUTCOMES && outcomes[o].ok) return 0;
    if (o < N_OUTCOMES)
        fprintf(stderr, "armctl: tool %s: %s: %s\n", k->name, outcome, outcomes[o].meaning);
    else
        fprintf(stderr, "armctl: tool %s: armd answered an outcome armctl does not know: %s\n",
                k->name, outcome ? outcome : "none");
    return 1;
}

/* tool [status]: the tool's part of status. */
static int tool_status(armctl_conn *c)
{
    json_t *s = call(c, "status", NULL);
    if (!s) return 1;
    json_t *t = json_object_get(s, "tool");
    if (!json_is_object(t)) {
        fprintf(stderr, "armctl: tool: this arm has no tool: its configuration has no [tool] "
                        "section (armd.conf(5))\n");
        json_decref(s);
        return 1;
    }
    if (opt_json) {
        print_json(t);
    } else {
        printf("tool        %s\n", json_string_value(json_object_get(t, "name")));
        printf("opening     %.2f mm (stroke %.2f ... %.2f mm)\n",
               1e3 * num(json_object_get(t, "opening")), 1e3 * num(json_object_get(t, "lower")),
               1e3 * num(json_object_get(t, "upper")));
        printf("speed       %.1f mm/s\n", 1e3 * num(json_object_get(t, "speed")));
        printf("force       %.2f N\n", num(json_object_get(t, "force")));
        printf("command     %s\n", json_string_value(json_object_get(t, "command")));
        printf("grasped     %s\n", json_is_true(json_object_get(t, "grasped")) ? "yes" : "no");
    }
    json_decref(s);
    return 0;
}

int cmd_tool(armctl_conn *c, int argc, char **argv)
{
    const char *sub = argc ? argv[0] : "status";
    if (strcmp(sub, "status") == 0) {
        if (argc > 1) return tool_usage("tool status: takes no arguments ('%s' given)", argv[1]);
        return tool_status(c);
    }
    for (int k = 0; k < N_TOOL_COMMANDS; k++) {
        if (strcmp(sub, tool_commands[k].name) != 0) continue;
        json_t *p = json_object();
        int bad = parse_command(&tool_commands[k], argc, argv, p);
        if (bad) {
            json_decref(p);
            return bad;
        }
        if (json_object_size(p) == 0) { /* release, stop without options: no params */
            json_decref(p);
            p = NULL;
        }
        json_t *r = call(c, tool_commands[k].method, p);
        if (!r) return 1;
        int status = report(&tool_commands[k], r);
        json_decref(r);
        return status;
    }
    return tool_usage("tool: '%s': expected status, move, grasp, release or stop", sub);
}
