/*
 * armctl.c — command-line client for armd's socket API: prints human-readable tables (joint
 * names and units) by default and the daemon's JSON with --json; exit status 1 with the
 * daemon's message when a command fails, 2 on usage errors. This file: usage, options, and
 * dispatch to the commands (commands.c, stream.c, calibrate.c); output in format.c, calls in
 * request.c, the connection in client.c.
 */
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/armctl.h"

#define DEFAULT_SOCKET "/run/armd/armd.sock" /* armd.service's */
#define INSTANCE_DIR   "/run/armd"           /* armd@NAME's socket: INSTANCE_DIR/NAME/armd.sock */

static const char usage_text[] =
    "usage: armctl [-s SOCKET | -a NAME] [--json] COMMAND [ARGS]\n"
    "\n"
    "Commands armd (the arm controller daemon) over its socket.\n"
    "\n"
    "  status                     state, fault, joint table, trajectory, loop timing\n"
    "  info                       arm, joints, limits, rate, driver, controller\n"
    "  enable | disable | hold | estop | reset | cancel\n"
    "  move Q1..Qn [--time T]     move to a joint position [rad|m] (T [s], else from limits)\n"
    "  send FILE [--append]       send a trajectory: FILE.json ({\"points\": [{t, q, qd?, "
    "qdd?}]})\n"
    "                             or FILE.csv (rows t,q1..qn)\n"
    "  watch [--rate HZ]          live table until Ctrl-C\n"
    "  record FILE.csv --seconds N [--rate HZ]\n"
    "                             write t, q, q_des, qd, tau, ext per joint (default: loop\n"
    "                             rate; FILE - is stdout)\n"
    "  gains [kp=V kd=V ki=V]     show gains, or set them (V: one number or V1,V2,..,Vn)\n"
    "  controller NAME            computed_torque | pd_gravity | gravity_comp\n"
    "  reload                     reload the INI file (like SIGHUP)\n"
    "  wait done|STATE [--timeout S]\n"
    "                             wait until the trajectory is done (or the state is reached);\n"
    "                             fails on fault or estop\n"
    "  collision calibrate FILE [--runs N] [--factor F] [--floor T]\n"
    "                             run the trajectory FILE (as for send) N times (default 3)\n"
    "                             with collision = detect, take each joint's largest |external\n"
    "                             torque|, propose collision_threshold = largest x F (default\n"
    "                             2), at least T (default 1 N m); needs the arm holding\n"
    "  payload [show]             the payload the model holds at the tool\n"
    "  payload set MASS [X Y Z] [--inertia IXX IXY IXZ IYY IYZ IZZ]\n"
    "                             set it: kg, COM [m] in the tool frame, inertia [kg m^2]\n"
    "                             about the COM (until the next set or a restart)\n"
    "  payload clear              no payload\n"
    "  payload estimate [--apply] [--move-time S]\n"
    "                             fit mass and COM from the torques of 8 moves around the\n"
    "                             present pose and back (elbow and wrist turn 0.5 rad; each\n"
    "                             move S [s], else from the limits); needs the arm holding;\n"
    "                             --apply sets the result\n"
    "  identify [--out FILE] [--report PREFIX] [--config FILE] [--period S] [--periods N]\n"
    "           [--harmonics L] [--swing RAD] [--cutoff HZ] [--candidates N] [--seed N]\n"
    "                             drive the holding arm through a Fourier excitation around\n"
    "                             the present pose (N x S s, default 5 x 10; joints within\n"
    "                             RAD, default 0.6, of it), fit the dynamic parameters to the\n"
    "                             torques, check them on a second excitation; write the INI\n"
    "                             fragment FILE (default identified.ini) and PREFIX.txt,\n"
    "                             .dat, .gp, .png (default identify)\n"
    "  resonance JOINT [--step RAD] [--seconds S] [--fmin HZ] [--fmax HZ] [--out FILE.csv]\n"
    "                  [--plot PREFIX]\n"
    "                             step JOINT of the holding arm by RAD (default 0.05), record\n"
    "                             its tracking error for S s (default 3), estimate the\n"
    "                             dominant mode between the bands (default 1 Hz ... rate/4)\n"
    "                             and print [trajectory] shaper lines; then step back\n"
    "\n"
    "  -s, --socket SOCKET        default $ARMD_SOCKET, else " DEFAULT_SOCKET "\n"
    "                             (armd.service)\n"
    "  -a, --arm NAME             the arm of systemd instance armd@NAME:\n"
    "                             socket " INSTANCE_DIR "/NAME/armd.sock\n"
    "  --json                     print the daemon's JSON result\n"
    "  -h, --help                 this text\n"
    "\n"
    "Exit status: 0 ok, 1 the daemon refused or failed (its message is printed), 2 usage.\n";

