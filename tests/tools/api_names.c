/*
 * api_names.c — prints what armd-api(7) must document, taken from armd's own tables, for
 * test_api_manpage.py: one line per method of the method table ("method NAME", plus
 * " restricted" when a connection beyond max_clients may call it), one per notification
 * ("notification NAME"), and for each method the safety state machine judges, the states it is
 * accepted in ("states NAME STATE ..."), asked of sf_command_allowed itself.
 */
#include <stdio.h>
#include <string.h>

#include "daemon/api_internal.h"
#include "daemon/safety.h"

/* The methods the state machine judges, and its command for each: enable ... cancel are state
 * commands (ctl_enable ... ctl_cancel), trajectory and move_to both hand a plan to the loop
 * (LOOP_TRAJECTORY), controller.set switches the law (LOOP_CONTROLLER); see
 * daemon/loop/commands.c sf_command_of. The other methods are not judged by state there. */
static const struct {
    const char *method;
    sf_cmd cmd;
} judged[] = {
    {"enable", SF_CMD_ENABLE},
    {"disable", SF_CMD_DISABLE},
    {"hold", SF_CMD_HOLD},
    {"estop", SF_CMD_ESTOP},
    {"reset", SF_CMD_RESET},
    {"cancel", SF_CMD_CANCEL},
    {"trajectory", SF_CMD_TRAJECTORY},
    {"move_to", SF_CMD_TRAJECTORY},
    {"controller.set", SF_CMD_CONTROLLER},
};

/* True when the method table has a method of this name. */
static bool in_table(const char *name)
{
    const char *m;
    for (size_t i = 0; (m = api_method_name(i, NULL)) != NULL; i++)
        if (strcmp(m, name) == 0) return true;
    return false;
}

int main(void)
{
    const char *name;
    bool restricted_ok;
    for (size_t i = 0; (name = api_method_name(i, &restricted_ok)) != NULL; i++)
        printf("method %s%s\n", name, restricted_ok ? " restricted" : "");
    for (size_t i = 0; (name = api_notification_name(i)) != NULL; i++)
        printf("notification %s\n", name);
    for (size_t k = 0; k < sizeof judged / sizeof judged[0]; k++) {
        if (!in_table(judged[k].method)) {
            fprintf(stderr,
                    "api_names: '%s' is not in the method table any more: update judged[]\n",
                    judged[k].method);
            return 1;
        }
        printf("states %s", judged[k].method);
        for (int s = SF_DISABLED; s <= SF_ESTOP; s++) {
            sf_state next;
            char why[200];
            if (sf_command_allowed((sf_state)s, judged[k].cmd, "", &next, why, sizeof why))
                printf(" %s", sf_state_name((sf_state)s));
        }
        printf("\n");
    }
    return 0;
}
