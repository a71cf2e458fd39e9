/* flex_dyn.c — equations of motion of the flexible arm by Kane's method on the discretised links:
 * partial velocities of every frame and body, M(x), b(x, xd), forward and inverse dynamics,
 * energy (El-Rayyes 1990 §2.5; see flex.h for where it differs from King's recursion).
 *
 * Naming key: a flex_frame holds, in the internal base B, the pose (R, p), the angular and
 * origin velocity (w, v), their derivatives at xdd = 0 (al, a; a includes the base's -g), and
 * the partial velocities Om = dw/dxd, V = dv/dxd (3 x nx, row-major: Om[r * nx + c]). A
 * subscript _b means beam axes (x_b, y_b, z_b), RC = R_Mi C turns beam axes into B. */
#include <math.h>
#include <string.h>

#include "dynamics/dyn_internal.h"
#include "dynamics/flex_internal.h"

/* out = a x b (any frame). */
static inline void cross(const double a[3], const double b[3], double out[3])
{
    const double x = a[1] * b[2] - a[2] * b[1];
    const double y = a[2] * b[0] - a[0] * b[2];
    const double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x, out[1] = y, out[2] = z;
}

/* out = R v. */
static inline void mat_vec(const double R[9], const double v[3], double out[3])
{
    const double x = R[0] * v[0] + R[1] * v[1] + R[2] * v[2];
    const double y = R[3] * v[0] + R[4] * v[1] + R[5] * v[2];
    const double z = R[6] * v[0] + R[7] * v[1] + R[8] * v[2];
    out[0] = x, out[1] = y, out[2] = z;
}

/* out = A B (3x3 row-major; out may alias A or B). */
static inline void mat_mul(const double A[9], const double B[9], double out[9])
{
    double r[9];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            r[3 * i + k] = A[3 * i] * B[k] + A[3 * i + 1] * B[3 + k] + A[3 * i + 2] * B[6 + k];
    memcpy(out, r, sizeof r);
}

/* a . b */
static inline double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* v[k], or 0 when v is NULL (no velocities: positions only). */
static inline double get(const double *v, int k)
{
    return v ? v[k] : 0.0;
}

/* 1 if the beam has any mode (its tip is a frame of its own). */
static inline int has_modes(const flex_beam *b)
{
    return b->nm[0] || b->nm[1] || b->nm[2];
}

/* Joint frame M_i from its parent frame P (NULL: the base B, accelerating at -g when grav):
 * R = R_P Rx(alpha) Rz(theta), origin p_P + R_P (p0 + disp Rx(alpha) e_z - off), off = the
 * parent beam's end when P is a deflected tip. Revolute: w = w_P + qd z; prismatic: v gains
 * qd z and a the Coriolis term 2 w_P x qd z (El-Rayyes 1990 §2.5.1, the rigid frame x').
 * Partial velocities: Om = Om_P (+ z at column i, revolute), V = V_P + Om_P x d (+ z,
 * prismatic). */
