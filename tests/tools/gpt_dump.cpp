// gpt_dump: writes what tests/twins/gpt_reference.py checks against PyTorch autograd
// (introduced with ch12). usage: gpt_dump DIR [--quick]
//   DIR/ops.safetensors       the modules' GPT with no blocks (learned positions, ln_f, the tied
//                             head): weights, a random upstream gradient, our logits and gradients
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

#include "train/sampling.hpp"
#include "train/safetensors.hpp"
#include "transformer/grad.hpp"

#include "dump_values.hpp"

using namespace ts::train;
using namespace ts::train::dump;

namespace {

std::vector<float> values(const ts::Tensor& t) { return std::vector<float>(t.begin(), t.end()); }

StFile op_cases() {
  // The GPT's own code around its blocks (transformer/gpt.cpp), on a GPT of 0 blocks, V 7, C 4:
  // logits = ln_f(wte[idx] + wpe[0..T)) wte^T (the tied head); the output and every gradient for a
  // random upstream gradient. (The blocks' modules are tests/twins/module_reference.py's.)
  Rng rng(12);
  StFile f;
  ts::GPTConfig c;
  c.vocab_size = 7, c.block_size = 5, c.n_layer = 0, c.n_embd = 4, c.n_head = 1, c.d_ff = 4, c.tied = true;
  ts::GPT g(c), grad(c);
  g.train(false);
  g.wte.weight = rand_tensor(rng, {7, 4});
  g.wpe.weight = rand_tensor(rng, {5, 4});
  g.ln_f.weight = rand_tensor(rng, {4});
  g.ln_f.bias = rand_tensor(rng, {4});
  const std::vector<int64_t> ids = {1, 6, 3, 0, 2, 6};  // (B,T) = (2,3): token 6 twice, 4 and 5 never
  ts::ITensor idx = ts::ITensor::from_shape({2, 3});
  std::copy(ids.begin(), ids.end(), idx.begin());
  ts::zero_grad(grad);
  const ts::Tensor dout = rand_tensor(rng, {2, 3, 7});
  ts::Tensor out;
  {
    ts::EnableGrad on;
    out = g.forward(idx);
    g.backward(dout, grad);
  }
  put(f, "gpt0.idx", std::vector<float>(ids.begin(), ids.end()), {2, 3});
  put(f, "gpt0.wte", values(g.wte.weight), {7, 4});
  put(f, "gpt0.wpe", values(g.wpe.weight), {5, 4});
  put(f, "gpt0.ln_f.weight", values(g.ln_f.weight), {4});
  put(f, "gpt0.ln_f.bias", values(g.ln_f.bias), {4});
  put(f, "gpt0.out", values(out), {2, 3, 7});
  put(f, "gpt0.dout", values(dout), {2, 3, 7});
  put(f, "gpt0.dwte", values(grad.wte.weight), {7, 4});
  put(f, "gpt0.dwpe", values(grad.wpe.weight), {5, 4});
  put(f, "gpt0.dln_f.weight", values(grad.ln_f.weight), {4});
  put(f, "gpt0.dln_f.bias", values(grad.ln_f.bias), {4});
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
  return per_key(m.gradients(), m.keys);
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
      adam.update(m.parameters(), m.gradients());
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
      at.update(t.parameters(), t.gradients());
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
