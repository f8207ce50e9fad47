// gpt_dump: writes what tests/twins/gpt_reference.py checks against PyTorch autograd
// (introduced with ch12). usage: gpt_dump DIR [--quick]
//   DIR/ops.safetensors       ch12's new ops (GELU, learned positions, fused q/k/v split, the
//                             LM head): inputs, a random upstream gradient, our outputs and gradients
//   DIR/init/, DIR/untied/    the C++-initialised default model (seed 3), tied and untied head,
//                             as ch12 --save writes them
//   DIR/batches.safetensors   20 batches (x.k, y.k), the prompt targets masked
//   DIR/grads0.safetensors    every parameter's gradient at step 0 (tied), grads0_untied likewise
//   DIR/losses.safetensors    the loss of each of the 20 Adam steps (tied, dropout off)
//   DIR/trained/ + DIR/completions.txt   (not with --quick) a checkpoint after 300 steps and its
//                             greedy completions of 50 held-out numbers
#include <fstream>
#include <string>
#include <vector>

#include "train/gpt_ops.hpp"
#include "train/sampling.hpp"
#include "train/safetensors.hpp"

#include "dump_values.hpp"

using namespace ts::train;
using namespace ts::train::dump;

namespace {

StFile op_cases() {
  Rng rng(12);
  StFile f;
  {  // GELU: x (40)
    auto x = randn(rng, 40, 2.0f), dout = randn(rng, 40), y = zeros(40), dx = zeros(40);
    gelu_forward(y.data(), x.data(), 40);
    gelu_backward(dx.data(), dout.data(), x.data(), 40);
    put_op(f, "gelu.", x, dx, {40}, y, dout, {40});
  }
  {  // learned positions: dout (2,3,4) -> dwpe rows 0..2 of a (5,4) table
    auto dout = randn(rng, 24), dwpe = zeros(20);
    positions_backward(dwpe.data(), dout.data(), 2, 3, 4);  // B = 2, T = 3
    put(f, "positions.dout", dout, {2, 3, 4});
    put(f, "positions.dwpe", dwpe, {5, 4});
  }
  {  // split_qkv: qkv (2,3,24), H = 2, D = 4
    auto qkv = randn(rng, 144), dq = randn(rng, 48), dk = randn(rng, 48), dv = randn(rng, 48);
    auto q = zeros(48), k = zeros(48), v = zeros(48), dqkv = zeros(144);
    split_qkv(q.data(), k.data(), v.data(), qkv.data(), 2, 3, 2, 4);
    split_qkv_backward(dqkv.data(), dq.data(), dk.data(), dv.data(), 2, 3, 2, 4);
    put(f, "qkv.qkv", qkv, {2, 3, 24});
    for (auto [n, t] : {std::pair{"q", &q}, {"k", &k}, {"v", &v}, {"dq", &dq}, {"dk", &dk}, {"dv", &dv}})
      put(f, std::string("qkv.") + n, *t, {2, 2, 3, 4});
    put(f, "qkv.dqkv", dqkv, {2, 3, 24});
  }
  {  // LM head: x (6,4), W (7,4)
    auto x = randn(rng, 24), W = randn(rng, 28), dout = randn(rng, 42), out = zeros(42), dx = zeros(24), dW = zeros(28);
    lm_head_forward(out.data(), x.data(), W.data(), 6, 4, 7);
    lm_head_backward(dx.data(), dW.data(), dout.data(), x.data(), W.data(), 6, 4, 7);
    put_op(f, "head.", x, dx, {6, 4}, out, dout, {6, 7});
    put(f, "head.W", W, {7, 4});
    put(f, "head.dW", dW, {7, 4});
  }
  return f;
}

GptConfig default_config(bool tied) {
  GptConfig c;
  c.vocab = seq_vocab().size();
  c.tied = tied;
  return c;
}

StFile grads_of(Gpt& m, const SeqBatch& b) {
  m.forward(b, false);
  m.zero_grad();
  m.backward();
  return per_param(m.layout.specs, m.grads.data());
}

}  // namespace

int main(int argc, char** argv) {
  return dump::main_of(argc, argv, "gpt_dump", op_cases, [](const std::string& dir, bool quick) {
    Gpt m(default_config(true), 3, 1), u(default_config(false), 3, 1);
    Adam adam, adam_u;
    adam.lr = 0.002;
    save_gpt(dir + "/init", m, adam);
    save_gpt(dir + "/untied", u, adam_u);
    Epochs epochs(64, 3);
    StFile batches;
    std::vector<float> loss;
    for (int s = 0; s < adam_steps(quick); ++s) {
      const SeqBatch b = make_seq_batch(next_numbers(epochs));
      put_ids(batches, "x", s, b.x, {b.B, b.T});
      put_ids(batches, "y", s, b.y, {b.B, b.T});
      if (s == 0) {
        save_safetensors(dir + "/grads0.safetensors", grads_of(m, b), {});
        save_safetensors(dir + "/grads0_untied.safetensors", grads_of(u, b), {});
      }
      const double l = m.forward(b, false);
      m.zero_grad();
      m.backward();
      adam.update(m.params.data(), m.grads.data(), m.params.size());
      loss.push_back(static_cast<float>(l));
    }
    save_safetensors(dir + "/batches.safetensors", batches, {});
    save_losses(dir, loss);
    if (quick) return;
    // a trained checkpoint and what it completes
    Gpt t(default_config(true), 4, 2);
    Adam at;
    at.lr = 0.002;
    Epochs ep2(64, 4);
    for (int s = 0; s < 300; ++s) {
      t.forward(make_seq_batch(next_numbers(ep2)), true);
      t.zero_grad();
      t.backward();
      at.update(t.params.data(), t.grads.data(), t.params.size());
    }
    save_gpt(dir + "/trained", t, at);
    std::ofstream out(dir + "/completions.txt");
    Rng rng(0);
    for (size_t i = 0; i < 50; ++i) {
      const int64_t n = number_split().held_out[i];
      out << n << "\t" << seq_vocab().decode(generate(t, encode_prompt(n), t.cfg.ctx, Sampler{}, rng)) << "\n";
    }
    if (!out) throw FileError("cannot write " + dir + "/completions.txt");
  });
}