static void joint_frame(const dyn_flex_model *m, int i, const flex_frame *P, const double off[3],
                        const double *x, const double *xd, int grav, flex_frame *F)
{
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Z3[3] = {0, 0, 0};
    const int nx = m->nx;
    const dyn_form_joint *j = &m->form.joint[i];
    const int rev = j->type == DYN_REVOLUTE;
    const double q = x[i], qd = get(xd, i);
    const double th = (rev ? q : 0.0) + j->toff, disp = (rev ? 0.0 : q) + j->doff;
    const double c = cos(th), s = sin(th), ca = j->ca, sa = j->sa;
    const double Rrel[9] = {c, -s, 0.0, ca * s, ca * c, -sa, sa * s, sa * c, ca};
    const double prel[3] = {j->p0[0] - off[0], j->p0[1] - disp * sa - off[1],
                            j->p0[2] + disp * ca - off[2]};
    double gb[3] = {0, 0, 0};
    if (grav)
        for (int k = 0; k < 3; k++) gb[k] = -m->form.gravity_b[k];
    const double *RP = P ? P->R : I3, *pP = P ? P->p : Z3, *wP = P ? P->w : Z3;
    const double *vP = P ? P->v : Z3, *alP = P ? P->al : Z3, *aP = P ? P->a : gb;
    double d[3], z[3], t[3], t2[3];
    mat_mul(RP, Rrel, F->R);
    z[0] = F->R[2], z[1] = F->R[5], z[2] = F->R[8];
    mat_vec(RP, prel, d);
    const double qz[3] = {qd * z[0], qd * z[1], qd * z[2]};
    for (int k = 0; k < 3; k++) F->p[k] = pP[k] + d[k];
    cross(wP, d, t);
    for (int k = 0; k < 3; k++) F->v[k] = vP[k] + t[k] + (rev ? 0.0 : qz[k]);
    for (int k = 0; k < 3; k++) F->w[k] = wP[k] + (rev ? qz[k] : 0.0);
    cross(wP, qz, t2);
    for (int k = 0; k < 3; k++) F->al[k] = alP[k] + (rev ? t2[k] : 0.0);
    double t3[3], t4[3];
    cross(alP, d, t3);
    cross(wP, t, t4);
    for (int k = 0; k < 3; k++) F->a[k] = aP[k] + t3[k] + t4[k] + (rev ? 0.0 : 2.0 * t2[k]);
    for (int col = 0; col < nx; col++) {
        double om[3] = {0, 0, 0}, vv[3] = {0, 0, 0}, ov[3] = {0, 0, 0};
        if (P) {
            for (int r = 0; r < 3; r++) om[r] = P->Om[r * nx + col], vv[r] = P->V[r * nx + col];
            cross(om, d, ov);
        }
        const double e = col == i ? 1.0 : 0.0;
        for (int r = 0; r < 3; r++) {
            F->Om[r * nx + col] = om[r] + (rev ? e * z[r] : 0.0);
            F->V[r * nx + col] = vv[r] + ov[r] + (rev ? 0.0 : e * z[r]);
        }
    }
}

/* Rx(a), Ry(b), Rz(c) row-major. */
static void rot_xyz(double a, double b, double c, double E[9])
{
    const double ca = cos(a), sa = sin(a), cb = cos(b), sb = sin(b), cc = cos(c), sc = sin(c);
    const double Rx[9] = {1, 0, 0, 0, ca, -sa, 0, sa, ca};
    const double Ry[9] = {cb, 0, sb, 0, 1, 0, -sb, 0, cb};
    const double Rz[9] = {cc, -sc, 0, sc, cc, 0, 0, 0, 1};
    mat_mul(Rx, Ry, E);
    mat_mul(E, Rz, E);
}

/* Tip frame T_i of link i's beam (El-Rayyes 1990 eqs 2.13-2.23 with the proper rotation):
 * origin at u_b = (L, w_y(L), w_z(L)), orientation C Rx(phi_x) Ry(phi_y) Rz(phi_z) C^T in M_i
 * with phi_x = sum d_xk P_k(L), phi_y = -w_z'(L), phi_z = w_y'(L). Relative angular velocity
 * in beam axes phid_x e_x + phid_y Rx e_y + phid_z Rx Ry e_z (space form of the product). */
