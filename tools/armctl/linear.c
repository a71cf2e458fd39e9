/*
 * linear.c — armctl move-linear: a straight line of the tool (move_linear, armd-api(7)) by an
 * offset from where it is, in the base frame or the tool's own axes, or to a position (--to).
 */
#include <string.h>

#include "tools/armctl/armctl.h"

/* move-linear X Y Z [--to] [--frame base|tool] [--speed V] [--acceleration A] [--append]. */
int cmd_move_linear(armctl_conn *c, int argc, char **argv)
{
    double xyz[3], v = 0, a = 0;
    int nxyz = 0;
    bool to = false, append = false;
    const char *frame = NULL;
    for (int i = 0; i < argc; i++) {
        double x;
        if (strcmp(argv[i], "--to") == 0) {
            to = true;
        } else if (strcmp(argv[i], "--append") == 0) {
            append = true;
        } else if (strcmp(argv[i], "--frame") == 0) {
            if (i + 1 >= argc || (strcmp(argv[i + 1], "base") && strcmp(argv[i + 1], "tool")))
                return usage_error("move-linear: --frame takes base or tool%s", "");
            frame = argv[++i];
        } else if (strcmp(argv[i], "--speed") == 0 || strcmp(argv[i], "--acceleration") == 0) {
            if (i + 1 >= argc || !parse_double(argv[i + 1], &x) || !(x > 0))
                return usage_error("move-linear: %s needs a number above 0", argv[i]);
            *(argv[i][2] == 's' ? &v : &a) = x;
            i++;
        } else if (parse_double(argv[i], &x) && nxyz < 3) {
            xyz[nxyz++] = x;
        } else {
            return usage_error("move-linear: '%s': expected X Y Z [m] and options", argv[i]);
        }
    }
    if (nxyz != 3) return usage_error("move-linear: needs X Y Z [m]%s", "");
    if (to && frame && strcmp(frame, "tool") == 0)
        return usage_error("move-linear: --to is a position in the base frame%s", "");
    json_t *p = json_pack("{s:[f,f,f]}", to ? "position" : "offset", xyz[0], xyz[1], xyz[2]);
    if (frame) json_object_set_new(p, "frame", json_string(frame));
    if (v > 0) json_object_set_new(p, "speed", json_real(v));
    if (a > 0) json_object_set_new(p, "acceleration", json_real(a));
    if (append) json_object_set_new(p, "mode", json_string("append"));
    json_t *r = call(c, "move_linear", p);
    return r ? print_result(NULL, r, print_trajectory) : 1;
}
