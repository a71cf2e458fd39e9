/*
 * armctl.c — command-line client for armd's socket API: prints human-readable tables (joint
 * names and units) by default and the daemon's JSON with --json; exit status 1 with the
 * daemon's message when a command fails, 2 on usage errors (before anything is sent). This
 * file: the table of commands and the usage built from it (armctl --help, COMMAND --help), the
 * options, the argument counts, and dispatch to the commands (commands.c, stream.c,
 * calibrate.c, payload.c, identify.c, resonance_cmd.c, tool.c, linear.c); output in format.c, calls
 * in request.c, the connection in client.c.
 */
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/armctl.h"

#define DEFAULT_SOCKET "/run/armd/armd.sock" /* armd.service's */
#define INSTANCE_DIR   "/run/armd"           /* armd@NAME's socket: INSTANCE_DIR/NAME/armd.sock */

/* The commands: name, synopsis (lines after "armctl [OPTIONS] "), what it does (lines),
 * argument counts (max -1: any), handler (NULL: the method of the same name, no arguments). The
 * top-level usage lists them in this order; NAME --help prints one. */
static const armctl_command commands[] = {
    {"status", "status", "state, fault, joint table, trajectory, loop timing", 0, 0, cmd_status},
    {"info", "info", "arm, joints, limits, rate, driver, controller", 0, 0, cmd_info},
    {"pose", "pose", "the tool frame in the base frame: position, quaternion, roll-pitch-yaw", 0, 0,
     cmd_pose},
    {"enable", "enable", "torque on, holding where the arm is (from disabled)", 0, 0, NULL},
    {"disable", "disable", "torque off (from any state)", 0, 0, NULL},
    {"hold", "hold", "stop a move (acceleration limits) and hold", 0, 0, NULL},
    {"estop", "estop", "emergency stop: torque off; then reset, enable", 0, 0, NULL},
    {"reset", "reset", "leave fault or estop for disabled (then enable)", 0, 0, NULL},
    {"cancel", "cancel", "stop the trajectory (acceleration limits), hold", 0, 0, NULL},
    {"move", "move Q1..Qn [--time T]", "move to a joint position [rad|m] (T [s], else from limits)",
     1, -1, cmd_move},
    {"move-linear",
     "move-linear X Y Z [--to] [--frame base|tool] [--speed V] [--acceleration A]\n"
     "[--append]",
     "move the tool along a straight line by X Y Z [m] (base\n"
     "frame, or the tool's own axes), or to the position X Y Z\n"
     "(--to); V [m/s], A [m/s^2], else [trajectory] defaults",
     3, 11, cmd_move_linear},
    {"send", "send FILE [--append]",
     "send a trajectory: FILE.json\n"
     "({\"points\": [{t, q, qd?, qdd?}]}) or FILE.csv (rows\n"
     "t,q1..qn); --append: queue it after the running one",
     1, 2, cmd_send},
    {"watch", "watch [--rate HZ]", "live table until Ctrl-C", 0, 2, cmd_watch},
    {"record", "record FILE.csv --seconds N [--rate HZ]",
     "write t, q, q_des, qd, tau, ext per joint, the tool's\n"
     "pose and wrench (and the tool's opening, speed, force),\n"
     "mono, wall for N s at\n"
     "HZ (default: the loop rate; FILE - is stdout)",
     3, 5, cmd_record},
    {"gains", "gains [kp=V] [kd=V] [ki=V]",
     "show gains, or set them (V: one number or V1,V2,..,Vn)", 0, 3, cmd_gains},
    {"impedance", "impedance [translational=V] [rotational=V] [damping=V] [guide=V,V]",
     "show the cartesian_impedance spring and damper, or set\n"
     "them (V: one number or one per axis)",
     0, 4, cmd_impedance},
    {"controller", "controller NAME",
     "switch the control law (disabled or holding):\n"
     "computed_torque | pd_gravity | gravity_comp |\n"
     "cartesian_impedance",
     1, 1, cmd_controller},
    {"reload", "reload", "reload the INI file (like SIGHUP)", 0, 0, NULL},
    {"wait", "wait done|STATE [--timeout S]",
     "wait until the trajectory is done, or the state is\n"
     "reached (disabled | holding | moving | fault |\n"
     "estop); fails on fault or estop, or after S s",
     1, 3, cmd_wait},
    {"collision", "collision calibrate FILE [--runs N] [--factor F] [--floor T]",
     "run the trajectory FILE (as for send) N times (default 3)\n"
     "with collision = detect, take each joint's largest |external\n"
     "torque|, propose collision_threshold = largest x F (default\n"
     "2), at least T (default 1 N m); needs the arm holding",
     1, -1, cmd_collision},
    {"payload",
     "payload [show]\n"
     "payload set MASS [X Y Z] [--inertia IXX IXY IXZ IYY IYZ IZZ]\n"
     "payload clear\n"
     "payload estimate [--apply] [--move-time S]",
     "show the payload the model holds at the tool; set it: kg, COM\n"
     "[m] in the tool frame, inertia [kg m^2] about the COM (until\n"
     "the next set or a restart); clear it; or estimate mass and COM\n"
     "from the torques of 8 moves around the present pose and back\n"
     "(elbow and wrist turn 0.5 rad; each move S [s], else from the\n"
     "limits; needs the arm holding; --apply sets the result)",
     0, -1, cmd_payload},
    {"identify",
     "identify [--out FILE] [--report PREFIX] [--config FILE] [--period S] [--periods N]\n"
     "         [--harmonics L] [--swing RAD] [--cutoff HZ] [--candidates N] [--seed N]",
     "drive the holding arm through a Fourier excitation around\n"
     "the present pose (N x S s, default 5 x 10; joints within\n"
     "RAD, default 0.6, of it), fit the dynamic parameters to the\n"
     "torques, check them on a second excitation; write the INI\n"
     "fragment FILE (default identified.ini) and PREFIX.txt,\n"
     ".dat, .gp, .png (default identify)",
     0, -1, cmd_identify},
    {"resonance",
     "resonance JOINT [--step RAD] [--seconds S] [--fmin HZ] [--fmax HZ] [--out FILE.csv]\n"
     "          [--plot PREFIX]",
     "step JOINT of the holding arm by RAD (default 0.05), record\n"
     "its tracking error for S s (default 3), estimate the\n"
     "dominant mode between the bands (default 1 Hz ... rate/4)\n"
     "and print [trajectory] shaper lines; then step back",
     1, -1, cmd_resonance},
    {"tool",
     "tool [status]\n"
     "tool move OPENING [--speed V]\n"
     "tool grasp WIDTH [--force N] [--speed V] [--epsilon-inner E] [--epsilon-outer E]\n"
     "tool release [--speed V]\n"
     "tool stop",
     "the gripper of the arm's [tool] section: show its opening,\n"
     "force and command; move the fingers to OPENING [m]; grasp\n"
     "an object WIDTH [m] wide with N [N] (done when they stop\n"
     "within WIDTH - E ... WIDTH + E); open them; stop them. V in\n"
     "m/s; each answers when the fingers are done, printing the\n"
     "outcome, opening [mm] and force [N]; exit status 0 for\n"
     "reached or grasped, else 1; needs the arm enabled",
     0, -1, cmd_tool},
};
#define N_COMMANDS (int)(sizeof commands / sizeof commands[0])