static void tip_frame(const dyn_flex_model *m, int i, const double *x, const double *xd,
                      const flex_frame *M, flex_frame *T)
{
    const int nx = m->nx;
    const flex_beam *b = &m->beam[i];
    if (!has_modes(b)) {
        memcpy(T->R, M->R, sizeof T->R), memcpy(T->p, M->p, sizeof T->p);
        memcpy(T->w, M->w, sizeof T->w), memcpy(T->v, M->v, sizeof T->v);
        memcpy(T->al, M->al, sizeof T->al), memcpy(T->a, M->a, sizeof T->a);
        memcpy(T->Om, M->Om, 3 * nx * sizeof(double));
        memcpy(T->V, M->V, 3 * nx * sizeof(double));
        return;
    }
    double wy = 0, wz = 0, px = 0, py = 0, pz = 0, wyd = 0, wzd = 0, pxd = 0, pyd = 0, pzd = 0;
    for (int k = 0; k < b->nm[0]; k++) {
        const int c = b->off[0] + k;
        wy += x[c] * b->DL[k], pz += x[c] * b->dDL[k];
        wyd += get(xd, c) * b->DL[k], pzd += get(xd, c) * b->dDL[k];
    }
    for (int k = 0; k < b->nm[1]; k++) {
        const int c = b->off[1] + k;
        wz += x[c] * b->DL[k], py -= x[c] * b->dDL[k];
        wzd += get(xd, c) * b->DL[k], pyd -= get(xd, c) * b->dDL[k];
    }
    for (int k = 0; k < b->nm[2]; k++) {
        const int c = b->off[2] + k;
        px += x[c] * b->PL[k], pxd += get(xd, c) * b->PL[k];
    }
    double E[9], RC[9], Ct[9];
    rot_xyz(px, py, pz, E);
    mat_mul(M->R, b->C, RC);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) Ct[3 * r + c] = b->C[3 * c + r];
    mat_mul(RC, E, T->R);
    mat_mul(T->R, Ct, T->R);
    const double ex[3] = {1, 0, 0};
    const double ey1[3] = {0, cos(px), sin(px)};
    const double ez2[3] = {sin(py), -sin(px) * cos(py), cos(px) * cos(py)};
    double wr[3], alr[3], t[3], t2[3];
    for (int k = 0; k < 3; k++) wr[k] = pxd * ex[k] + pyd * ey1[k] + pzd * ez2[k];
    const double w1[3] = {pxd, 0, 0}, w2[3] = {pyd * ey1[0], pyd * ey1[1], pyd * ey1[2]};
    const double w12[3] = {w1[0] + w2[0], w1[1] + w2[1], w1[2] + w2[2]};
    const double w3[3] = {pzd * ez2[0], pzd * ez2[1], pzd * ez2[2]};
    cross(w1, w2, t);
    cross(w12, w3, t2);
    for (int k = 0; k < 3; k++) alr[k] = t[k] + t2[k];
    const double u_b[3] = {b->L, wy, wz}, ud_b[3] = {0, wyd, wzd};
    double d[3], ud[3], wrB[3], alrB[3];
    mat_vec(RC, u_b, d);
    mat_vec(RC, ud_b, ud);
    mat_vec(RC, wr, wrB);
    mat_vec(RC, alr, alrB);
    double wd[3], wwd[3], ald[3], wud[3], wwr[3];
    cross(M->w, d, wd);
    cross(M->w, wd, wwd);
    cross(M->al, d, ald);
    cross(M->w, ud, wud);
    cross(M->w, wrB, wwr);
    for (int k = 0; k < 3; k++) {
        T->p[k] = M->p[k] + d[k];
        T->w[k] = M->w[k] + wrB[k];
        T->al[k] = M->al[k] + alrB[k] + wwr[k];
        T->v[k] = M->v[k] + wd[k] + ud[k];
        T->a[k] = M->a[k] + ald[k] + wwd[k] + 2.0 * wud[k];
    }
    for (int col = 0; col < nx; col++) {
        double om[3], vv[3], ov[3];
        for (int r = 0; r < 3; r++) om[r] = M->Om[r * nx + col], vv[r] = M->V[r * nx + col];
        cross(om, d, ov);
        double eo[3] = {0, 0, 0}, ev[3] = {0, 0, 0}; /* this beam's own mode, beam axes */
        const int ky = col - b->off[0], kz = col - b->off[1], kx = col - b->off[2];
        if (ky >= 0 && ky < b->nm[0]) {
            for (int r = 0; r < 3; r++) eo[r] = b->dDL[ky] * ez2[r];
            ev[1] = b->DL[ky];
        } else if (kz >= 0 && kz < b->nm[1]) {
            for (int r = 0; r < 3; r++) eo[r] = -b->dDL[kz] * ey1[r];
            ev[2] = b->DL[kz];
        } else if (kx >= 0 && kx < b->nm[2]) {
            eo[0] = b->PL[kx];
        }
        double eoB[3], evB[3];
        mat_vec(RC, eo, eoB);
        mat_vec(RC, ev, evB);
        for (int r = 0; r < 3; r++) {
            T->Om[r * nx + col] = om[r] + eoB[r];
            T->V[r * nx + col] = vv[r] + ov[r] + evB[r];
        }
    }
}

