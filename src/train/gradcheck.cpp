// train/gradcheck.cpp: see gradcheck.hpp.
#include "train/gradcheck.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ts::train {

ModelConfig tiny_config() {
  ModelConfig c;
  c.layers = 1;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 16;
  c.dropout = 0.0;
  return c;
}

std::vector<GradCheckRow> check_grads_fd(const ModelConfig& cfg, uint64_t seed, const std::vector<int64_t>& numbers) {
  // ch10's EncoderDecoder with ch11's settings, through the Trainer (one thread, dropout off)
  Trainer tr(init_model(cfg, seed), 1, seed);
  const Batch b = make_batch(numbers);
  // analytic gradients of L = sum of masked losses / (B*T): the modules' backward
  tr.gradients(b, Reduction::ArticleMean, /*training=*/false);
  const std::vector<double> grads(tr.grads().begin(), tr.grads().end());
  auto loss = [&]() { return tr.forward(b, /*training=*/false).loss_article; };
  Model<float>& m = tr.model();
  return fd_rows(m.layout.specs, m.params.data(), grads, loss, 4, kFdStepFloat, kFdToleranceFloat, kFdFloorFloat);
}

std::string grad_table(const std::vector<GradCheckRow>& rows) {
  std::string table;
  for (const auto& r : rows) {
    std::string firsts;
    for (size_t i = 0; i < r.ours.size(); ++i) firsts += fmt::format(" {:+.6e}/{:+.6e}", r.ours[i], r.fd[i]);
    table += fmt::format("{:<6} {:<45} maxdiff {:.2e} (max |grad| {:.2e})  first ours/fd:{}\n",
                         r.ok ? "OK" : "NOT OK", r.name, r.maxdiff, r.maxgrad, firsts);
  }
  if (!table.empty()) table.pop_back();
  return table;
}

}  // namespace ts::train
