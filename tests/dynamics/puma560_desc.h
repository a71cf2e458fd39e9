/* puma560_desc.h — the PUMA 560 with its published parameters (Armstrong, Khatib & Burdick,
 * ICRA 1986; Corke & Armstrong-Hélouvry, ICRA 1994; see puma560_desc.c) as a dynamics
 * description. */
#ifndef ARMD_TESTS_PUMA560_DESC_H
#define ARMD_TESTS_PUMA560_DESC_H

#include "dynamics/dynamics.h"

/* Fills d with the PUMA 560 (standard DH, drive train reflected to the joints, gravity -9.81 z). */
void puma560_desc(dyn_model_desc *d);

#endif
