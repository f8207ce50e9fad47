// classifier_dump: writes what tests/twins/classifier_reference.py checks against PyTorch
// autograd (introduced with ch13). usage: classifier_dump DIR [--quick]
//   DIR/ops.safetensors        each new op of train/encoder_ops.hpp: inputs, a random upstream
//                              gradient, our outputs and our gradients (one prefix per op)
//   DIR/init/, DIR/init_mean/  the C++-initialised default classifier (seed 3), [CLS] and mean
//                              pooling, as ch13 --save writes it
//   DIR/batches.safetensors    20 batches (ids.k, labels.k)
//   DIR/grads0.safetensors, DIR/grads0_mean.safetensors
//                              every parameter's gradient at step 0 (dropout off), per pooling
//   DIR/losses.safetensors     the loss of each of the 20 Adam steps ([CLS], dropout off)
//   DIR/trained/ + DIR/logits.safetensors   (not with --quick) a checkpoint after 200 steps with
//                              dropout, and its logits for the 500 held-out numbers
#include <string>
#include <vector>

#include "train/classifier.hpp"
#include "train/encoder_ops.hpp"
#include "train/numbers.hpp"

#include "dump_values.hpp"

using namespace ts::train;
using namespace ts::train::dump;

namespace {

StFile op_cases() {
  Rng rng(17);
  StFile f;
  {  // gelu: x (40), values out to +-6
    auto x = randn(rng, 40, 2.5f), dout = randn(rng, 40), y = zeros(40), dx = zeros(40);
    gelu_forward(y.data(), x.data(), 40);
    gelu_backward(dx.data(), dout.data(), x.data(), 40);
    put_op(f, "gelu.", x, dx, {40}, y, dout, {40});
  }
  {  // nn.LayerNorm: x (6,8), eps 1e-5
    auto x = randn(rng, 48, 3.0f), w = randn(rng, 8), b = randn(rng, 8), dout = randn(rng, 48);
    auto y = zeros(48), mean = zeros(6), rstd = zeros(6), dx = zeros(48), dw = zeros(8), db = zeros(8);
    layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), 6, 8, 1e-5f, Variance::Biased);
    layernorm_backward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), mean.data(), rstd.data(),
                       w.data(), 6, 8, Variance::Biased);
    put_op(f, "layernorm.", x, dx, {6, 8}, y, dout, {6, 8});
    put(f, "layernorm.w", w, {8});
    put(f, "layernorm.b", b, {8});
    put(f, "layernorm.dw", dw, {8});
    put(f, "layernorm.db", db, {8});
  }
  // ids (2,4) with padding in row 1, for the positions and the pools
  const std::vector<int64_t> ids = {5, 1, 3, 2, 5, 4, 0, 0};
  f["ids"] = st_i64(ids.data(), {2, 4});
  {  // learned positions: out = tok[ids] + pos[t], tok (6,3), pos (5,3)
    auto tok = randn(rng, 18), pos = randn(rng, 15), dout = randn(rng, 24);
    auto out = zeros(24), dtok = zeros(18), dpos = zeros(15);
    embedding_forward(out.data(), ids.data(), tok.data(), pos.data(), 8, 4, 3, 1.0f);
    embedding_backward(dtok.data(), dout.data(), ids.data(), 8, 3, 1.0f);
    positions_backward(dpos.data(), dout.data(), 2, 4, 3);
    put(f, "positions.tok", tok, {6, 3});
    put(f, "positions.pos", pos, {5, 3});
    put(f, "positions.dout", dout, {2, 4, 3});
    put(f, "positions.out", out, {2, 4, 3});
    put(f, "positions.dtok", dtok, {6, 3});
    put(f, "positions.dpos", dpos, {5, 3});
  }
  for (bool mean : {false, true}) {  // pooling: x (2,4,3) -> (2,3)
    const std::string p = mean ? "pool_mean." : "pool_cls.";
    auto x = randn(rng, 24), dout = randn(rng, 6), out = zeros(6), dx = zeros(24);
    pool_forward(out.data(), x.data(), ids.data(), 2, 4, 3, mean, kPad);
    pool_backward(dx.data(), dout.data(), ids.data(), 2, 4, 3, mean, kPad);
    put_op(f, p, x, dx, {2, 4, 3}, out, dout, {2, 3});
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  return dump::main_of(argc, argv, "classifier_dump", op_cases, [](const std::string& dir, bool quick) {
    ClassifierConfig cfg;
    cfg.vocab = classifier_vocab();
    cfg.dropout = 0.0;
    Rng rng(3);
    Epochs epochs(64, 3);
    StFile batches;
    std::vector<ClsBatch> bs;
    for (int s = 0; s < 20; ++s) {
      bs.push_back(make_cls_batch(next_numbers(epochs)));
      put_ids(batches, "ids", s, bs.back().ids, {bs.back().B, bs.back().T});
      put_ids(batches, "labels", s, bs.back().labels, {bs.back().B});
    }
    save_safetensors(dir + "/batches.safetensors", batches, {});
    for (bool mean : {false, true}) {  // step 0 of each pooling
      cfg.mean_pool = mean;
      Classifier m = init_classifier(cfg, 3);
      Adam adam;
      save_classifier(dir + (mean ? "/init_mean" : "/init"), m, adam);
      ClsWorkspace w;
      classifier_forward(m, w, bs[0], false, rng);
      classifier_loss(w, bs[0], cfg.classes);
      w.grads.assign(m.layout.total, 0.0f);
      classifier_backward(m, w, bs[0]);
      save_safetensors(dir + (mean ? "/grads0_mean.safetensors" : "/grads0.safetensors"),
                       per_param(m.layout.specs, w.grads.data()), {});
    }
    cfg.mean_pool = false;
    {  // 20 Adam steps, dropout off
      Classifier m = init_classifier(cfg, 3);
      Adam adam;
      ClsWorkspace w;
      std::vector<float> loss;
      for (const ClsBatch& b : bs) {
        classifier_forward(m, w, b, false, rng);
        loss.push_back(classifier_loss(w, b, cfg.classes));
        w.grads.assign(m.layout.total, 0.0f);
        classifier_backward(m, w, b);
        adam.update(m.params.data(), w.grads.data(), m.params.size());
      }
      save_losses(dir, loss);
    }
    if (quick) return;
    // a trained checkpoint (dropout on) and its held-out logits
    cfg.dropout = 0.1;
    Classifier m = init_classifier(cfg, 4);
    Adam adam;
    ClsWorkspace w;
    Epochs ep2(64, 4);
    for (int s = 0; s < 200; ++s) {
      const ClsBatch b = make_cls_batch(next_numbers(ep2));
      classifier_forward(m, w, b, true, rng);
      classifier_loss(w, b, cfg.classes);
      w.grads.assign(m.layout.total, 0.0f);
      classifier_backward(m, w, b);
      adam.update(m.params.data(), w.grads.data(), m.params.size());
    }
    save_classifier(dir + "/trained", m, adam);
    const ClsBatch held = make_cls_batch(number_split().held_out);
    classifier_forward(m, w, held, false, rng);
    StFile out;
    out["ids"] = st_i64(held.ids.data(), {held.B, held.T});
    out["logits"] = st_f32(w.logits.data(), {held.B, cfg.classes});
    save_safetensors(dir + "/logits.safetensors", out, {});
  });
}