bool opt_json;
volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The commands: a handler taking arguments, or (run == NULL) a method of the same name that
 * takes none (cmd_simple). */
static const struct {
    const char *name;
    int (*run)(armctl_conn *c, int argc, char **argv);
} commands[] = {
    {"status", cmd_status},
    {"info", cmd_info},
    {"enable", NULL},
    {"disable", NULL},
    {"hold", NULL},
    {"estop", NULL},
    {"reset", NULL},
    {"cancel", NULL},
    {"move", cmd_move},
    {"send", cmd_send},
    {"watch", cmd_watch},
    {"record", cmd_record},
    {"gains", cmd_gains},
    {"reload", NULL},
    {"wait", cmd_wait},
    {"controller", cmd_controller},
    {"collision", cmd_collision},
    {"payload", cmd_payload},
    {"identify", cmd_identify},
    {"resonance", cmd_resonance},
};

/* A systemd instance name that stays one directory below INSTANCE_DIR. */
static bool instance_name_ok(const char *name)
{
    return name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

int main(int argc, char **argv)
{
    const char *sock = getenv("ARMD_SOCKET");
    if (!sock || !sock[0]) sock = DEFAULT_SOCKET;
    const char *sock_option = NULL; /* the option that named the socket, if one did */
    char arm_sock[sizeof INSTANCE_DIR + 256 + sizeof "/armd.sock"];
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        bool is_socket = strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "--socket") == 0;
        bool is_arm = strcmp(argv[i], "-a") == 0 || strcmp(argv[i], "--arm") == 0;
        if ((is_socket || is_arm) && i + 1 < argc) {
            if (sock_option)
                return usage_error("%s: the socket is already named; give one -s SOCKET or "
                                   "--arm NAME",
                                   argv[i]);
            sock_option = argv[i++];
            if (is_socket) {
                sock = argv[i];
                continue;
            }
            if (!instance_name_ok(argv[i]) || strlen(argv[i]) > 255)
                return usage_error("--arm '%s': not an instance name (1-255 characters, no '/', "
                                   "not '.' or '..')",
                                   argv[i]);
            snprintf(arm_sock, sizeof arm_sock, INSTANCE_DIR "/%s/armd.sock", argv[i]);
            sock = arm_sock;
        } else if (strcmp(argv[i], "--json") == 0)
            opt_json = true;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else
            return usage_error("unknown option '%s'", argv[i]);
    }
    if (i >= argc) return usage_error("no command given%s", "");
    const char *cmd = argv[i++];
    /* --json may also follow the command */
    int rest_n = 0;
    char **rest = calloc((size_t)(argc - i + 1), sizeof *rest);
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            opt_json = true;
        else
            rest[rest_n++] = argv[i];
    }
    int k = 0, n_commands = (int)(sizeof commands / sizeof commands[0]);
    while (k < n_commands && strcmp(cmd, commands[k].name) != 0) k++;
    if (k == n_commands) {
        free(rest);
        return usage_error("unknown command '%s'", cmd);
    }
    struct sigaction sa = {.sa_handler = on_sigint};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    char err[512];
    armctl_conn *c = conn_open(sock, err, sizeof err);
    if (!c) {
        fprintf(stderr, "armctl: %s\n", err);
        free(rest);
        return 1;
    }
    int status;
    if (commands[k].run)
        status = commands[k].run(c, rest_n, rest);
    else if (rest_n > 0)
        status = usage_error("'%s' takes no arguments", cmd);
    else
        status = cmd_simple(c, cmd);
    conn_close(c);
    free(rest);
    return status;
}
