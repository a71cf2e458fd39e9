/* kdl_compare — the PUMA 560 inverse dynamics of armd's dyn_rnea against Orocos KDL's
 * ChainIdSolver_RNE, built from the same dyn_model_desc: (a) cross-check of the torques at 1000
 * random (q, qd, qdd), exit 1 if the max relative error reaches 1e-9; (b) ns per call of each
 * (median of repetitions, as armbench). "--check" runs only (a). KDL has no armature or
 * friction, so the cross-check compares against dyn_rnea(..., DYN_GRAVITY, ...). */
#include <kdl/chain.hpp>
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
constexpr int kPositions = 8; /* q cycled per timed call so no result is reused */

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
 * the description has another joint type or form, or a payload/tool KDL would need extra
 * segments for. */
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
