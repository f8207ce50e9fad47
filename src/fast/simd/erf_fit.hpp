// erf_fit.hpp: the float erf both routes' GELU use, in one place.
//
// erf(z) = z P(z^2) / Q(z^2), the minimax fit Eigen's and XLA's float erf use: |error| < 5e-7
// on [-4, 4]; beyond |z| = 3.9 erf is +-1 to float precision. route_scalar.cpp evaluates it as
// written; route_impl.hpp evaluates it with z = x / sqrt 2 folded into the coefficients
// (gelu_fold below), which its GELU needs.
#pragma once

namespace ts::simd::erf_fit {

constexpr int kNP = 7, kNQ = 5;
// P: a13 ... a1 (odd numerator z (a1 + a3 z^2 + ... + a13 z^12)), highest power first
constexpr float kP[kNP] = {-2.72614225801306e-10f, 2.77068142495902e-08f,  -2.10102402082508e-06f,
                           -5.69250639462346e-05f, -7.34990630326855e-04f, -2.95459980854025e-03f,
                           -1.60960333262415e-02f};
// Q: b8 ... b0 (even denominator b0 + b2 z^2 + ... + b8 z^8), highest power first
constexpr float kQ[kNQ] = {-1.45660718464996e-05f, -2.13374055278905e-04f, -1.68282697438203e-03f,
                           -7.37332916720468e-03f, -1.42647390514189e-02f};
constexpr float kClamp = 4.0f;     // |z| beyond this is clamped (the fit's interval)
constexpr float kSaturate = 3.9f;  // |z| from here on: erf = +-1

constexpr double kInvSqrt2 = 0.70710678118654752440;

// erf(x / sqrt 2) as x P'(x^2) / Q'(x^2): with z = x / sqrt 2, z^2 = x^2 / 2, so the coefficient
// of (z^2)^k becomes c 2^-k (exact) for x^2, and the leading z = x / sqrt 2 goes into P'.
struct GeluFold {
  float p[kNP], q[kNQ];
  float clamp, saturate;  // kClamp, kSaturate in units of x (times sqrt 2)
};

constexpr GeluFold gelu_fold() {
  GeluFold f{};
  double scale = 1.0;  // 2^-k, k = the power of z^2, from 0 up (the arrays run from the highest)
  for (int i = kNP - 1; i >= 0; --i, scale *= 0.5) f.p[i] = float(double(kP[i]) * scale * kInvSqrt2);
  scale = 1.0;
  for (int i = kNQ - 1; i >= 0; --i, scale *= 0.5) f.q[i] = float(double(kQ[i]) * scale);
  f.clamp = float(double(kClamp) / kInvSqrt2);
  f.saturate = float(double(kSaturate) / kInvSqrt2);
  return f;
}

}  // namespace ts::simd::erf_fit
