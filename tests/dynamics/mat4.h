/* mat4.h — 4x4 homogeneous transforms for the test oracle and description converters
 * (deliberately independent of dynamics/'s internal 3x3 form). */
#ifndef ARMD_TESTS_MAT4_H
#define ARMD_TESTS_MAT4_H

typedef struct {
    double m[4][4];
} mat4;

mat4 m4_identity(void);
mat4 m4_mul(mat4 a, mat4 b);
mat4 m4_rx(double a);
mat4 m4_rz(double a);
mat4 m4_trans(double x, double y, double z);
mat4 m4_rpy(const double xyz[3], const double rpy[3]); /* Trans(xyz) Rz(y) Ry(p) Rx(r) */
void m4_to_rpy(mat4 t, double xyz[3], double rpy[3]);
mat4 m4_rot_transpose(mat4 t); /* rotation part transposed, zero translation */
/* Motion of a joint about/along the unit axis u by q, and its first/second derivative in q
 * (Rodrigues: R = E + sin K + (1 - cos) K^2). */
mat4 m4_joint(const double u[3], int prismatic, double q, int derivative);
/* Re-expresses COM and inertia (about COM, xx xy xz yy yz zz) given in frame B, in frame A,
 * where t is the pose of B in A. */
void m4_inertia_to(mat4 t, const double com[3], const double I[6], double com_out[3],
                   double I_out[6]);

#endif
