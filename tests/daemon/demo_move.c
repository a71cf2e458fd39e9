/*
 * demo_move.c — tools/demo's trajectory (see demo_move.h).
 */
#include "tests/daemon/demo_move.h"

#include <math.h>
#include <string.h>

int demo_move(const armd_config *cfg, const double *q0, ctl_waypoint *w)
{
    static const double t[DEMO_POINTS] = {1.8, 3.6, 5.4, 7.0};
    static const double off[DEMO_POINTS][6] = {{0.5, 0.4, -0.4, 0.6, 0.5, 0.6},
                                               {-0.4, 0.7, -0.8, -0.5, -0.4, -0.5},
                                               {0.3, 0.2, -0.2, 0.4, 0.6, 0.3},
                                               {0, 0, 0, 0, 0, 0}};
    for (int k = 0; k < DEMO_POINTS; k++) {
        memset(&w[k], 0, sizeof w[k]);
        w[k].t = t[k];
        for (int j = 0; j < cfg->n_joints; j++) {
            double lo = cfg->joint[j].lower, hi = cfg->joint[j].upper;
            double span = hi - lo;
            lo += 0.1 * span, hi -= 0.1 * span;
            double q = q0[j] + off[k][j % 6];
            if (!(q >= lo && q <= hi)) q = q0[j] - off[k][j % 6];
            w[k].q[j] = fmin(fmax(q, lo), hi);
        }
    }
    return DEMO_POINTS;
}