/* Every frame of the chain: joint frames and beam tips, base to tool. */
static void kinematics(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                       int grav)
{
    static const double Z3[3] = {0, 0, 0};
    for (int i = 0; i < m->n; i++) {
        const flex_frame *P = i ? &d->ft[i - 1] : NULL;
        const double *off = (i && has_modes(&m->beam[i - 1])) ? m->pend[i - 1] : Z3;
        joint_frame(m, i, P, off, x, xd, grav, &d->fj[i]);
        tip_frame(m, i, x, xd, &d->fj[i], &d->ft[i]);
    }
}

/* One body's share of Kane's equations: with partials (Om, V) of its reference point, mass m,
 * first moment h and inertia I about that point (both in B), and its motion at xdd = 0
 * (w, al, a), adds M_jk += V_j.(m V_k + Om_k x h) + Om_j.(h x V_k + I Om_k) and
 * b_j += V_j.F + Om_j.N with F = m a + al x h + w x (w x h), N = I al + w x I w + h x a
 * (El-Rayyes 1990 eqs 2.46-2.47 summed over the discretised link, in Kane's form). */
static void add_body(int nx, double mass, const double h[3], const double I[6], const double *Om,
                     const double *V, const double w[3], const double al[3], const double a[3],
                     double *P, double *L, double *M, double *b)
{
    if (b) {
        double F[3], N[3], t[3], t2[3], Iw[3], Ial[3];
        cross(al, h, t);
        cross(w, h, t2);
        cross(w, t2, t2);
        for (int k = 0; k < 3; k++) F[k] = mass * a[k] + t[k] + t2[k];
        Iw[0] = I[0] * w[0] + I[1] * w[1] + I[2] * w[2];
        Iw[1] = I[1] * w[0] + I[3] * w[1] + I[4] * w[2];
        Iw[2] = I[2] * w[0] + I[4] * w[1] + I[5] * w[2];
        Ial[0] = I[0] * al[0] + I[1] * al[1] + I[2] * al[2];
        Ial[1] = I[1] * al[0] + I[3] * al[1] + I[4] * al[2];
        Ial[2] = I[2] * al[0] + I[4] * al[1] + I[5] * al[2];
        cross(w, Iw, t);
        cross(h, a, t2);
        for (int k = 0; k < 3; k++) N[k] = Ial[k] + t[k] + t2[k];
        for (int c = 0; c < nx; c++)
            b[c] += V[c] * F[0] + V[nx + c] * F[1] + V[2 * nx + c] * F[2] + Om[c] * N[0] +
                    Om[nx + c] * N[1] + Om[2 * nx + c] * N[2];
    }
    if (!M) return;
    for (int c = 0; c < nx; c++) {
        const double om[3] = {Om[c], Om[nx + c], Om[2 * nx + c]};
        const double v[3] = {V[c], V[nx + c], V[2 * nx + c]};
        double oh[3], hv[3];
        cross(om, h, oh);
        cross(h, v, hv);
        P[c] = mass * v[0] + oh[0];
        P[nx + c] = mass * v[1] + oh[1];
        P[2 * nx + c] = mass * v[2] + oh[2];
        L[c] = hv[0] + I[0] * om[0] + I[1] * om[1] + I[2] * om[2];
        L[nx + c] = hv[1] + I[1] * om[0] + I[3] * om[1] + I[4] * om[2];
        L[2 * nx + c] = hv[2] + I[2] * om[0] + I[4] * om[1] + I[5] * om[2];
    }
    for (int j = 0; j < nx; j++) {
        const double vj[3] = {V[j], V[nx + j], V[2 * nx + j]};
        const double oj[3] = {Om[j], Om[nx + j], Om[2 * nx + j]};
        if (vj[0] == 0 && vj[1] == 0 && vj[2] == 0 && oj[0] == 0 && oj[1] == 0 && oj[2] == 0)
            continue;
        for (int k = 0; k < nx; k++)
            M[j * nx + k] += vj[0] * P[k] + vj[1] * P[nx + k] + vj[2] * P[2 * nx + k] +
                             oj[0] * L[k] + oj[1] * L[nx + k] + oj[2] * L[2 * nx + k];
    }
}

