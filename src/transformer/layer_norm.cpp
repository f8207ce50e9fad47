// layer_norm.cpp: the one LayerNorm (nn.hpp) and its three arithmetics, articles 000, 002 and 004
// (introduced in ch06, which runs the three side by side). Each forward is the kernel its twin's
// bits need; each backward sits right below its forward, llm.c's way (transformer/grad.hpp).
#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "transformer/nn.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "exact/fp_contract.hpp"
#include "exact/kernels.hpp"
#include "exact/stats.hpp"
#include "exact/tensor_ops.hpp"

namespace ts {

std::string layer_norm_source() { return code_site_path(__FILE__); }

double default_eps(LayerNormArithmetic arithmetic) {
  return arithmetic == LayerNormArithmetic::Article000 ? 1e-5 : 1e-6;
}

LayerNorm::LayerNorm(int64_t normalized_shape, LayerNormArithmetic arithmetic)
    : LayerNorm(normalized_shape, arithmetic, default_eps(arithmetic)) {}

LayerNorm::LayerNorm(int64_t normalized_shape, LayerNormArithmetic arithmetic_, double eps_)
    : weight(Tensor::from_shape({static_cast<size_t>(normalized_shape)})),
      bias(Tensor::from_shape({static_cast<size_t>(normalized_shape)})), eps(eps_), arithmetic(arithmetic_) {
  // the Keras layer holds its epsilon as a float32
  if (arithmetic == LayerNormArithmetic::Article004) eps = static_cast<float>(eps_);
  weight.fill(1.0f);
  bias.fill(0.0f);
}

std::pair<const char*, const char*> LayerNorm::param_names() const {
  switch (arithmetic) {
    case LayerNormArithmetic::Article002: return {"a_2", "b_2"};
    case LayerNormArithmetic::Article004: return {"gamma", "beta"};
    default: return {"weight", "bias"};
  }
}

ModuleRepr LayerNorm::repr() const {
  switch (arithmetic) {
    case LayerNormArithmetic::Article002: return {"LayerNorm", "", {}};  // its repr shows no size nor eps
    case LayerNormArithmetic::Article004: return {"LayerNormalization", "", {}};
    default: return layer_norm_repr(static_cast<int64_t>(weight.size()), eps);
  }
}

// ---------------------------------------------------------------- article 000: nn.LayerNorm
// y = (x - mean) / sqrt(var_n + eps) * weight + bias: torch's native_layer_norm bits (exact/kernels.hpp)
static Tensor norm_000(const Tensor& x, const LayerNorm& n) { return layer_norm(x, n.weight, n.bias, n.eps); }

// The backward of articles 000 and 004, one row at a time in double. Both are
//   xhat = (x - mean) r,  g = dy weight:   dx = r (g - mean(g) - xhat k mean(g xhat))   (N,C)
//   000: r = 1 / sqrt(var_n + eps), k = 1;
//   004: r = 1 / (std_n + eps), k = (std_n + eps) / std_n (the std's own slope; 0 for a constant row)
// grad.weight += sum_n dy xhat;  grad.bias += sum_n dy   (C)
static Tensor norm_000_004_backward(const Tensor& x, const Tensor& dy, const LayerNorm& n, LayerNorm& grad) {
  const bool std_plus_eps = n.arithmetic == LayerNormArithmetic::Article004;
  const size_t C = n.weight.size(), N = x.size() / std::max<size_t>(C, 1);
  Tensor dx = Tensor::from_shape(shape_of(x));
  std::vector<double> xhat(C), g(C);
  for (size_t r = 0; r < N; ++r) {
    const float* xr = x.data() + r * C;
    const float* dr = dy.data() + r * C;
    double mean = 0, var = 0;
    for (size_t c = 0; c < C; ++c) mean += xr[c];
    mean /= double(C);
    for (size_t c = 0; c < C; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    double rstd = 1.0 / std::sqrt(var / double(C) + n.eps), k = 1.0;  // biased variance, as torch
    if (std_plus_eps) {
      const double std_n = std::sqrt(var / double(C)), den = std_n + static_cast<float>(n.eps);
      rstd = 1.0 / den, k = std_n > 0 ? den / std_n : 0.0;
    }
    double mg = 0, mgx = 0;
    for (size_t c = 0; c < C; ++c) {
      xhat[c] = (xr[c] - mean) * rstd;
      g[c] = double(dr[c]) * double(n.weight.data()[c]);
      mg += g[c], mgx += g[c] * xhat[c];
      grad.weight.data()[c] += static_cast<float>(double(dr[c]) * xhat[c]);
      grad.bias.data()[c] += dr[c];
    }
    mg /= double(C), mgx /= double(C);
    const double mgxk = mgx * k;  // k = 1 (000): exactly mgx
    for (size_t c = 0; c < C; ++c) dx.data()[r * C + c] = static_cast<float>(rstd * (g[c] - mg - xhat[c] * mgxk));
  }
  return dx;
}

// ---------------------------------------------------------------- article 002: its class LayerNorm
// y = a_2 * (x - mean) / sqrt(std**2 + eps) + b_2, std unbiased; each step rounded to float like torch
TS_NO_FP_CONTRACT static Tensor norm_002(const Tensor& x, const LayerNorm& n) {
  TS_NO_FP_CONTRACT_BODY
  const size_t C = n.weight.size();
  // 1) mean = x.mean(-1, keepdim=True);  std = x.std(-1, keepdim=True)   (...,1)
  const Tensor mean = mean_lastdim_keepdim(x);
  const Tensor stdv = std_lastdim(x, 1);
  // 2) denom = sqrt(std**2 + eps)   each step rounded to float, like torch   (...,1)
  const float eps_f = static_cast<float>(n.eps);
  Tensor denom = stdv;
  for (float& d : denom) {
    const float sq = d * d;   // std ** 2 (torch's pow(x, 2) is x * x)
    const float se = sq + eps_f;
    d = std::sqrt(se);
  }
  // 3) z = (x - mean) / denom;  out = a_2 * z + b_2   (...,C)
  Tensor out = Tensor::from_shape(shape_of(x));
  const size_t rows = x.size() / std::max<size_t>(C, 1);
  const float* px = x.data();
  float* po = out.data();
  for (size_t r = 0; r < rows; ++r) {
    const float m = mean.data()[r], s = denom.data()[r];
    for (size_t c = 0; c < C; ++c) {
      const float z = (px[r * C + c] - m) / s;
      const float scaled = n.weight.data()[c] * z;
      po[r * C + c] = scaled + n.bias.data()[c];
    }
  }
  return out;
}

// norm_002_backward's rows, R at a time; each row takes the same operations in the same order as
// alone, so R changes no bit. The per-row sums (mean, variance, mean(g), sum(g xhat)) run over xt,
// dyt (C,R): the block transposed, so the R rows' chains are the lanes of a vector; the
// per-element steps (ga, gb, dx) run row by row over c, ga[c] and gb[c] taking row after row.
// x, dy, dx (R,C) rows;  a_2 (C);  ga, gb (C) += that row's terms;  xt, dyt (C*R) scratch
template <size_t R>
static void norm_002_backward_rows(const float* __restrict x, const float* __restrict dy, float* __restrict dx,
                                   size_t C, double eps, const float* __restrict a_2, float* __restrict ga,
                                   float* __restrict gb, float* __restrict xt, float* __restrict dyt) {
  const double d = static_cast<double>(C) - 1.0;  // the unbiased std's divisor
  for (size_t q = 0; q < R; ++q)
    for (size_t c = 0; c < C; ++c) xt[c * R + q] = x[q * C + c], dyt[c * R + q] = dy[q * C + c];
  // mean, rstd = 1 / sqrt(sum (x - mean)^2 / (C-1) + eps)   (each of the R rows)
  double means[R] = {}, ss[R] = {}, rstds[R];
  for (size_t c = 0; c < C; ++c)
    for (size_t q = 0; q < R; ++q) means[q] += xt[c * R + q];
  for (size_t q = 0; q < R; ++q) means[q] /= static_cast<double>(C);
  for (size_t c = 0; c < C; ++c)
    for (size_t q = 0; q < R; ++q) ss[q] += (xt[c * R + q] - means[q]) * (xt[c * R + q] - means[q]);
  for (size_t q = 0; q < R; ++q) rstds[q] = 1.0 / std::sqrt(ss[q] / d + eps);
  // xhat = (x - mean) rstd;  g = dy a_2;  mean(g), sum(g xhat)
  double g_means[R] = {}, g_xhats[R] = {};
  for (size_t c = 0; c < C; ++c)
    for (size_t q = 0; q < R; ++q) {
      const double xhat = (xt[c * R + q] - means[q]) * rstds[q];
      const double g = double(dyt[c * R + q]) * double(a_2[c]);
      g_means[q] += g;
      g_xhats[q] += g * xhat;
    }
  // ga += dy xhat;  gb += dy;  dx = rstd (g - mean(g) - xhat sum(g xhat) / (C-1)), row by row
  for (size_t q = 0; q < R; ++q) {
    const double mean = means[q], rstd = rstds[q], g_mean = g_means[q] / static_cast<double>(C), g_xhat = g_xhats[q];
    const float* px = x + q * C;
    const float* pdy = dy + q * C;
    float* pdx = dx + q * C;
    for (size_t c = 0; c < C; ++c) {
      const double xhat = (px[c] - mean) * rstd;
      ga[c] += static_cast<float>(double(pdy[c]) * xhat);
      gb[c] += pdy[c];
      const double g = double(pdy[c]) * double(a_2[c]);
      pdx[c] = static_cast<float>(rstd * (g - g_mean - xhat * g_xhat / d));
    }
  }
}

static Tensor norm_002_backward(const Tensor& x, const Tensor& dy, const LayerNorm& n, LayerNorm& grad) {
  const size_t C = n.weight.size();
  const size_t rows = x.size() / std::max<size_t>(C, 1);
  // every row: dx = rstd (g - mean(g) - xhat sum(g xhat) / (C-1)), in double; 8 rows at a time
  Tensor dx = Tensor::from_shape(shape_of(x));
  std::vector<float> xt(8 * C), dyt(8 * C);
  size_t r = 0;
  for (; r + 8 <= rows; r += 8)
    norm_002_backward_rows<8>(x.data() + r * C, dy.data() + r * C, dx.data() + r * C, C, n.eps, n.weight.data(),
                              grad.weight.data(), grad.bias.data(), xt.data(), dyt.data());
  for (; r < rows; ++r)
    norm_002_backward_rows<1>(x.data() + r * C, dy.data() + r * C, dx.data() + r * C, C, n.eps, n.weight.data(),
                              grad.weight.data(), grad.bias.data(), xt.data(), dyt.data());
  return dx;
}

// ---------------------------------------------------------------- article 004: LayerNormalization
// gamma * (x - mean) / (std + eps) + beta, std the population std (tf.keras.backend.std)
TS_NO_FP_CONTRACT static Tensor norm_004(const Tensor& x, const LayerNorm& n) {
  TS_NO_FP_CONTRACT_BODY
  const size_t C = n.weight.size(), rows = x.size() / C;
  const float eps = static_cast<float>(n.eps);
  // 1) mean and population std of each row    (...,1)
  const Tensor mean = mean_lastdim_keepdim(x);
  const Tensor std_n = std_lastdim(x, /*correction=*/0);
  // 2) gamma * (x - mean) / (std + eps) + beta, each op rounded to float in this order   (...,C)
  Tensor out = Tensor::from_shape(shape_of(x));
  for (size_t r = 0; r < rows; ++r) {
    const float denom = std_n.data()[r] + eps;
    for (size_t c = 0; c < C; ++c) {
      const float centered = x.data()[r * C + c] - mean.data()[r];
      const float scaled = n.weight.data()[c] * centered;
      const float z = scaled / denom;
      out.data()[r * C + c] = z + n.bias.data()[c];
    }
  }
  return out;
}

// ---------------------------------------------------------------- the module: the setting picks the arithmetic
Tensor LayerNorm::operator()(const Tensor& x) const {
  TS_TRACE_SCOPE("LayerNorm", x);
  TS_CODE_SITE();
  if (x.dimension() == 0 || x.shape().back() != weight.size())
    throw std::invalid_argument("LayerNorm: input's last dim is not " + std::to_string(weight.size()));
  // y = (x - mean) / divisor * weight + bias, the divisor as the article computes it   (...,C)
  switch (arithmetic) {
    case LayerNormArithmetic::Article002: return norm_002(x, *this);
    case LayerNormArithmetic::Article004: return norm_004(x, *this);
    default: return norm_000(x, *this);
  }
}

Tensor LayerNorm::backward(const Tensor& x, const Tensor& dy, LayerNorm& grad) const {
  TS_CODE_SITE();
  if (x.dimension() == 0 || x.shape().back() != weight.size() || dy.size() != x.size())
    throw std::invalid_argument("LayerNorm.backward: x and dy must both be (...,C)");
  // dx = (g - mean(g) - xhat k mean(g xhat)) / divisor,  g = dy weight   (...,C)
  if (arithmetic == LayerNormArithmetic::Article002) return norm_002_backward(x, dy, *this, grad);
  return norm_000_004_backward(x, dy, *this, grad);
}

}  // namespace ts
