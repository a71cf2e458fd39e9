/* flex_pendulum_plot.c — writes the data and a gnuplot script for the figure of El-Rayyes 1990
 * case 3 (figures 4.14-4.17): joint angles of the double compound pendulum with flexible links,
 * EI = 10.178 and 101.78 N m^2, against the rigid model, and the links' tip deflections.
 * Not a test (no test depends on gnuplot):
 *     flex_pendulum_plot [DIR]      writes DIR/flex_pendulum.dat and DIR/flex_pendulum.gp
 *     gnuplot DIR/flex_pendulum.gp  makes DIR/flex_pendulum.png */
#include <stdio.h>
#include <stdlib.h>

#include "tests/dynamics/flex_pendulum.h"

#define STEPS 10000 /* 2 s */
#define H     2e-4
#define EVERY 10 /* rows: every 2 ms */

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    static const double EI[3] = {0.0, 10.178, 101.78}; /* rigid, (a), (b) */
    double *q[3], *tip[3];
    for (int r = 0; r < 3; r++) {
        q[r] = malloc(sizeof(double) * 2 * STEPS);
        tip[r] = malloc(sizeof(double) * 2 * STEPS);
        if (!q[r] || !tip[r] || flex_pendulum_run(EI[r], STEPS, H, q[r], tip[r]) != 0) {
            fprintf(stderr, "flex_pendulum_plot: the simulation with EI = %g failed\n", EI[r]);
            return 1;
        }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/flex_pendulum.dat", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f,
            "# El-Rayyes 1990 case 3, tip mass %g kg, %d modes per link, RK4 %g s\n"
            "# t q1_rigid q2_rigid q1_EI10 q2_EI10 q1_EI100 q2_EI100 "
            "w1_EI10 w2_EI10 w1_EI100 w2_EI100 [s rad m]\n",
            FP_TIP_MASS, FP_MODES, H);
    for (int k = EVERY - 1; k < STEPS; k += EVERY)
        fprintf(f, "%.4f %.9g %.9g %.9g %.9g %.9g %.9g %.6e %.6e %.6e %.6e\n", (k + 1) * H,
                q[0][2 * k], q[0][2 * k + 1], q[1][2 * k], q[1][2 * k + 1], q[2][2 * k],
                q[2][2 * k + 1], tip[1][2 * k], tip[1][2 * k + 1], tip[2][2 * k],
                tip[2][2 * k + 1]);
    fclose(f);
    snprintf(path, sizeof path, "%s/flex_pendulum.gp", dir);
    f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f,
            "set terminal pngcairo size 1000,900\n"
            "set output '%s/flex_pendulum.png'\n"
            "set multiplot layout 3,1 title 'Double compound pendulum with flexible links "
            "(El-Rayyes 1990 case 3)'\n"
            "set xlabel 't [s]'\n"
            "d = '%s/flex_pendulum.dat'\n"
            "set ylabel 'q1 [rad]'\n"
            "plot d u 1:4 w l t 'a) EI = 10.178', d u 1:6 w l t 'b) EI = 101.78', "
            "d u 1:2 w l dt 2 t 'c) rigid'\n"
            "set ylabel 'q2 [rad]'\n"
            "plot d u 1:5 w l t 'a) EI = 10.178', d u 1:7 w l t 'b) EI = 101.78', "
            "d u 1:3 w l dt 2 t 'c) rigid'\n"
            "set ylabel 'tip deflection [m]'\n"
            "plot d u 1:8 w l t 'link 1, EI = 10.178', d u 1:9 w l t 'link 2, EI = 10.178', "
            "d u 1:10 w l t 'link 1, EI = 101.78', d u 1:11 w l t 'link 2, EI = 101.78'\n"
            "unset multiplot\n",
            dir, dir);
    fclose(f);
    for (int r = 0; r < 3; r++) free(q[r]), free(tip[r]);
    printf("wrote %s/flex_pendulum.dat and %s/flex_pendulum.gp (gnuplot %s/flex_pendulum.gp)\n",
           dir, dir, dir);
    return 0;
}