/* I_B = R I R^T for symmetric I (xx xy xz yy yz zz). */
static void sym_turn(const double R[9], const double I[6], double out[6])
{
    const double S[9] = {I[0], I[1], I[2], I[1], I[3], I[4], I[2], I[4], I[5]};
    double T[9], U[9], Rt[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) Rt[3 * r + c] = R[3 * c + r];
    mat_mul(R, S, T);
    mat_mul(T, Rt, U);
    out[0] = U[0], out[1] = 0.5 * (U[1] + U[3]), out[2] = 0.5 * (U[2] + U[6]);
    out[3] = U[4], out[4] = 0.5 * (U[5] + U[7]), out[5] = U[8];
}

/* Beam element g of link i as a body at its point on the deflected axis: position
 * r_b = (eta, w_y, w_z) in beam axes, its disc spinning with phid_x about x_b. Writes its
 * partials into d->Om_e, d->V_e and its motion, position (w, al, a, p) and axis u. */
static void beam_element(const dyn_flex_model *m, dyn_flex_data *d, int i, int g, const double *x,
                         const double *xd, const double RC[9], double w[3], double al[3],
                         double a[3], double p[3], double u[3])
{
    const int nx = m->nx;
    const flex_beam *b = &m->beam[i];
    const flex_frame *M = &d->fj[i];
    double wy = 0, wz = 0, wyd = 0, wzd = 0, pxd = 0;
    for (int k = 0; k < b->nm[0]; k++)
        wy += x[b->off[0] + k] * b->D[g][k], wyd += get(xd, b->off[0] + k) * b->D[g][k];
    for (int k = 0; k < b->nm[1]; k++)
        wz += x[b->off[1] + k] * b->D[g][k], wzd += get(xd, b->off[1] + k) * b->D[g][k];
    for (int k = 0; k < b->nm[2]; k++) pxd += get(xd, b->off[2] + k) * b->P[g][k];
    const double r_b[3] = {b->eta[g], wy, wz}, rd_b[3] = {0, wyd, wzd};
    double dv[3], rd[3], wd[3], wwd[3], ald[3], wrd[3], wu[3];
    mat_vec(RC, r_b, dv);
    mat_vec(RC, rd_b, rd);
    u[0] = RC[0], u[1] = RC[3], u[2] = RC[6];
    const double yB[3] = {RC[1], RC[4], RC[7]}, zB[3] = {RC[2], RC[5], RC[8]};
    cross(M->w, dv, wd);
    cross(M->w, wd, wwd);
    cross(M->al, dv, ald);
    cross(M->w, rd, wrd);
    const double su[3] = {pxd * u[0], pxd * u[1], pxd * u[2]};
    cross(M->w, su, wu);
    for (int k = 0; k < 3; k++) {
        p[k] = M->p[k] + dv[k];
        w[k] = M->w[k] + su[k];
        al[k] = M->al[k] + wu[k];
        a[k] = M->a[k] + ald[k] + wwd[k] + 2.0 * wrd[k];
    }
    for (int col = 0; col < nx; col++) {
        double om[3], vv[3], ov[3];
        for (int r = 0; r < 3; r++) om[r] = M->Om[r * nx + col], vv[r] = M->V[r * nx + col];
        cross(om, dv, ov);
        const int ky = col - b->off[0], kz = col - b->off[1], kx = col - b->off[2];
        const double cy = (ky >= 0 && ky < b->nm[0]) ? b->D[g][ky] : 0.0;
        const double cz = (kz >= 0 && kz < b->nm[1]) ? b->D[g][kz] : 0.0;
        const double cx = (kx >= 0 && kx < b->nm[2]) ? b->P[g][kx] : 0.0;
        for (int r = 0; r < 3; r++) {
            d->Om_e[r * nx + col] = om[r] + cx * u[r];
            d->V_e[r * nx + col] = vv[r] + ov[r] + cy * yB[r] + cz * zB[r];
        }
    }
}