#define DESC_COLUMN 29 /* where the descriptions start in the usage */

static const char options_text[] =
    "Options:\n"
    "  -s, --socket SOCKET        default $ARMD_SOCKET, else " DEFAULT_SOCKET "\n"
    "                             (armd.service)\n"
    "  -a, --arm NAME             the arm of systemd instance armd@NAME:\n"
    "                             socket " INSTANCE_DIR "/NAME/armd.sock\n"
    "  --json                     print the daemon's JSON result\n"
    "  -h, --help                 this text (after COMMAND: that command's usage)\n"
    "\n"
    "Exit status: 0 ok, 1 the daemon refused or failed (its message is printed), 2 usage.\n";

/* Prints text's lines, each after indent spaces. */
static void put_indented(FILE *out, const char *text, int indent)
{
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        fprintf(out, "%*s%.*s\n", indent, "", len, line);
        line += len + (nl ? 1 : 0);
    }
}

/* One command's entry in the top-level usage: the synopsis lines, the description beside the
 * last one when it fits, else below it, at DESC_COLUMN. */
static void put_command(FILE *out, const armctl_command *k)
{
    const char *last = strrchr(k->synopsis, '\n');
    last = last ? last + 1 : k->synopsis;
    for (const char *line = k->synopsis; line < last;) {
        const char *nl = strchr(line, '\n');
        fprintf(out, "  %.*s\n", (int)(nl - line), line);
        line = nl + 1;
    }
    const char *desc = k->description;
    int width = 2 + (int)strlen(last);
    if (last == k->synopsis && width + 2 <= DESC_COLUMN) {
        const char *nl = strchr(desc, '\n');
        int len = nl ? (int)(nl - desc) : (int)strlen(desc);
        fprintf(out, "  %s%*s%.*s\n", last, DESC_COLUMN - width, "", len, desc);
        desc += len + (nl ? 1 : 0);
    } else {
        fprintf(out, "  %s\n", last);
    }
    put_indented(out, desc, DESC_COLUMN);
}

