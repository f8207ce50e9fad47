// feed_forward.cpp: the one position-wise feed-forward (nn.hpp), articles 000 and 002 as settings
// (introduced in ch05; trained in ch11-ch13). The backward sits right below the forward, llm.c's
// way (transformer/grad.hpp).
#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "transformer/nn.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/tensor_ops.hpp"
#include "transformer/grad.hpp"

namespace ts {

std::string feed_forward_source() { return code_site_path(__FILE__); }

const char* activation_name(Activation a) {
  return a == Activation::ReLU ? "ReLU" : a == Activation::GELU ? "GELU" : "no activation";
}

FeedForward::FeedForward(const Config& config)
    : FeedForward(config.hidden_size, config.intermediate_size, config.hidden_dropout_prob, Activation::GELU,
                  FeedForwardArticle::Article000) {}

FeedForward::FeedForward(int64_t d_model, int64_t d_ff, double p, Activation act, FeedForwardArticle art)
    : linear_1(d_model, d_ff), linear_2(d_ff, d_model), dropout(p), activation(act), article(art) {}

FeedForward positionwise_feed_forward(int64_t d_model, int64_t d_ff, double dropout, Activation activation) {
  return FeedForward(d_model, d_ff, dropout, activation, FeedForwardArticle::Article002);
}

std::pair<const char*, const char*> FeedForward::linear_names() const {
  return article == FeedForwardArticle::Article002 ? std::pair{"w_1", "w_2"} : std::pair{"linear_1", "linear_2"};
}

// act(h): GELU h Phi(h), torch's F.gelu bits (exact/kernels.hpp); ReLU max(h, 0); Identity h   (B,T,F)
static Tensor activate(Activation activation, const Tensor& h) {
  if (activation == Activation::GELU) return gelu(h);
  Tensor a = h;
  if (activation == Activation::ReLU)
    for (float& v : a) v = v > 0.0f ? v : 0.0f;
  return a;
}

// the lines below: FeedForward's forward and backward, named when they disagree
static const CodeSite kFeedForwardForwardSite{__FILE__, __LINE__ + 1, "FeedForward::operator()"};
Tensor FeedForward::operator()(const Tensor& x) const {
  TS_TRACE_SCOPE(article == FeedForwardArticle::Article002 ? "PositionwiseFeedForward" : "FeedForward", x);
  TS_CODE_SITE();
  // article 000: FFN(x) = dropout(linear_2(act(linear_1(x))));  article 002: linear_2(dropout(act(linear_1(x))))
  // (B,T,C) -> (B,T,F) -> (B,T,C)
  Tensor h = linear_1(x);               // (B,T,F)
  Tensor g = activate(activation, h);   // (B,T,F)
  if (article == FeedForwardArticle::Article002) g = dropout(std::move(g));  // article 002: dropout before linear_2
  Tensor y = linear_2(g);               // (B,T,C)
  if (grad_enabled()) saved = {x, std::move(h), std::move(g)};  // kept for the backward
  if (article == FeedForwardArticle::Article000) y = dropout(std::move(y));  // article 000: dropout last
  return y;
}

// GELU's derivative, article 002's module's loop (ch12):  d/dx [x Phi(x)] = Phi(x) + x phi(x),
// Phi(x) = (1 + erf(x / sqrt 2)) / 2,  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)   (in double)
// (gelu_backward, below, is article 000's module's loop: the same formula, its constants spelled
// otherwise; each keeps the bits its twin pins)
static double gelu_slope(double x) {
  const double Phi = 0.5 * (1.0 + std::erf(x * 0.7071067811865476));
  const double phi = std::exp(-0.5 * x * x) * 0.3989422804014327;
  return Phi + x * phi;
}

// dh = dg * GELU'(h)   (n). The module's kernel setting when a probe of a few points finds it
// computes what gelu_slope does; else (none set, an edit of gelu_slope, or --naive) the article's
// plain loop, so an edit is what runs.
static Tensor gelu_slope_times(const FeedForward& ff, const Tensor& h, Tensor dg) {
  static constexpr int kProbe = 8;
  static constexpr float kX[kProbe] = {-4.0f, -2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f};
  const GeluBackwardKernel kernel = ff.gelu_backward_kernel;
  bool same = kernel != nullptr && matmul_path() == MatmulPath::Blas;
  if (same) {
    const float ones[kProbe] = {1, 1, 1, 1, 1, 1, 1, 1};
    float got[kProbe] = {};
    kernel(kX, ones, got, kProbe);
    for (int i = 0; i < kProbe && same; ++i) same = std::fabs(double(got[i]) - gelu_slope(double(kX[i]))) <= 1e-5;
  }
  if (!same) {
    if (ff.article == FeedForwardArticle::Article000) return gelu_backward(h, dg);
    float* d = dg.data();
    for (size_t i = 0; i < dg.size(); ++i) d[i] = static_cast<float>(double(d[i]) * gelu_slope(double(h.data()[i])));
    return dg;
  }
  Tensor out = zeros(shape_of(dg));
  kernel(h.data(), dg.data(), out.data(), int64_t(dg.size()));  // out = 0 + dg * slope(h)
  return out;
}

static const CodeSite kFeedForwardBackwardSite{__FILE__, __LINE__ + 1, "FeedForward::backward"};
Tensor FeedForward::backward(const Tensor& dy, FeedForward& grad) const {
  TS_CODE_SITE();
  if (saved.x.dimension() == 0) throw std::logic_error("FeedForward.backward: no forward under EnableGrad");
  const bool last = article == FeedForwardArticle::Article000;  // where the forward ran its dropout
  require_forward(dropout.ready_for(last ? dy : saved.g), "dropout", kFeedForwardForwardSite, kFeedForwardBackwardSite);
  // dg = linear_2.backward(g, dropout.backward(dy)) (000), dropout.backward(linear_2.backward(g, dy)) (002)   (B,T,F)
  Tensor dg = last ? linear_2.backward(saved.g, dropout.backward(dy), grad.linear_2)
                   : dropout.backward(linear_2.backward(saved.g, dy, grad.linear_2));
  // dh = dg act'(h)   (B,T,F):  dg [h > 0] (ReLU),  dg (Phi(h) + h phi(h)) (GELU),  dg (Identity)
  if (activation == Activation::ReLU)
    for (size_t i = 0; i < dg.size(); ++i)
      if (!(saved.h.data()[i] > 0.0f)) dg.data()[i] = 0.0f;
  if (activation == Activation::GELU) dg = gelu_slope_times(*this, saved.h, std::move(dg));
  // dx = linear_1.backward(x, dh)   (B,T,C)
  return linear_1.backward(saved.x, dg, grad.linear_1);
}

Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  // dx = dy (Phi(x) + x phi(x)),  Phi(x) = (1 + erf(x / sqrt 2)) / 2,  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
  Tensor dx = Tensor::from_shape(shape_of(x));
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x.data()[i];
    const double cdf = 0.5 * (1.0 + std::erf(v / std::sqrt(2.0)));
    const double pdf = std::exp(-0.5 * v * v) / std::sqrt(2.0 * 3.14159265358979323846);
    dx.data()[i] = static_cast<float>(double(dy.data()[i]) * (cdf + v * pdf));
  }
  return dx;
}

ModuleRepr FeedForward::repr() const {
  if (article == FeedForwardArticle::Article000) {
    // article 000's __init__: linear_1, linear_2, gelu, dropout
    ModuleRepr r{"FeedForward", "", {{"linear_1", linear_1.repr()}, {"linear_2", linear_2.repr()}}};
    if (activation == Activation::GELU) r.children.emplace_back("gelu", gelu_repr());
    if (activation == Activation::ReLU) r.children.emplace_back("relu", relu_repr());
    r.children.emplace_back("dropout", dropout.repr());
    return r;
  }
  ModuleRepr r{"PositionwiseFeedForward", "", {{"w_1", linear_1.repr()}, {"w_2", linear_2.repr()}, {"dropout", dropout.repr()}}};
  // a ReLU is a child module, as nn.ReLU() would be in the __init__ (article 002's has none)
  if (activation == Activation::ReLU) r.children.emplace_back("activation", ModuleRepr{"ReLU", "", {}});
  if (activation == Activation::GELU) r.children.emplace_back("activation", gelu_repr());
  return r;
}

}  // namespace ts
