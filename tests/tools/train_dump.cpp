// train_dump: writes what tests/twins/train_reference.py checks against PyTorch autograd
// (introduced with ch11). usage: train_dump DIR [--quick]
//   DIR/ops.safetensors       each op's inputs, a random upstream gradient, our outputs and our
//                             input/parameter gradients (one prefix per op)
//   DIR/init/                 the C++-initialised default model (seed 3), as ch11 --save writes it
//   DIR/batches.safetensors   20 batches (inputs.k, tar_inp.k, tar_real.k)
//   DIR/grads0.safetensors    every parameter's gradient at step 0 (dropout off)
//   DIR/losses.safetensors    the loss of each of the 20 steps (dropout off, article's loss_fun)
//   DIR/trained/ + DIR/translations.txt   (not with --quick) a checkpoint after 300 steps with
//                             dropout, and its greedy translations of 50 held-out numbers
#include <fstream>
#include <string>
#include <vector>

#include "exact/matmul.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

#include "dump_values.hpp"

using namespace ts::train;
using namespace ts::train::dump;

namespace {

// Each op on small random inputs: outputs and gradients for a random upstream gradient.
StFile op_cases() {
  Rng rng(11);
  StFile f;
  {  // embedding: ids (2,3), table (5,4), pe (3,4), scale 2
    const std::vector<int64_t> ids = {1, 4, 0, 2, 2, 3};
    auto table = randn(rng, 20), pe = randn(rng, 12), dout = randn(rng, 24);
    auto out = zeros(24), dtable = zeros(20);
    embedding_forward(out.data(), ids.data(), table.data(), pe.data(), 6, 3, 4, 2.0f);
    embedding_backward(dtable.data(), dout.data(), ids.data(), 6, 4, 2.0f);
    f["embedding.ids"] = st_i64(ids.data(), {2, 3});
    put(f, "embedding.table", table, {5, 4});
    put(f, "embedding.pe", pe, {3, 4});
    put(f, "embedding.dout", dout, {2, 3, 4});
    put(f, "embedding.out", out, {2, 3, 4});
    put(f, "embedding.dtable", dtable, {5, 4});
  }
  {  // linear: x (2,3,4), W (5,4), b (5)
    auto x = randn(rng, 24), W = randn(rng, 20), b = randn(rng, 5), dout = randn(rng, 30);
    auto out = zeros(30), dx = zeros(24), dW = zeros(20), db = zeros(5);
    linear_forward(out.data(), x.data(), W.data(), b.data(), 6, 4, 5);
    linear_backward(dx.data(), dW.data(), db.data(), dout.data(), x.data(), W.data(), 6, 4, 5);
    put_op(f, "linear.", x, dx, {2, 3, 4}, out, dout, {2, 3, 5});
    put(f, "linear.W", W, {5, 4});
    put(f, "linear.b", b, {5});
    put(f, "linear.dW", dW, {5, 4});
    put(f, "linear.db", db, {5});
  }
  {  // layernorm (article 002): x (6,8)
    auto x = randn(rng, 48, 3.0f), a = randn(rng, 8), b = randn(rng, 8), dout = randn(rng, 48);
    auto y = zeros(48), mean = zeros(6), rstd = zeros(6), dx = zeros(48), da = zeros(8), db = zeros(8);
    layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), a.data(), b.data(), 6, 8, 1e-6f);
    layernorm_backward(dx.data(), da.data(), db.data(), dout.data(), x.data(), mean.data(), rstd.data(), a.data(), 6, 8);
    put_op(f, "layernorm.", x, dx, {6, 8}, y, dout, {6, 8});
    put(f, "layernorm.a", a, {8});
    put(f, "layernorm.b", b, {8});
    put(f, "layernorm.da", da, {8});
    put(f, "layernorm.db", db, {8});
  }
  {  // dropout p = 0.5: the twin multiplies by our mask
    auto x = randn(rng, 32), dout = randn(rng, 32), y = zeros(32), keep = zeros(32), dx = zeros(32);
    dropout_forward(y.data(), keep.data(), x.data(), 32, 0.5, true, rng);
    dropout_backward(dx.data(), dout.data(), keep.data(), 32);
    put_op(f, "dropout.", x, dx, {32}, y, dout, {32});
    put(f, "dropout.keep", keep, {32});
  }
  {  // merge heads: x (2,2,3,4), H = 2 -> (2,3,8)
    auto x = randn(rng, 48), dmerge = randn(rng, 48);
    auto m = zeros(48), dxm = zeros(48);
    merge_heads(m.data(), x.data(), 2, 3, 2, 4);
    merge_heads_backward(dxm.data(), dmerge.data(), 2, 3, 2, 4);
    put(f, "heads.x", x, {2, 2, 3, 4});
    put(f, "heads.merge_dout", dmerge, {2, 3, 8});
    put(f, "heads.merge_out", m, {2, 3, 8});
    put(f, "heads.merge_dx", dxm, {2, 2, 3, 4});
  }
  // masks (B=2, T=3, S=5): row 1 has two padded keys, plus a causal-like hide in row 0
  std::vector<float> mask(30, 0.0f);
  for (int t = 0; t < 3; ++t) mask[static_cast<size_t>(15 + t * 5 + 3)] = mask[static_cast<size_t>(15 + t * 5 + 4)] = 1.0f;
  mask[1 * 5 + 4] = mask[0 * 5 + 4] = mask[0 * 5 + 3] = 1.0f;
  {  // masked softmax: scores (2,2,3,5)
    auto sc = randn(rng, 60, 2.0f), dout = randn(rng, 60), p = zeros(60), ds = zeros(60);
    masked_softmax_forward(p.data(), sc.data(), mask.data(), 2, 2, 3, 5);
    masked_softmax_backward(ds.data(), dout.data(), p.data(), 2, 2, 3, 5);
    put(f, "softmax.scores", sc, {2, 2, 3, 5});
    put(f, "softmax.mask", mask, {2, 3, 5});
    put(f, "softmax.dout", dout, {2, 2, 3, 5});
    put(f, "softmax.out", p, {2, 2, 3, 5});
    put(f, "softmax.dscores", ds, {2, 2, 3, 5});
  }
  {  // attention: q (2,2,3,4), k, v (2,2,5,4), scale 1/2, dropout 0.3 with our mask
    auto q = randn(rng, 48), k = randn(rng, 80), v = randn(rng, 80), dout = randn(rng, 48);
    auto out = zeros(48), p = zeros(60), keep = zeros(60), dq = zeros(48), dk = zeros(80), dv = zeros(80);
    attention_forward(out.data(), p.data(), keep.data(), q.data(), k.data(), v.data(), mask.data(), 2, 2, 3, 5, 4,
                      0.5f, 0.3, true, rng);
    attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), q.data(), k.data(), v.data(), p.data(),
                       keep.data(), 2, 2, 3, 5, 4, 0.5f);
    put(f, "attention.q", q, {2, 2, 3, 4});
    put(f, "attention.k", k, {2, 2, 5, 4});
    put(f, "attention.v", v, {2, 2, 5, 4});
    put(f, "attention.mask", mask, {2, 3, 5});
    put(f, "attention.keep", keep, {2, 2, 3, 5});
    put(f, "attention.dout", dout, {2, 2, 3, 4});
    put(f, "attention.out", out, {2, 2, 3, 4});
    put(f, "attention.dq", dq, {2, 2, 3, 4});
    put(f, "attention.dk", dk, {2, 2, 5, 4});
    put(f, "attention.dv", dv, {2, 2, 5, 4});
  }
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