/* The top-level usage: every command of the table, then the options. */
static void put_usage(FILE *out)
{
    fputs("usage: armctl [-s SOCKET | -a NAME] [--json] COMMAND [ARGS]\n"
          "       armctl COMMAND --help\n"
          "\n"
          "Commands armd (the arm controller daemon) over its socket.\n"
          "\n"
          "Commands:\n",
          out);
    for (int k = 0; k < N_COMMANDS; k++) {
        put_command(out, &commands[k]);
    }
    fputs("\n", out);
    fputs(options_text, out);
}

/* One command's usage (NAME --help): its synopsis lines and what it does. */
static void put_command_usage(FILE *out, const armctl_command *k)
{
    const char *line = k->synopsis;
    for (bool first = true; *line; first = false) {
        const char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        fprintf(out, "%s%.*s\n", first ? "usage: armctl [OPTIONS] " : "       armctl [OPTIONS] ",
                len, line);
        line += len + (nl ? 1 : 0);
    }
    fputs("\n", out);
    put_indented(out, k->description, 2);
    fputs("\n(armctl --help: the options and the other commands)\n", out);
}

bool opt_json;
volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* 0 when n arguments suit cmd, else the usage error (exit status 2) saying how many it takes. */
static int check_count(const armctl_command *cmd, int n)
{
    if (n >= cmd->min_args && (cmd->max_args < 0 || n <= cmd->max_args)) return 0;
    char what[160];
    if (cmd->max_args == 0)
        snprintf(what, sizeof what, "%s: takes no arguments (%d given)", cmd->name, n);
    else if (n < cmd->min_args)
        snprintf(what, sizeof what, "%s: needs at least %d argument%s (%d given)", cmd->name,
                 cmd->min_args, cmd->min_args > 1 ? "s" : "", n);
    else
        snprintf(what, sizeof what, "%s: takes at most %d argument%s (%d given)", cmd->name,
                 cmd->max_args, cmd->max_args > 1 ? "s" : "", n);
    return usage_error("%s", what);
}

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
        if ((is_socket || is_arm) && i + 1 >= argc)
            return usage_error("%s needs a value (-s SOCKET, -a NAME)", argv[i]);
        if (is_socket || is_arm) {
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
            put_usage(stdout);
            return 0;
        } else
            return usage_error("unknown option '%s' (the options are -s, --socket, -a, --arm, "
                               "--json, -h, --help; then a COMMAND)",
                               argv[i]);
    }
    if (i >= argc) return usage_error("no command given%s", "");
    const char *name = argv[i++];
    const armctl_command *cmd = NULL;
    for (int k = 0; k < N_COMMANDS && !cmd; k++)
        if (strcmp(name, commands[k].name) == 0) cmd = &commands[k];
    if (!cmd) {
        fprintf(stderr, "armctl: unknown command '%s'; the commands are:", name);
        for (int k = 0; k < N_COMMANDS; k++) fprintf(stderr, " %s", commands[k].name);
        fprintf(stderr, "\n(armctl --help for usage)\n");
        return 2;
    }
    usage_command = cmd->name;
    /* --help anywhere after the command, before anything else; --json may follow it too */
    for (int k = i; k < argc; k++)
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            put_command_usage(stdout, cmd);
            return 0;
        }
    int rest_n = 0;
    char **rest = calloc((size_t)(argc - i + 1), sizeof *rest);
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            opt_json = true;
        else
            rest[rest_n++] = argv[i];
    }
    int status = check_count(cmd, rest_n);
    if (status) {
        free(rest);
        return status;
    }
    struct sigaction sa = {.sa_handler = on_sigint};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* connects at the first call: a handler's usage errors come before any connection */
    armctl_conn *c = conn_new(sock);
    status = cmd->run ? cmd->run(c, rest_n, rest) : cmd_simple(c, cmd->name);
    conn_close(c);
    free(rest);
    return status;
}
