/* kdl_compare — the PUMA 560 inverse dynamics of armd's dyn_rnea against Orocos KDL's
 * ChainIdSolver_RNE, built from the same dyn_model_desc: (a) cross-check of the torques at 1000
 * random (q, qd, qdd), exit 1 if the max relative error reaches 1e-9; (b) cross-check of the
 * tool pose of dyn_fk against KDL's ChainFkSolverPos_recursive on the PUMA 560 with a tool frame
 * (a last fixed segment), at 1000 random q, exit 1 if a position (m) or rotation-matrix entry
 * differs by 1e-12 or more; (c) ns per call of the inverse dynamics (median of repetitions, as
 * armbench). "--check" runs only (a) and (b). KDL has no armature or friction, so (a) compares
 * against dyn_rnea(..., DYN_GRAVITY, ...). */
#include <kdl/chain.hpp>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/frames.hpp>
#include <kdl/jntarray.hpp>
#include <kdl/rigidbodyinertia.hpp>
#include <kdl/rotationalinertia.hpp>
#include <kdl/segment.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>

extern "C" {
#include "dynamics/dynamics.h"
#include "tests/dynamics/puma560_desc.h"
}

namespace
{

constexpr int kSamples = 1000;
constexpr double kTolerance = 1e-9;
constexpr double kFkTolerance = 1e-12; /* m, and rotation-matrix entries */
constexpr int kPositions = 8;          /* q cycled per timed call so no result is reused */

volatile double sink;

/* Monotonic time [ns]. */
double now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

/* The chain of a standard-DH, revolute-only description as a KDL::Chain: segment i is a
 * rotation about the joint's z (the z of DH frame i-1), then Frame::DH(a, alpha, d, theta) =
 * Rz(theta) Tz(d) Tx(a) Rx(alpha) to its tip, which is DH frame i. KDL expresses a segment's
 * inertia in its tip frame, about the tip origin; RigidBodyInertia(m, c, Ic) takes the COM c
 * (tip frame) and the rotational inertia about the COM and shifts it (parallel axis), exactly
 * what the description holds (COM and inertia about the COM in link frame i). Returns false if
 * the description has another joint type or form, or a payload (KDL would need it on an extra
 * segment; without one the tool frame changes no torque, so the chain ends at link frame n and
 * fk_chain_from_desc adds the tool). */
bool chain_from_desc(const dyn_model_desc &desc, KDL::Chain &chain)
{
    if (desc.payload.mass != 0) return false;
    for (int i = 0; i < desc.n; i++) {
        const dyn_joint_desc &j = desc.joint[i];
        if (j.type != DYN_REVOLUTE || j.form != DYN_DH_STANDARD) return false;
        const double *I = j.inertia; /* ixx ixy ixz iyy iyz izz */
        KDL::RotationalInertia Ic(I[0], I[3], I[5], I[1], I[2], I[4]);
        KDL::RigidBodyInertia rbi(j.mass, KDL::Vector(j.com[0], j.com[1], j.com[2]), Ic);
        chain.addSegment(KDL::Segment(KDL::Joint(KDL::Joint::RotZ),
                                      KDL::Frame::DH(j.a, j.alpha, j.d, j.theta), rbi));
    }
    return true;
}

/* The same chain plus a last fixed segment from link frame n to the tool frame: tool_xyz, then
 * tool_rpy as fixed-axis roll-pitch-yaw (KDL's Rotation::RPY(r, p, y) = Rz(y) Ry(p) Rx(r), as
 * dynamics.h's URDF convention). For the FK cross-check. */
bool fk_chain_from_desc(const dyn_model_desc &desc, KDL::Chain &chain)
{
    dyn_model_desc bare = desc;
    bare.payload.mass = 0; /* the payload changes no pose */
    if (!chain_from_desc(bare, chain)) return false;
    const double *r = desc.tool_rpy, *p = desc.tool_xyz;
    chain.addSegment(
        KDL::Segment(KDL::Joint(KDL::Joint::None), KDL::Frame(KDL::Rotation::RPY(r[0], r[1], r[2]),
                                                              KDL::Vector(p[0], p[1], p[2]))));
    return true;
}

/* Max over kSamples random q in [-pi, pi) of |p_kdl - p_armd| (m, per coordinate) and of the
 * rotation-matrix entries' differences, tool frame; false if KDL fails. */
bool fk_check(const dyn_model *m, dyn_data *d, const KDL::Chain &chain, int n, double &pos,
              double &rot)
{
    std::mt19937_64 rng(2025);
    std::uniform_real_distribution<double> ang(-M_PI, M_PI);
    KDL::ChainFkSolverPos_recursive fk(chain);
    KDL::JntArray kq(n);
    std::vector<double> q(static_cast<size_t>(n));
    pos = rot = 0;
    for (int s = 0; s < kSamples; s++) {
        for (int i = 0; i < n; i++) kq(i) = q[static_cast<size_t>(i)] = ang(rng);
        KDL::Frame f;
        if (fk.JntToCart(kq, f) < 0) return false;
        double T[12];
        dyn_fk(m, d, q.data(), nullptr, T);
        for (int i = 0; i < 3; i++) {
            pos = std::max(pos, std::fabs(f.p(i) - T[4 * i + 3]));
            for (int j = 0; j < 3; j++) rot = std::max(rot, std::fabs(f.M(i, j) - T[4 * i + j]));
        }
    }
    return true;
}

/* Random joint inputs [rad, rad/s, rad/s^2], kPositions positions and one qd, qdd. */
struct Inputs {
    std::vector<double> q[kPositions], qd, qdd;
    KDL::JntArray kq[kPositions], kqd, kqdd;
};

void fill_inputs(Inputs &in, int n, std::mt19937_64 &rng)
{
    std::uniform_real_distribution<double> pos(-M_PI, M_PI), vel(-3, 3), acc(-10, 10);
    in.qd.assign(n, 0);
    in.qdd.assign(n, 0);
    in.kqd.resize(n);
    in.kqdd.resize(n);
    for (int k = 0; k < kPositions; k++) {
        in.q[k].assign(n, 0);
        in.kq[k].resize(n);
        for (int i = 0; i < n; i++) in.kq[k](i) = in.q[k][i] = pos(rng);
    }
    for (int i = 0; i < n; i++) {
        in.kqd(i) = in.qd[i] = vel(rng);
        in.kqdd(i) = in.qdd[i] = acc(rng);
    }
}

/* Max over kSamples random states of |tau_kdl - tau_armd|_inf / max(|tau_armd|_inf, 1 N m)
 * (norm-wise relative error; the floor keeps near-zero torque vectors from dividing by ~0).
 * Returns -1 if KDL fails. */
double cross_check(const dyn_model *m, dyn_data *d, KDL::ChainIdSolver_RNE &kdl, int n)
{
    std::mt19937_64 rng(2024);
    Inputs in;
    KDL::Wrenches fext(static_cast<size_t>(n), KDL::Wrench::Zero());
    KDL::JntArray ktau(n);
    double tau[DYN_MAX_DOF], worst = 0;
    for (int s = 0; s < kSamples; s++) {
        fill_inputs(in, n, rng);
        dyn_rnea(m, d, in.q[0].data(), in.qd.data(), in.qdd.data(), nullptr, DYN_GRAVITY, tau);
        if (kdl.CartToJnt(in.kq[0], in.kqd, in.kqdd, fext, ktau) < 0) return -1;
        double diff = 0, norm = 0;
        for (int i = 0; i < n; i++) {
            diff = std::max(diff, std::fabs(ktau(i) - tau[i]));
            norm = std::max(norm, std::fabs(tau[i]));
        }
        worst = std::max(worst, diff / std::max(norm, 1.0));
    }
    return worst;
}

/* Median over reps of (time of iters calls of f)/iters [ns]; f(it) makes call number it. */
template <class F> double median_ns(F f, int reps, int iters)
{
    std::vector<double> t(static_cast<size_t>(reps));
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (int it = 0; it < iters; it++) f(it);
        t[static_cast<size_t>(r)] = (now_ns() - t0) / iters;
    }
    std::sort(t.begin(), t.end());
    return t[static_cast<size_t>(reps / 2)];
}

