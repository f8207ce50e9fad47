#include "course/encoder_timing.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "course/model_probes.hpp"
#include "exact/compare.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "fast/fast_encoder.hpp"

namespace ts {
namespace {

struct Timing {
  double ms = 0;  // the median of the timed runs
  size_t runs = 0;
};

// fn() once untimed (the first run pays for page faults and cold caches), then timed: 3 runs
// (1 if the warm-up took over 250 ms), or as many as fit in budget_ms (at most 25).
Timing median_ms(const std::function<void()>& fn, double budget_ms) {
  using clock = std::chrono::steady_clock;
  auto once = [&] {
    const auto t0 = clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  };
  const size_t least = once() > 250.0 ? 1 : 3;
  std::vector<double> times;
  double total = 0;
  while (times.size() < least || (total < budget_ms && times.size() < 25)) {
    times.push_back(once());
    total += times.back();
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.size()};
}

// Where the fast path first differs, measured: each layer fed the exact path's own input (the
// embeddings, then each exact layer's output), both outputs compared within the scaled tolerance;
// in the first layer that differs, the same layer with its feed-forward's output zeroed (linear_2
// weight and bias = 0, in both paths: both then return x + attention(LN1(x))) tells the attention
// sublayer from the feed-forward one. "" when every layer agrees.
std::string first_difference(const TransformerEncoder& encoder, const ITensor& input_ids) {
  Tensor x = encoder.embeddings(input_ids);
  for (size_t i = 0; i < encoder.layers.size(); ++i) {
    TransformerEncoder one;  // layer i alone (FastEncoder::layer needs no embeddings)
    one.layers = {encoder.layers[i]};
    FastEncoder fast(one);
    const Tensor want = encoder.layers[i](x), got = fast.layer(0, x);
    const double d = max_abs_diff(got, want)(), tol = scaled_tolerance(max_abs(want.data(), want.size()), kFastGrowth);
    if (d <= tol) {
      x = want;
      continue;
    }
    // the attention half alone: the feed-forward adds exactly 0 in both paths
    one.layers[0].feed_forward.linear_2.weight.fill(0.0f);
    one.layers[0].feed_forward.linear_2.bias.fill(0.0f);
    FastEncoder half(one);
    const Tensor want_h = one.layers[0](x), got_h = half.layer(0, x);
    const double dh = max_abs_diff(got_h, want_h)(),
                 tol_h = scaled_tolerance(max_abs(want_h.data(), want_h.size()), kFastGrowth);
    return trf(" Fed the same input, layer {i} is the first whose outputs differ ({d:.3g} > {tol:.2g}); with its "
               "feed-forward's output zeroed in both paths they {agree} ({dh:.3g}), so the {part} sublayer differs.",
               fmt::arg("i", i), fmt::arg("d", d), fmt::arg("tol", tol),
               fmt::arg("agree", dh <= tol_h ? _("agree") : _("still differ")), fmt::arg("dh", dh),
               fmt::arg("part", dh <= tol_h ? _("feed-forward (x + FFN(LN2(x)))") : _("attention (x + MHA(LN1(x)))")));
  }
  return "";
}

// The verdict on max |fast - exact|; under NOT OK, what was measured to differ first, then what
// the probes measured of the model.
std::string fast_verdict(Chapter& ch, const TransformerEncoder& encoder, const ITensor& input_ids, float d,
                         double scale) {
  const double tol = scaled_tolerance(scale, kFastGrowth);
  if (d <= tol)
    return ch.verdict(true, trf("max |fast - exact| = {d:.3g}, within the {tol:.2g} the course allows ({g:g} float "
                                "epsilons x max(1, max |exact| {s:.3g})): the fast path packs the heads' weights into "
                                "one product and folds bias and residual into it, so its sums round in another order.",
                                fmt::arg("d", d), fmt::arg("tol", tol), fmt::arg("g", kFastGrowth),
                                fmt::arg("s", scale)));
  std::string why = first_difference(encoder, input_ids);
  const std::string act = feed_forward_activation();
  if (act != "GELU")
    why += trf(" FeedForward::operator() runs {act}; the fast path runs GELU.", fmt::arg("act", activation_words(act)));
  if (!encoder.layers.empty()) {
    const ResidualCheck r = pre_ln_residuals(encoder.layers[0], encoder.embeddings(input_ids));
    if (!r.holds())
      why += trf(" The layer (EncoderLayer::operator() and its SublayerConnections, {src}) no longer returns "
                 "x + MHA(LN1(x)) + FFN(LN2(...)) (off by {g:.3g}); the fast path still does.",
                 fmt::arg("g", r.gap), fmt::arg("src", annotated_source()));
  }
  return ch.verdict(false, trf("max |fast - exact| = {d:.3g} on this input, more than the {tol:.2g} that another order "
                               "of sums can explain ({g:g} float epsilons x max(1, max |exact| {s:.3g})): FastEncoder "
                               "no longer computes what TransformerEncoder ({src}) computes.{why} An "
                               "edit of the model must be made in src/fast/fast_encoder.cpp too (its kernels: "
                               "src/fast/simd/).",
                               fmt::arg("d", d), fmt::arg("tol", tol), fmt::arg("g", kFastGrowth), fmt::arg("s", scale),
                               fmt::arg("why", why), fmt::arg("src", transformer_encoder_source())));
}

}  // namespace

void time_encoder_paths(Chapter& ch, TransformerEncoder& encoder, const ITensor& input_ids, bool full_timing) {
  encoder.train(false);  // every path in eval mode (FastEncoder has no dropout): no random draws from here on
  // The two BLAS paths always run on OpenBLAS and the torch-exact row kernels; with --naive the plain
  // loops are timed as a third row (the exact path's code, every product and row kernel a plain loop).
  set_matmul_path(MatmulPath::Blas);
  set_kernel_path(KernelPath::Exact);
  set_num_threads(1);  // one thread for every path (OpenBLAS included), so the rows compare like with like
  Tensor exact_out, fast_out, naive_out;
  const double budget_ms = full_timing ? 400.0 : 0.0;
  const Timing exact = median_ms([&] { exact_out = encoder(input_ids); }, budget_ms);
  FastEncoder fast(encoder);  // packs each layer's 3 x H head weights into one (3C, C) matrix
  const Timing quick = median_ms([&] { fast_out = fast(input_ids); }, budget_ms);
  Timing naive;
  if (ch.naive) {
    set_matmul_path(MatmulPath::Naive);
    set_kernel_path(KernelPath::Naive);
    naive = median_ms([&] { naive_out = encoder(input_ids); }, budget_ms);
    set_matmul_path(MatmulPath::Blas);
    set_kernel_path(KernelPath::Exact);
  }
  const int64_t T = static_cast<int64_t>(input_ids.shape()[1]);
  const int64_t C = encoder.layers.empty() ? 0 : encoder.layers[0].feed_forward.linear_1.in_features;
  // matmul FLOPs of one forward (fast_encoder.hpp): per layer Q,K,V 6TC^2, scores and P V 4T^2C,
  // output 2TC^2, FFN 4TCF
  const double flops = fast.flops(1, T);
  const double weight_bytes =
      encoder.layers.empty() ? 0.0 : 4.0 * static_cast<double>(parameter_count(encoder.layers[0]) * encoder.layers.size());
  std::vector<std::vector<std::string>> rows = {
      {trf("path (eval mode, 1 thread, OpenBLAS {core})", fmt::arg("core", blas_core())), _("ms (median)"), _("runs"),
       "GFLOP/s"}};
  auto row = [&](const std::string& name, const Timing& t) {
    rows.push_back({name, fmt::format("{:.2f}", t.ms), fmt::format("{}", t.runs), fmt::format("{:.2f}", flops / t.ms / 1e6)});
  };
  row(_("exact: TransformerEncoder::operator() (transformer_encoder.hpp)"), exact);
  row(_("fast:  FastEncoder (fast_encoder.hpp)"), quick);
  if (ch.naive) row(_("plain loops: the exact path's code with --naive"), naive);
  ch.figure(text_table(rows, 1));
  ch.say(trf("  Workload: {n} layers on (1, {T}, {C}), {g:.2f} GFLOP of matrix products per forward; the fast path "
             "runs at {x:.2f}x the exact path's speed.",
             fmt::arg("n", encoder.layers.size()), fmt::arg("T", T), fmt::arg("C", C), fmt::arg("g", flops / 1e9),
             fmt::arg("x", exact.ms / quick.ms)));
  if (ch.naive)
    ch.say(trf("  The plain loops are {x:.1f}x slower than the exact path (max |plain - exact| = {d:.3g}).",
               fmt::arg("x", naive.ms / exact.ms), fmt::arg("d", max_abs_diff(naive_out, exact_out)())));
  ch.say("  " + fast_verdict(ch, encoder, input_ids, max_abs_diff(fast_out, exact_out)(),
                            max_abs(exact_out.data(), exact_out.size())));
  const size_t H = encoder.layers.empty() ? 0 : size_t(encoder.layers[0].self_attn.h);
  ch.say(trf("  The exact path runs the products PyTorch runs ({lin} small Linears and {bmm} bmm pairs per layer), "
             "so that every printed digit equals the twin's. Each forward also reads all {mb:.0f} MB of layer "
             "weights from memory ({gbs:.1f} GB/s for the exact path) and uses each weight for only T = {T} rows: "
             "at short T the time goes to moving weights, not to arithmetic, whichever path runs it. Timings vary "
             "with what else the machine is doing.",
             fmt::arg("lin", 3 * H), fmt::arg("bmm", H), fmt::arg("mb", weight_bytes / 1e6),
             fmt::arg("gbs", weight_bytes / exact.ms / 1e6), fmt::arg("T", T)));
  ch.say(full_timing ? _("  Each row is the median of its runs, after one untimed warm-up run.")
                     : _("  Each row is the median of its runs, after one untimed warm-up run: --time times each path "
                         "for ~0.4 s."));
  if (!ch.naive) ch.say(_("  Run with --naive to time the plain loops as well."));
}

}  // namespace ts
