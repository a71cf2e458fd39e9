/* puma560_desc.c — builds the PUMA 560 description from its published parameters (B. Armstrong,
 * O. Khatib, J. Burdick, "The explicit dynamic model and inertial parameters of the PUMA 560
 * arm", ICRA 1986, as consolidated by P. Corke, B. Armstrong-Hélouvry, "A search for consensus
 * among model parameters reported for the PUMA 560 robot", ICRA 1994; the numbers of Corke's
 * Robotics Toolbox, models/mdl_puma560.m): standard DH, armature G^2 Jm, viscous G^2 B,
 * Coulomb |G| Tc. */
#include <math.h>
#include <string.h>

#include "tests/dynamics/puma560_desc.h"

void puma560_desc(dyn_model_desc *d)
{
    static const double a[6] = {0, 0.4318, 0.0203, 0, 0, 0};
    static const double alpha[6] = {M_PI / 2, 0, -M_PI / 2, M_PI / 2, -M_PI / 2, 0};
    static const double dd[6] = {0, 0, 0.15005, 0.4318, 0, 0};
    static const double mass[6] = {0, 17.4, 4.8, 0.82, 0.34, 0.09};
    static const double com[6][3] = {
        {0, 0, 0},    {-0.3638, 0.006, 0.2275}, {-0.0203, -0.0141, 0.070}, {0, 0.019, 0}, {0, 0, 0},
        {0, 0, 0.032}};
    static const double Id[6][3] = {{0, 0.35, 0},
                                    {0.13, 0.524, 0.539},
                                    {0.066, 0.086, 0.0125},
                                    {1.8e-3, 1.3e-3, 1.8e-3},
                                    {0.3e-3, 0.4e-3, 0.3e-3},
                                    {0.15e-3, 0.15e-3, 0.04e-3}};
    static const double Jm[6] = {200e-6, 200e-6, 200e-6, 33e-6, 33e-6, 33e-6};
    static const double G[6] = {-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686};
    static const double B[6] = {1.48e-3, 0.817e-3, 1.38e-3, 71.2e-6, 82.6e-6, 36.7e-6};
    static const double Tcp[6] = {0.395, 0.126, 0.132, 11.2e-3, 9.26e-3, 3.96e-3};
    static const double Tcn[6] = {-0.435, -0.071, -0.105, -16.9e-3, -14.5e-3, -10.5e-3};
    memset(d, 0, sizeof *d);
    d->n = 6;
    for (int i = 0; i < 6; i++) {
        dyn_joint_desc *j = &d->joint[i];
        j->type = DYN_REVOLUTE;
        j->form = DYN_DH_STANDARD;
        j->a = a[i];
        j->alpha = alpha[i];
        j->d = dd[i];
        j->mass = mass[i];
        memcpy(j->com, com[i], sizeof j->com);
        j->inertia[0] = Id[i][0];
        j->inertia[3] = Id[i][1];
        j->inertia[5] = Id[i][2];
        j->armature = G[i] * G[i] * Jm[i];
        j->viscous = G[i] * G[i] * B[i];
        j->coulomb_pos = fabs(G[i]) * Tcp[i];
        j->coulomb_neg = fabs(G[i]) * Tcn[i];
    }
    d->gravity[2] = -9.81;
}
