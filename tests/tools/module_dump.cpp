// module_dump: writes what tests/twins/module_reference.py checks against PyTorch autograd: the
// backward written beside each module of src/transformer/annotated.cpp (introduced with ch11).
// usage: module_dump DIR [--quick]
//   DIR/ops.safetensors    LayerNorm, MultiHeadedAttention (query, key, value all different, a
//                          padding mask), PositionwiseFeedForward (no activation, and GELU as
//                          ch12's MLP), a post-LN SublayerConnection
//                          around a ReLU feed-forward (dropout on), Generator on small random
//                          inputs: their parameters, inputs, outputs, a random upstream gradient,
//                          and our gradients of every input and parameter (one prefix per module)
//   DIR/model.safetensors  a small create_model (eval mode): every parameter (param.NAME), the
//                          ids and masks, the generator's log-probabilities, a random upstream
//                          gradient, and our gradient of every parameter (grad.NAME)
//   DIR/model004.safetensors  the same with article 004's settings (ReLU feed-forward, post-LN)
#include <string>
#include <tuple>
#include <vector>

#include "exact/rng.hpp"
#include "transformer/annotated.hpp"
#include "transformer/grad.hpp"

#include "dump_values.hpp"

using namespace ts::train;
using namespace ts::train::dump;

namespace {

std::vector<int64_t> shape64(const ts::Tensor& t) { return std::vector<int64_t>(t.shape().begin(), t.shape().end()); }

void put_t(StFile& f, const std::string& name, const ts::Tensor& t) { f[name] = st_f32(t.data(), shape64(t)); }

void put_ids(StFile& f, const std::string& name, const ts::ITensor& t) {
  f[name] = st_i64(t.data(), std::vector<int64_t>(t.shape().begin(), t.shape().end()));
}

void put_mask(StFile& f, const std::string& name, const ts::BTensor& m) {
  ts::ITensor i = ts::ITensor::from_shape(ts::shape_of(m));
  for (size_t k = 0; k < m.size(); ++k) i.data()[k] = m.data()[k] ? 1 : 0;
  put_ids(f, name, i);
}

void put_linear(StFile& f, const std::string& p, const ts::Linear& l, const ts::Linear& g) {
  put_t(f, p + ".weight", l.weight);
  put_t(f, p + ".bias", l.bias);
  put_t(f, p + ".dweight", g.weight);
  put_t(f, p + ".dbias", g.bias);
}

// A LayerNorm (C = 8) of the given arithmetic with random weight and bias, its forward and backward
// on x (2,3,8), dumped under prefix with the article's own parameter names (a_2/b_2, gamma/beta):
// x, W, B, out, dout, dx, dW, dB
void put_layer_norm(StFile& f, const std::string& prefix, ts::LayerNormArithmetic arithmetic, Rng& rng) {
  ts::LayerNorm ln(8, arithmetic);
  ln.weight = rand_tensor(rng, {8});
  ln.bias = rand_tensor(rng, {8});
  const ts::Tensor x = rand_tensor(rng, {2, 3, 8}, 2.0f), dout = rand_tensor(rng, {2, 3, 8});
  ts::LayerNorm g(8, arithmetic);
  g.weight.fill(0.0f);
  const ts::Tensor out = ln(x);
  const ts::Tensor dx = ln.backward(x, dout, g);
  const std::string w = ln.param_names().first, b = ln.param_names().second;
  const std::vector<std::pair<std::string, const ts::Tensor*>> items = {
      {"x", &x}, {w, &ln.weight}, {b, &ln.bias}, {"out", &out}, {"dout", &dout}, {"dx", &dx}, {"d" + w, &g.weight},
      {"d" + b, &g.bias}};
  for (const auto& [n, t] : items) put_t(f, prefix + n, *t);
}

StFile module_cases() {
  Rng rng(17);
  ts::manual_seed(5);
  ts::EnableGrad grad_mode;
  StFile f;
  // article 002's LayerNorm (unbiased std, eps 1e-6), random a_2 and b_2
  put_layer_norm(f, "layernorm.", ts::LayerNormArithmetic::Article002, rng);
  {  // MultiHeadedAttention(h=2, C=8), eval: query (2,3,8), key and value (2,5,8), mask (2,1,5)
    ts::MultiHeadedAttention mha(2, 8, 0.0);
    mha.train(false);
    const ts::Tensor query = rand_tensor(rng, {2, 3, 8}), key = rand_tensor(rng, {2, 5, 8}),
                     value = rand_tensor(rng, {2, 5, 8}), dout = rand_tensor(rng, {2, 3, 8});
    ts::BTensor mask = ts::BTensor::from_shape({2, 1, 5});
    for (size_t s = 0; s < 5; ++s) mask(0, 0, s) = true, mask(1, 0, s) = s < 3;  // row 1: 2 padding keys
    ts::MultiHeadedAttention g = mha;
    for (ts::Linear& l : g.linears) l.weight.fill(0.0f), l.bias.fill(0.0f);
    const ts::Tensor out = mha(query, key, value, &mask);
    const ts::MultiHeadedAttention::InputGrads d = mha.backward(dout, g);
    put_t(f, "mha.query", query);
    put_t(f, "mha.key", key);
    put_t(f, "mha.value", value);
    put_mask(f, "mha.mask", mask);
    put_t(f, "mha.out", out);
    put_t(f, "mha.dout", dout);
    put_t(f, "mha.dquery", d.dquery);
    put_t(f, "mha.dkey", d.dkey);
    put_t(f, "mha.dvalue", d.dvalue);
    for (size_t j = 0; j < 4; ++j) put_linear(f, "mha.linears." + std::to_string(j), mha.linears[j], g.linears[j]);
  }
  // PositionwiseFeedForward(C=8, F=16), eval: article 002's (no activation), then GPT-2's MLP
  // (ch12: a GELU, x spread over both signs)
  for (auto [prefix, act, spread] : {std::tuple{"ffn", ts::Activation::Identity, 1.0f},
                                     std::tuple{"gelu_ffn", ts::Activation::GELU, 2.0f}}) {
    ts::FeedForward ff = ts::positionwise_feed_forward(8, 16, 0.0, act);
    ff.train(false);
    const ts::Tensor x = rand_tensor(rng, {2, 3, 8}, spread), dout = rand_tensor(rng, {2, 3, 8});
    ts::FeedForward g = ff;
    for (ts::Linear* l : {&g.linear_1, &g.linear_2}) l->weight.fill(0.0f), l->bias.fill(0.0f);
    const ts::Tensor out = ff(x);
    const ts::Tensor dx = ff.backward(dout, g);
    const std::string p = prefix;
    put_t(f, p + ".x", x);
    put_t(f, p + ".out", out);
    put_t(f, p + ".dout", dout);
    put_t(f, p + ".dx", dx);
    put_linear(f, p + ".w_1", ff.linear_1, g.linear_1);
    put_linear(f, p + ".w_2", ff.linear_2, g.linear_2);
  }
  {  // article 004's settings: a post-LN SublayerConnection around a ReLU feed-forward, both in
     // train mode with dropout 0.5 (the keep masks are written: the twin multiplies by the same)
    ts::FeedForward ff = ts::positionwise_feed_forward(8, 16, 0.5, ts::Activation::ReLU);
    ts::SublayerConnection sub(8, 0.5, ts::NormPlace::Post);
    sub.norm.weight = rand_tensor(rng, {8});
    sub.norm.bias = rand_tensor(rng, {8});
    const ts::Tensor x = rand_tensor(rng, {2, 3, 8}), dout = rand_tensor(rng, {2, 3, 8});
    ts::FeedForward gf = ff;
    for (ts::Linear* l : {&gf.linear_1, &gf.linear_2}) l->weight.fill(0.0f), l->bias.fill(0.0f);
    ts::SublayerConnection gs(8, 0.5);
    gs.norm.weight.fill(0.0f);
    const ts::Tensor out = sub(x, [&](const ts::Tensor& y) { return ff(y); });
    const ts::Tensor dx = sub.backward(dout, [&](const ts::Tensor& d) { return ff.backward(d, gf); }, gs);
    put_t(f, "postln.x", x);
    put_t(f, "postln.a_2", sub.norm.weight);
    put_t(f, "postln.b_2", sub.norm.bias);
    put_t(f, "postln.ffn_keep", ff.dropout.keep);
    put_t(f, "postln.keep", sub.dropout.keep);
    put_t(f, "postln.out", out);
    put_t(f, "postln.dout", dout);
    put_t(f, "postln.dx", dx);
    put_t(f, "postln.da_2", gs.norm.weight);
    put_t(f, "postln.db_2", gs.norm.bias);
    put_linear(f, "postln.w_1", ff.linear_1, gf.linear_1);
    put_linear(f, "postln.w_2", ff.linear_2, gf.linear_2);
  }
  {  // Generator(C=8, V=7): log_softmax(proj(x))
    ts::AnnotatedGenerator gen(8, 7);
    const ts::Tensor x = rand_tensor(rng, {2, 3, 8}), dout = rand_tensor(rng, {2, 3, 7});
    ts::AnnotatedGenerator g = gen;
    g.proj.weight.fill(0.0f), g.proj.bias.fill(0.0f);
    const ts::Tensor out = gen(x);
    const ts::Tensor dx = gen.backward(dout, g);
    put_t(f, "generator.x", x);
    put_t(f, "generator.out", out);
    put_t(f, "generator.dout", dout);
    put_t(f, "generator.dx", dx);
    put_linear(f, "generator.proj", gen.proj, g.proj);
  }
  // article 004's LayerNormalization (population std, eps added to the std), random gamma and
  // beta; its own draws, after every case above
  Rng rng4(40);
  put_layer_norm(f, "layernorm004.", ts::LayerNormArithmetic::Article004, rng4);
  return f;
}

// create_model(11, 13, N=2, C=16, F=32, H=4) in eval mode: forward, generator, a random upstream
// gradient of the log-probabilities, backward through the generator and the whole model.
// settings: article 002's (model.safetensors) or article 004's (model004.safetensors).
void model_case(const std::string& path, const ts::ModelSettings& settings) {
  Rng rng(23);
  ts::manual_seed(7);
  ts::EncoderDecoder model = ts::create_model(11, 13, 2, 16, 32, 4, 0.1, settings);
  model.train(false);
  const size_t B = 2, S = 6, T = 5;
  ts::ITensor src = ts::ITensor::from_shape({B, S}), tgt = ts::ITensor::from_shape({B, T});
  for (size_t i = 0; i < src.size(); ++i) src.data()[i] = 1 + int64_t(rng.next() % 10);
  for (size_t i = 0; i < tgt.size(); ++i) tgt.data()[i] = 1 + int64_t(rng.next() % 12);
  src(1, 4) = src(1, 5) = 0;  // row 1: two padding positions (id 0)
  tgt(1, 4) = 0;
  // src_mask = (src != 0).unsqueeze(-2) (B,1,S);  tgt_mask = (tgt != 0).unsqueeze(-2) & subsequent (B,T,T)
  ts::BTensor src_mask = ts::BTensor::from_shape({B, 1, S}), tgt_mask = ts::BTensor::from_shape({B, T, T});
  const ts::BTensor sub = ts::subsequent_mask(int64_t(T));
  for (size_t b = 0; b < B; ++b) {
    for (size_t s = 0; s < S; ++s) src_mask(b, 0, s) = src(b, s) != 0;
    for (size_t t = 0; t < T; ++t)
      for (size_t s = 0; s < T; ++s) tgt_mask(b, t, s) = tgt(b, s) != 0 && sub(0, t, s);
  }
  ts::EncoderDecoder grads = model;
  ts::zero_grad(grads);
  ts::Tensor logp, dlogp;
  {
    ts::EnableGrad grad_mode;
    const ts::Tensor out = model.forward(src, tgt, &src_mask, &tgt_mask);
    logp = model.generator(out);
    dlogp = rand_tensor(rng, ts::shape_of(logp));
    const ts::Tensor dout = model.generator.backward(dlogp, grads.generator);
    model.backward(dout, grads);
  }
  StFile f;
  for (auto& [name, p] : model.named_parameters()) put_t(f, "param." + name, *p);
  for (auto& [name, p] : grads.named_parameters()) put_t(f, "grad." + name, *p);
  put_ids(f, "src", src);
  put_ids(f, "tgt", tgt);
  put_mask(f, "src_mask", src_mask);
  put_mask(f, "tgt_mask", tgt_mask);
  put_t(f, "logp", logp);
  put_t(f, "dlogp", dlogp);
  save_safetensors(path, f, {});
}

}  // namespace

int main(int argc, char** argv) {
  return main_of(argc, argv, "module_dump", module_cases, [](const std::string& dir, bool) {
    model_case(dir + "/model.safetensors", {});
    model_case(dir + "/model004.safetensors", {ts::Activation::ReLU, ts::NormPlace::Post});
  });
}
