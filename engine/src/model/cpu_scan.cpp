#include "model/cpu_scan.h"

#include <algorithm>
#include <vector>

#include "model/cpu_math.h"

// Mamba's selective scan over raw buffers. Each (batch item, channel) row is an independent
// recurrence over T steps of an N-wide state; the loops over the state are the vectorised ones
// (N = 16 is two AVX2 registers), so exp is the branch-free polynomial of cpu_math.h, not libm's
// (which would keep the loop scalar: it was ~70 % of a quick Mamba step). Each call computes one
// slice of the batch items on the calling thread; the callers run the slices side by side.

namespace lengen::engine::model::kernels {

using detail::expApprox;

namespace {

LENGEN_CLONES
void forwardRows(const ScanShape& s, const ScanInputs& in, float* y, std::int64_t b0,
                 std::int64_t b1)
{
    const int n = s.n, ld = s.bcStride();
    std::vector<float> state(static_cast<size_t>(n));
    float* st = state.data();
    for (std::int64_t b = b0; b < b1; ++b)
        for (int c = 0; c < s.e; ++c) {
            std::fill(st, st + n, 0.f);
            const float* A = in.A + static_cast<std::int64_t>(c) * n;
            for (int t = 0; t < s.t; ++t) {
                const std::int64_t bt = b * s.t + t, i = bt * s.e + c;
                const float dt = in.delta[i], vt = in.v[i];
                const float* Bt = in.B + bt * ld;
                const float* Ct = in.C + bt * ld;
                float out = 0.f;
#pragma omp simd reduction(+ : out)
                for (int k = 0; k < n; ++k) {
                    st[k] = expApprox(dt * A[k]) * st[k] + dt * Bt[k] * vt;
                    out += st[k] * Ct[k];
                }
                y[i] = out + in.D[c] * vt;
            }
        }
}

// Reverse mode for batch items [b0, b1): dv, ddelta written; dB, dC written (their rows belong
// to these items only); dA [E, N] and dD [E] accumulated into this part's buffers.
LENGEN_CLONES
void backwardRows(const ScanShape& s, const ScanInputs& in, const float* gy, const ScanGrads& g,
                  float* dA, float* dD, std::int64_t b0, std::int64_t b1)
{
    const int n = s.n, ld = s.bcStride();
    const auto tn = static_cast<size_t>(s.t) * static_cast<size_t>(n);
    std::vector<float> buf(2 * tn + 2 * static_cast<size_t>(n));
    float* states = buf.data();   // s_t, [T, N], for one row
    float* decays = states + tn;  // exp(dt_t A), [T, N]
    float* gs = decays + tn;      // dL/ds_t carried backwards, [N]
    // s_{-1} = 0 as a row of zeros, not a null pointer tested in the loop: the vectoriser made
    // that test a masked load from address 0, which QEMU's AVX2 (the tests' v3 clone) faults on.
    const float* zeros = gs + n;
    for (std::int64_t b = b0; b < b1; ++b) {
        for (std::int64_t bt = b * s.t; bt < (b + 1) * s.t; ++bt) {
            std::fill(g.B + bt * ld, g.B + bt * ld + n, 0.f);
            std::fill(g.C + bt * ld, g.C + bt * ld + n, 0.f);
        }
        for (int c = 0; c < s.e; ++c) {
            const float* A = in.A + static_cast<std::int64_t>(c) * n;
            for (int t = 0; t < s.t; ++t) {  // recompute this row's states
                const std::int64_t bt = b * s.t + t, i = bt * s.e + c;
                const float dt = in.delta[i], vt = in.v[i];
                const float* Bt = in.B + bt * ld;
                float* cur = states + static_cast<size_t>(t) * n;
                float* dec = decays + static_cast<size_t>(t) * n;
                const float* prev = t > 0 ? cur - n : zeros;
#pragma omp simd
                for (int k = 0; k < n; ++k) {
                    dec[k] = expApprox(dt * A[k]);
                    cur[k] = dec[k] * prev[k] + dt * Bt[k] * vt;
                }
            }
            std::fill(gs, gs + n, 0.f);
            float* dAc = dA + static_cast<std::int64_t>(c) * n;
            float dDc = 0.f;
            for (int t = s.t - 1; t >= 0; --t) {
                const std::int64_t bt = b * s.t + t, i = bt * s.e + c;
                const float dt = in.delta[i], vt = in.v[i], gyt = gy[i];
                const float* Bt = in.B + bt * ld;
                const float* Ct = in.C + bt * ld;
                const float* cur = states + static_cast<size_t>(t) * n;
                const float* dec = decays + static_cast<size_t>(t) * n;
                const float* prev = t > 0 ? cur - n : zeros;
                float* dBt = g.B + bt * ld;
                float* dCt = g.C + bt * ld;
                dDc += gyt * vt;
                float dv = 0.f, ddt = 0.f;
#pragma omp simd reduction(+ : dv, ddt)
                for (int k = 0; k < n; ++k) {
                    dCt[k] += gyt * cur[k];
                    const float gk = gs[k] + gyt * Ct[k];  // dL/ds_t
                    const float sPrev = prev[k];
                    ddt += gk * (A[k] * dec[k] * sPrev + Bt[k] * vt);
                    dAc[k] += gk * dt * dec[k] * sPrev;
                    dBt[k] += gk * dt * vt;
                    dv += gk * dt * Bt[k];
                    gs[k] = gk * dec[k];  // carried to s_{t-1}
                }
                g.v[i] = dv + gyt * in.D[c];
                g.delta[i] = ddt;
            }
            dD[c] += dDc;
        }
    }
}

}  // namespace

void scanForward(const ScanShape& s, const ScanInputs& in, float* y, Slice slice)
{
    forwardRows(s, in, y, slice.begin(s.b), slice.end(s.b));
}

void scanBackward(const ScanShape& s, const ScanInputs& in, const float* gy, const ScanGrads& g,
                  Slice slice)
{
    backwardRows(s, in, gy, g, g.A, g.D, slice.begin(s.b), slice.end(s.b));
}

}  // namespace lengen::engine::model::kernels
