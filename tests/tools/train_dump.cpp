// train_dump: writes what tests/twins/train_reference.py checks against PyTorch autograd
// (introduced with ch11). usage: train_dump DIR [--quick]
//   DIR/ops.safetensors       the cross-entropy's (train/loss.hpp) logits and targets, a random
//                             upstream gradient, our losses and our logits' gradient
//   DIR/init/                 the C++-initialised default model (seed 3), as ch11 --save writes it
//   DIR/batches.safetensors   20 batches (inputs.k, tar_inp.k, tar_real.k)
//   DIR/grads0.safetensors    every parameter's gradient at step 0 (dropout off)
//   DIR/losses.safetensors    the loss of each of the 20 steps (dropout off, article's loss_fun)
//   DIR/trained/ + DIR/translations.txt   (not with --quick) a checkpoint after 300 steps with
//                             dropout, and its greedy translations of 50 held-out numbers
#include <fstream>
#include <string>
#include <vector>

#include "train/checkpoint.hpp"
#include "train/loss.hpp"
#include "train/trainer.hpp"

#include "dump_values.hpp"

using namespace ts::train;
using namespace ts::train::dump;

namespace {

// The loss on small random logits: its values and its gradient for a random upstream gradient.
StFile op_cases() {
  Rng rng(11);
  StFile f;
  for (float eps : {0.0f, 0.1f}) {  // cross-entropy: logits (6,7), targets with padding
    const std::string p = eps == 0.0f ? "xent." : "xent_smooth.";
    const std::vector<int64_t> y = {3, 0, 6, 1, 0, 2};
    auto logits = randn(rng, 42, 2.0f), dloss = randn(rng, 6);
    auto loss = zeros(6), probs = zeros(42), dl = zeros(42);
    cross_entropy_forward(loss.data(), probs.data(), logits.data(), y.data(), 6, 7, 0, eps);
    cross_entropy_backward(dl.data(), probs.data(), y.data(), dloss.data(), 6, 7, 0, eps);
    put(f, p + "logits", logits, {6, 7});
    f[p + "y"] = st_i64(y.data(), {6});
    put(f, p + "eps", {eps}, {1});
    put(f, p + "dout", dloss, {6});
    put(f, p + "out", loss, {6});
    put(f, p + "dlogits", dl, {6, 7});
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  return dump::main_of(argc, argv, "train_dump", op_cases, [](const std::string& dir, bool quick) {
    // the whole model: default sizes, dropout off, seed 3, one thread (the twin runs one too)
    ModelConfig cfg;
    cfg.src_vocab = source_vocab().size();
    cfg.tgt_vocab = target_vocab().size();
    cfg.dropout = 0.0;
    Trainer tr(init_model(cfg, 3), 1, 3);
    save_checkpoint(dir + "/init", tr.model(), tr.adam());
    Epochs epochs(64, 3);
    StFile batches, grads0;
    std::vector<float> loss;
    for (int s = 0; s < adam_steps(quick); ++s) {
      const Batch b = make_batch(next_numbers(epochs));
      put_ids(batches, "inputs", s, b.inputs, {b.B, b.S});
      put_ids(batches, "tar_inp", s, b.tar_inp, {b.B, b.T});
      put_ids(batches, "tar_real", s, b.tar_real, {b.B, b.T});
      const StepStats st = tr.gradients(b, Reduction::ArticleMean, true);
      if (s == 0) grads0 = per_param(tr.model().layout.specs, tr.grads().data());
      tr.adam().update(tr.model().params.data(), tr.grads().data(), tr.model().params.size());
      loss.push_back(static_cast<float>(st.loss_article));
    }
    save_safetensors(dir + "/batches.safetensors", batches, {});
    save_safetensors(dir + "/grads0.safetensors", grads0, {});
    save_losses(dir, loss);
    if (quick) return;
    // a trained checkpoint (dropout on) and what it translates
    cfg.dropout = 0.1;
    Trainer tt(init_model(cfg, 4), 2, 4);
    Epochs ep2(64, 4);
    for (int s = 0; s < 300; ++s) {
      tt.step(make_batch(next_numbers(ep2)), Reduction::ArticleMean);
    }
    save_checkpoint(dir + "/trained", tt.model(), tt.adam());
    const std::vector<int64_t> nums(number_split().held_out.begin(), number_split().held_out.begin() + 50);
    const auto pred = greedy_translate(tt.model(), nums, 10);
    std::ofstream out(dir + "/translations.txt");
    for (size_t i = 0; i < nums.size(); ++i) out << nums[i] << "\t" << target_vocab().decode(pred[i]) << "\n";
    if (!out) throw FileError("cannot write {path}", fmt::arg("path", dir + "/translations.txt"));
  });
}