/* Kane's equations over every body: M (if not NULL, added to) and b (if not NULL, added to). */
static void equations(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                      int grav, double *M, double *b)
{
    const int nx = m->nx;
    kinematics(m, d, x, xd, grav);
    for (int i = 0; i < m->n; i++) {
        const flex_frame *F = &d->fj[i];
        const dyn_form_joint *j = &m->form.joint[i];
        double h[3], I[6];
        mat_vec(F->R, j->h, h);
        sym_turn(F->R, j->I, I);
        add_body(nx, j->mass, h, I, F->Om, F->V, F->w, F->al, F->a, d->P_e, d->L_e, M, b);
        const flex_beam *bm = &m->beam[i];
        if (!bm->G) continue;
        double RC[9];
        mat_mul(F->R, bm->C, RC);
        for (int g = 0; g < bm->G; g++) {
            double w[3], al[3], a[3], p[3], u[3];
            beam_element(m, d, i, g, x, xd, RC, w, al, a, p, u);
            const double jw = bm->jw[g], zero[3] = {0, 0, 0};
            const double Id[6] = {jw * u[0] * u[0], jw * u[0] * u[1], jw * u[0] * u[2],
                                  jw * u[1] * u[1], jw * u[1] * u[2], jw * u[2] * u[2]};
            add_body(nx, bm->mw[g], zero, Id, d->Om_e, d->V_e, w, al, a, d->P_e, d->L_e, M, b);
        }
    }
    if (m->tip_load) { /* the payload on the deflected tip */
        const flex_frame *T = &d->ft[m->n - 1];
        double h[3], I[6];
        mat_vec(T->R, m->tip_h, h);
        sym_turn(T->R, m->tip_I, I);
        add_body(nx, m->tip_m, h, I, T->Om, T->V, T->w, T->al, T->a, d->P_e, d->L_e, M, b);
    }
}

/* M(x) [kg, kg m, kg m^2 by coordinate] from Kane's equations at zero velocity and gravity,
 * plus the joints' armature (El-Rayyes 1990 eq 2.9's H for the flexible arm). */
void dyn_flex_mass_matrix(const dyn_flex_model *m, dyn_flex_data *d, const double *x,
                          unsigned flags, double *M)
{
    const int nx = m->nx;
    memset(M, 0, sizeof(double) * nx * nx);
    equations(m, d, x, NULL, 0, M, NULL);
    if (flags & DYN_ARMATURE)
        for (int i = 0; i < m->n; i++) M[i * nx + i] += m->form.joint[i].armature;
}

/* b(x, xd) [N, N m] = the equations of motion at xdd = 0: Coriolis/centrifugal and gravity
 * (El-Rayyes 1990 eqs 2.46-2.47 with the generalised accelerations zero). */
void dyn_flex_bias(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                   unsigned flags, double *b)
{
    memset(b, 0, sizeof(double) * m->nx);
    equations(m, d, x, xd, (flags & DYN_GRAVITY) != 0, NULL, b);
}

/* K delta + D delta_dot per mode (diagonal modal stiffness and damping, eq 2.42). */
void dyn_flex_elastic(const dyn_flex_model *m, const double *x, const double *xd, double *f)
{
    memset(f, 0, sizeof(double) * m->nx);
    for (int i = 0; i < m->n; i++) {
        const flex_beam *b = &m->beam[i];
        for (int dir = 0; dir < 3; dir++)
            for (int k = 0; k < b->nm[dir]; k++) {
                const int c = b->off[dir] + k;
                f[c] = b->K[dir][k] * x[c] + b->Dm[dir][k] * get(xd, c);
            }
    }
}

/* Q = J^T w from the tool frame's partials, after kinematics(): the tool sits on the last tip
 * frame at tool_p - pend (tip axes), turned by tool_R. */
