/*
 * retract.c — the executed path and the way back along it (see retract.h). Control thread
 * only; no allocation.
 */
#include "daemon/loop/retract.h"

#include <math.h>
#include <string.h>

#define RETRACT_MIN        1e-3 /* shorter recorded path: nothing to go back along [rad|m] */
#define RETRACT_LIMIT_PART 0.25 /* the share of the lowest joint limits the move back uses */
#define RETRACT_V_DEFAULT  0.25 /* [rad/s] and ... */
#define RETRACT_A_DEFAULT  1.0  /* ... [rad/s^2] when no joint has a limit */

/* The joint-space distance between a and b (n joints) [rad|m]. */
static double distance(const double *a, const double *b, int n)
{
    double s = 0;
    for (int j = 0; j < n; j++) s += (a[j] - b[j]) * (a[j] - b[j]);
    return sqrt(s);
}

void retract_clear(retract *b, int n)
{
    b->n = n;
    b->head = b->count = 0;
    b->n_back = 0;
}

void retract_record(retract *b, const double *q, double distance_back)
{
    if (b->count > 0) {
        const double *last = b->path[(b->head + RETRACT_POINTS - 1) % RETRACT_POINTS];
        if (!(distance(q, last, b->n) >= distance_back / RETRACT_SPACING)) return;
    }
    memcpy(b->path[b->head], q, sizeof(double) * (size_t)b->n);
    b->head = (b->head + 1) % RETRACT_POINTS;
    if (b->count < RETRACT_POINTS) b->count++;
}

/* The lowest positive limit among v[0..n) times RETRACT_LIMIT_PART, or fallback. */
static double lowest_share(const double *v, int n, double fallback)
{
    double m = INFINITY;
    for (int j = 0; j < n; j++)
        if (v[j] > 0 && v[j] < m) m = v[j];
    return isfinite(m) ? RETRACT_LIMIT_PART * m : fallback;
}

/* Builds the way back from q: the recorded points newest first, the last one cut where the
 * length reaches distance_back. The points passed are taken off the ring (a second retract
 * goes on further back, never forward again). */
static void build_way_back(retract *b, const double *q, double distance_back)
{
    int n = b->n;
    memcpy(b->back[0], q, sizeof(double) * (size_t)n);
    b->s[0] = 0;
    int k = 1, used = 0;
    for (int i = 0; i < b->count && b->s[k - 1] < distance_back; i++) {
        const double *pt = b->path[(b->head + RETRACT_POINTS - 1 - i) % RETRACT_POINTS];
        double d = distance(pt, b->back[k - 1], n);
        if (d <= 0) {
            used = i + 1;
            continue;
        }
        double part = fmin(1, (distance_back - b->s[k - 1]) / d);
        for (int j = 0; j < n; j++)
            b->back[k][j] = b->back[k - 1][j] + part * (pt[j] - b->back[k - 1][j]);
        b->s[k] = b->s[k - 1] + part * d;
        k++;
        if (part >= 1) used = i + 1; /* a point cut short stays on the ring: it lies further back */
    }
    b->n_back = k;
    b->count -= used;
    b->head = (b->head + RETRACT_POINTS - used) % RETRACT_POINTS;
    b->length = b->s[k - 1];
}

bool retract_plan(retract *b, const law_params *p, const double *q)
{
    build_way_back(b, q, p->safety.collision_retract);
    if (!(b->length >= RETRACT_MIN)) return false;
    /* |dq_j/ds| <= 1 along the path: no joint goes faster than the path speed */
    b->v = lowest_share(p->velocity, b->n, RETRACT_V_DEFAULT);
    b->a = lowest_share(p->acceleration, b->n, RETRACT_A_DEFAULT);
    b->t = 0;
    b->seg = 0;
    return true;
}

/* Length s [rad|m], speed sd and acceleration sdd along a path of length L at time t [s] of a
 * trapezoidal profile with speed limit v and acceleration a (a triangle when L < v^2 / a);
 * false once t is past its end. */
static bool trapezoid(double L, double v, double a, double t, double *s, double *sd, double *sdd)
{
    double ta = v / a, vp = v;
    if (L < v * ta) ta = sqrt(L / a), vp = a * ta;
    double tc = (L - vp * ta) / vp, end = 2 * ta + tc;
    if (t >= end) return false;
    if (t < ta) {
        *s = 0.5 * a * t * t, *sd = a * t, *sdd = a;
    } else if (t < ta + tc) {
        *s = 0.5 * a * ta * ta + vp * (t - ta), *sd = vp, *sdd = 0;
    } else {
        double left = end - t;
        *s = L - 0.5 * a * left * left, *sd = a * left, *sdd = -a;
    }
    return true;
}

bool retract_sample(retract *b, double dt, double *q, double *qd, double *qdd)
{
    b->t += dt;
    double s, sd, sdd;
    if (!trapezoid(b->length, b->v, b->a, b->t, &s, &sd, &sdd)) return false;
    while (b->seg < b->n_back - 2 && s > b->s[b->seg + 1]) b->seg++;
    const double *a = b->back[b->seg], *z = b->back[b->seg + 1];
    double len = b->s[b->seg + 1] - b->s[b->seg];
    for (int j = 0; j < b->n; j++) {
        double u = (z[j] - a[j]) / len; /* the unit direction's component */
        q[j] = a[j] + u * (s - b->s[b->seg]);
        qd[j] = u * sd;
        qdd[j] = u * sdd;
    }
    return true;
}

const double *retract_end(const retract *b)
{
    return b->back[b->n_back - 1];
}