/* ns per call of f: a rough estimate sizes repetitions of ~20 us, then the median of reps. */
template <class F> double bench(F f, int reps)
{
    double est = median_ns(f, 1, 100);
    int iters = static_cast<int>(2e4 / std::max(est, 1.0)) + 1;
    return median_ns(f, reps, iters);
}

} // namespace

int main(int argc, char **argv)
{
    bool check_only = argc == 2 && std::strcmp(argv[1], "--check") == 0;
    if (argc > 2 || (argc == 2 && !check_only)) {
        std::fprintf(stderr, "usage: kdl_compare [--check]\n");
        return 2;
    }
    dyn_model_desc desc;
    puma560_desc(&desc);
    dyn_model *m = dyn_model_create(&desc, nullptr, nullptr);
    dyn_data *d = m ? dyn_data_create(m) : nullptr;
    KDL::Chain chain;
    if (!d || !chain_from_desc(desc, chain)) {
        std::fprintf(stderr, "kdl_compare: could not build the PUMA 560 for armd and KDL\n");
        return 1;
    }
    const int n = desc.n;
    KDL::ChainIdSolver_RNE kdl(chain,
                               KDL::Vector(desc.gravity[0], desc.gravity[1], desc.gravity[2]));

    double err = cross_check(m, d, kdl, n);
    bool ok = err >= 0 && err < kTolerance;
    std::printf("kdl_compare: PUMA 560 inverse dynamics, armd dyn_rnea (gravity, no armature or "
                "friction) vs KDL ChainIdSolver_RNE\n");
    std::printf("cross-check at %d random (q, qd, qdd): max relative error %.3g (limit %.0e) %s\n",
                kSamples, err, kTolerance, ok ? "ok" : "FAIL");

    /* FK with a tool frame (offset and a turn about every axis) on its own chain */
    dyn_model_desc tdesc = desc;
    tdesc.tool_xyz[0] = 0.01;
    tdesc.tool_xyz[2] = 0.05;
    tdesc.tool_rpy[0] = 0.1;
    tdesc.tool_rpy[1] = -0.2;
    tdesc.tool_rpy[2] = 0.3;
    dyn_model *tm = dyn_model_create(&tdesc, nullptr, nullptr);
    dyn_data *td = tm ? dyn_data_create(tm) : nullptr;
    KDL::Chain tchain;
    double fk_pos = -1, fk_rot = -1;
    bool fk_ok = td && fk_chain_from_desc(tdesc, tchain) &&
                 fk_check(tm, td, tchain, n, fk_pos, fk_rot) && fk_pos < kFkTolerance &&
                 fk_rot < kFkTolerance;
    std::printf("tool pose at %d random q, armd dyn_fk vs KDL ChainFkSolverPos_recursive (tool "
                "xyz %g %g %g, rpy %g %g %g): max position difference %.3g m, max rotation "
                "entry difference %.3g (limit %.0e) %s\n",
                kSamples, tdesc.tool_xyz[0], tdesc.tool_xyz[1], tdesc.tool_xyz[2],
                tdesc.tool_rpy[0], tdesc.tool_rpy[1], tdesc.tool_rpy[2], fk_pos, fk_rot,
                kFkTolerance, fk_ok ? "ok" : "FAIL");
    dyn_data_free(td);
    dyn_model_free(tm);
    ok = ok && fk_ok;
    if (!ok || check_only) {
        dyn_data_free(d);
        dyn_model_free(m);
        return ok ? 0 : 1;
    }

    const int reps = 201;
    std::mt19937_64 rng(7);
    Inputs in;
    fill_inputs(in, n, rng);
    KDL::Wrenches fext(static_cast<size_t>(n), KDL::Wrench::Zero());
    KDL::JntArray ktau(n);
    double tau[DYN_MAX_DOF];
    double t_kdl = bench(
        [&](int it) {
            kdl.CartToJnt(in.kq[it & 7], in.kqd, in.kqdd, fext, ktau);
            sink = sink + ktau(0);
        },
        reps);
    double t_grav = bench(
        [&](int it) {
            dyn_rnea(m, d, in.q[it & 7].data(), in.qd.data(), in.qdd.data(), nullptr, DYN_GRAVITY,
                     tau);
            sink = sink + tau[0];
        },
        reps);
    double t_all = bench(
        [&](int it) {
            dyn_rnea(m, d, in.q[it & 7].data(), in.qd.data(), in.qdd.data(), nullptr, DYN_ALL, tau);
            sink = sink + tau[0];
        },
        reps);
    std::printf("\nns per call, median of %d repetitions\n", reps);
    std::printf("%-44s %8.0f\n", "KDL ChainIdSolver_RNE::CartToJnt", t_kdl);
    std::printf("%-44s %8.0f\n", "armd dyn_rnea, DYN_GRAVITY (same physics)", t_grav);
    std::printf("%-44s %8.0f\n", "armd dyn_rnea, DYN_ALL (+armature, friction)", t_all);
    std::printf("%-44s %8.1f\n", "KDL / armd (DYN_GRAVITY)", t_kdl / t_grav);
    dyn_data_free(d);
    dyn_model_free(m);
    return 0;
}