static void wrench_force(const dyn_flex_model *m, dyn_flex_data *d, const double *wrench, double *Q)
{
    const int nx = m->nx, n = m->n;
    if (!wrench) {
        memset(Q, 0, sizeof(double) * nx);
        return;
    }
    const flex_frame *T = &d->ft[n - 1];
    const int flexed = has_modes(&m->beam[n - 1]);
    double off[3], dv[3], Rt[9], f[3], mm[3];
    for (int k = 0; k < 3; k++) off[k] = m->form.tool_p[k] - (flexed ? m->pend[n - 1][k] : 0.0);
    mat_vec(T->R, off, dv);
    mat_mul(T->R, m->form.tool_R, Rt);
    mat_vec(Rt, wrench, f);
    mat_vec(Rt, wrench + 3, mm);
    for (int c = 0; c < nx; c++) {
        const double om[3] = {T->Om[c], T->Om[nx + c], T->Om[2 * nx + c]};
        double ov[3];
        cross(om, dv, ov);
        Q[c] = (T->V[c] + ov[0]) * f[0] + (T->V[nx + c] + ov[1]) * f[1] +
               (T->V[2 * nx + c] + ov[2]) * f[2] + dot(om, mm);
    }
}

/* Q = J(x)^T w for the tool wrench (frame and sign as dynamics.h), positions only. */
void dyn_flex_wrench_force(const dyn_flex_model *m, dyn_flex_data *d, const double *x,
                           const double *wrench, double *Q)
{
    kinematics(m, d, x, NULL, 0);
    wrench_force(m, d, wrench, Q);
}

/* The tool origin [m] in B after kinematics(): on the last tip frame at tool_p - pend (tip
 * axes) when the last link bends, else at tool_p in M_{n-1} (as wrench_force). */
static void tool_point(const dyn_flex_model *m, const dyn_flex_data *d, double p[3])
{
    const int n = m->n;
    const flex_frame *T = &d->ft[n - 1];
    const int flexed = has_modes(&m->beam[n - 1]);
    double off[3], dv[3];
    for (int k = 0; k < 3; k++) off[k] = m->form.tool_p[k] - (flexed ? m->pend[n - 1][k] : 0.0);
    mat_vec(T->R, off, dv);
    for (int k = 0; k < 3; k++) p[k] = T->p[k] + dv[k];
}

/* Tool-point deflection [m], base frame: the tool origin at x (El-Rayyes 1990 eqs 2.13-2.17's
 * deflected tip) minus the tool origin of the rigid arm at the same joints (modes zero). */
void dyn_flex_tool_deflection(const dyn_flex_model *m, dyn_flex_data *d, const double *x,
                              double defl[3])
{
    double pf[3], pr[3], dB[3];
    kinematics(m, d, x, NULL, 0);
    tool_point(m, d, pf);
    double *x0 = d->r1;
    memset(x0, 0, sizeof(double) * m->nx);
    memcpy(x0, x, sizeof(double) * m->n);
    kinematics(m, d, x0, NULL, 0);
    tool_point(m, d, pr);
    for (int k = 0; k < 3; k++) dB[k] = pf[k] - pr[k];
    mat_vec(m->form.base_R, dB, defl);
}

/* M, b, K delta + D delta_dot and Q in one pass (d->Mx, r1, r2, r3), armature on M. */
static void assemble(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                     const double *wrench, unsigned flags)
{
    const int nx = m->nx;
    memset(d->Mx, 0, sizeof(double) * nx * nx);
    memset(d->r1, 0, sizeof(double) * nx);
    equations(m, d, x, xd, (flags & DYN_GRAVITY) != 0, d->Mx, d->r1);
    if (flags & DYN_ARMATURE)
        for (int i = 0; i < m->n; i++) d->Mx[i * nx + i] += m->form.joint[i].armature;
    dyn_flex_elastic(m, x, xd, d->r2);
    wrench_force(m, d, wrench, d->r3);
}

/* xdd = M^-1 ((tau - friction; 0) + Q - b - K delta - D delta_dot) by Cholesky
 * (El-Rayyes 1990 eq 2.9, §4.2.1). */
int dyn_flex_forward(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                     const double *tau, const double *wrench, unsigned flags, double *xdd)
{
    const int nx = m->nx, n = m->n;
    assemble(m, d, x, xd, wrench, flags);
    double fr[DYN_MAX_DOF] = {0};
    if (flags & DYN_FRICTION) dyn_friction(m->rigid, xd, fr);
    for (int c = 0; c < nx; c++)
        xdd[c] = (c < n ? tau[c] - fr[c] : 0.0) + d->r3[c] - d->r1[c] - d->r2[c];
    return dyn_chol_solve(d->Mx, nx, nx, xdd);
}

/* Prescribed joint motion: M_dd delta_dd = Q_d - b_d - K delta - D delta_dot - M_dq qdd, then
 * tau = M_qq qdd + M_qd delta_dd + b_q - Q_q (+ armature qdd, friction). */
int dyn_flex_inverse(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                     const double *qdd, const double *wrench, unsigned flags, double *tau,
                     double *delta_dd)
{
    const int nx = m->nx, n = m->n, nd = nx - n;
    assemble(m, d, x, xd, wrench, flags & ~(unsigned)DYN_ARMATURE);
    const double *M = d->Mx;
    for (int r = 0; r < nd; r++) {
        double t = d->r3[n + r] - d->r1[n + r] - d->r2[n + r];
        for (int c = 0; c < n; c++) t -= M[(n + r) * nx + c] * qdd[c];
        delta_dd[r] = t;
    }
    for (int i = 0; i < n; i++) {
        double t = d->r1[i] - d->r3[i];
        for (int c = 0; c < n; c++) t += M[i * nx + c] * qdd[c];
        tau[i] = t;
    }
    if (nd && dyn_chol_solve(d->Mx + n * nx + n, nd, nx, delta_dd) != 0) return -1;
    for (int i = 0; i < n; i++) {
        for (int r = 0; r < nd; r++) tau[i] += M[i * nx + n + r] * delta_dd[r];
        if (flags & DYN_ARMATURE) tau[i] += m->form.joint[i].armature * qdd[i];
    }
    if (flags & DYN_FRICTION) {
        double fr[DYN_MAX_DOF];
        dyn_friction(m->rigid, xd, fr);
        for (int i = 0; i < n; i++) tau[i] += fr[i];
    }
    return 0;
}

/* Kinetic 1/2 xd^T M xd, gravitational -sum m g.p_c over rigid bodies and beam elements (model
 * gravity, El-Rayyes 1990 after eq 2.42), elastic 1/2 sum K delta^2 (eq 2.42). */
double dyn_flex_energy(const dyn_flex_model *m, dyn_flex_data *d, const double *x, const double *xd,
                       unsigned flags, double *kinetic, double *gravity, double *elastic)
{
    const int nx = m->nx;
    dyn_flex_mass_matrix(m, d, x, flags, d->Mx);
    double ke = 0.0;
    for (int j = 0; j < nx; j++) {
        double t = 0.0;
        for (int k = 0; k < nx; k++) t += d->Mx[j * nx + k] * xd[k];
        ke += 0.5 * xd[j] * t;
    }
    const double *g = m->form.gravity_b;
    double pg = 0.0;
    for (int i = 0; i < m->n; i++) {
        const flex_frame *F = &d->fj[i];
        const dyn_form_joint *j = &m->form.joint[i];
        double h[3];
        mat_vec(F->R, j->h, h);
        for (int k = 0; k < 3; k++) pg -= g[k] * (j->mass * F->p[k] + h[k]);
        const flex_beam *bm = &m->beam[i];
        if (!bm->G) continue;
        double RC[9];
        mat_mul(F->R, bm->C, RC);
        for (int e = 0; e < bm->G; e++) {
            double w[3], al[3], a[3], p[3], u[3];
            beam_element(m, d, i, e, x, NULL, RC, w, al, a, p, u);
            pg -= bm->mw[e] * dot(g, p);
        }
    }
    if (m->tip_load) {
        const flex_frame *T = &d->ft[m->n - 1];
        double h[3];
        mat_vec(T->R, m->tip_h, h);
        for (int k = 0; k < 3; k++) pg -= g[k] * (m->tip_m * T->p[k] + h[k]);
    }
    double pe = 0.0;
    for (int i = 0; i < m->n; i++) {
        const flex_beam *b = &m->beam[i];
        for (int dir = 0; dir < 3; dir++)
            for (int k = 0; k < b->nm[dir]; k++) {
                const double q = x[b->off[dir] + k];
                pe += 0.5 * b->K[dir][k] * q * q;
            }
    }
    if (kinetic) *kinetic = ke;
    if (gravity) *gravity = pg;
    if (elastic) *elastic = pe;
    return ke + pg + pe;
}
