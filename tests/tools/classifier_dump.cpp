// classifier_dump: writes what tests/twins/classifier_reference.py checks against PyTorch
// autograd (introduced with ch13). usage: classifier_dump DIR [--quick]
//   DIR/ops.safetensors        the backward beside each module of src/transformer/nn.cpp that
//                              ch13 trains (GELU, LayerNorm, Embeddings, MultiHeadAttention with a
//                              padding mask, FeedForward, TransformerEncoderLayer) and of
//                              EncoderClassifier's [CLS] and mean pooling, on a small
//                              TransformerEncoder: its parameters (param.NAME), each module's
//                              inputs, output, a random upstream gradient, and our gradients
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

#include "exact/kernels.hpp"
#include "exact/rng.hpp"
#include "train/classifier.hpp"
#include "train/numbers.hpp"
#include "transformer/encoder_classifier.hpp"
#include "transformer/grad.hpp"
#include "transformer/nn.hpp"

#include "dump_values.hpp"

using namespace ts::train;
using namespace ts::train::dump;

namespace {

void put_t(StFile& f, const std::string& name, const ts::Tensor& t) {
  f[name] = st_f32(t.data(), std::vector<int64_t>(t.shape().begin(), t.shape().end()));
}

// every gradient of g whose name starts with `under`, as P.grad.REST (REST: the name after `under`)
void put_grads(StFile& f, const std::string& p, ts::TransformerEncoder& g, const std::string& under) {
  for (auto& [name, t] : g.named_parameters())
    if (name.compare(0, under.size(), under) == 0) put_t(f, p + "grad." + name.substr(under.size()), *t);
}

StFile op_cases() {
  Rng rng(17);
  StFile f;
  ts::EnableGrad grad_mode;
  {  // GELU: x (40), values out to +-6
    const ts::Tensor x = rand_tensor(rng, {40}, 2.5f), dout = rand_tensor(rng, {40});
    put_t(f, "gelu.x", x);
    put_t(f, "gelu.out", ts::gelu(x));
    put_t(f, "gelu.dout", dout);
    put_t(f, "gelu.dx", ts::gelu_backward(x, dout));
  }
  // a small encoder (V = 6, 5 positions, C = 8, H = 2, F = 16, one layer), eval mode; its LayerNorms random
  ts::Config k;
  k.vocab_size = 6, k.hidden_size = 8, k.num_attention_heads = 2, k.intermediate_size = 16;
  k.hidden_dropout_prob = 0.0, k.max_position_embeddings = 5, k.num_hidden_layers = 1;
  ts::manual_seed(5);
  ts::TransformerEncoder enc(k);
  enc.train(false);
  for (auto& [name, t] : enc.named_parameters())
    if (name.find("layer_norm") != std::string::npos) *t = rand_tensor(rng, ts::shape_of(*t));
  for (auto& [name, t] : enc.named_parameters()) put_t(f, "param." + name, *t);
  ts::TransformerEncoder g = enc;
  // ids (2,4) with padding in row 1; the padding mask (2,4,4), 0 = hide
  const std::vector<int64_t> id = {5, 1, 3, 2, 5, 4, 0, 0};
  ts::ITensor ids = ts::ITensor::from_shape({2, 4});
  std::copy(id.begin(), id.end(), ids.data());
  f["ids"] = st_i64(ids.data(), {2, 4});
  ts::Tensor mask = ts::Tensor::from_shape({2, 4, 4});
  for (size_t b = 0; b < 2; ++b)
    for (size_t q = 0; q < 4; ++q)
      for (size_t s = 0; s < 4; ++s) mask(b, q, s) = ids(b, s) != 0 ? 1.0f : 0.0f;
  put_t(f, "mask", mask);
  {  // nn.LayerNorm (layer_norm_1): x (2,4,8) of scale 3
    ts::zero_grad(g);
    const ts::Tensor x = rand_tensor(rng, {2, 4, 8}, 3.0f), dout = rand_tensor(rng, {2, 4, 8});
    const ts::LayerNorm& ln = enc.layers[0].layer_norm_1();
    put_t(f, "layernorm.x", x);
    put_t(f, "layernorm.out", ln(x));
    put_t(f, "layernorm.dout", dout);
    put_t(f, "layernorm.dx", ln.backward(x, dout, g.layers[0].layer_norm_1()));
    put_grads(f, "layernorm.", g, "layers.0.layer_norm_1.");
  }
  {  // Embeddings: token + position, LayerNorm (eps 1e-12), dropout (off)
    ts::zero_grad(g);
    const ts::Tensor out = enc.embeddings(ids), dout = rand_tensor(rng, ts::shape_of(out));
    enc.embeddings.backward(ids, dout, g.embeddings);
    put_t(f, "embeddings.out", out);
    put_t(f, "embeddings.dout", dout);
    put_grads(f, "embeddings.", g, "embeddings.");
  }
  {  // MultiHeadAttention: query (2,4,8), key and value different, the padding mask
    ts::zero_grad(g);
    const ts::Tensor query = rand_tensor(rng, {2, 4, 8}), key = rand_tensor(rng, {2, 4, 8}),
                     value = rand_tensor(rng, {2, 4, 8}), dout = rand_tensor(rng, {2, 4, 8});
    ts::MultiHeadedAttention& mha = enc.layers[0].self_attn;
    const ts::BTensor keep = ts::keep_where_nonzero(mask);
    const ts::Tensor out = mha(query, key, value, &keep);
    const ts::MultiHeadedAttention::InputGrads d = mha.backward(dout, g.layers[0].self_attn);
    for (auto [n, t] : {std::pair<const char*, const ts::Tensor*>{"query", &query}, {"key", &key}, {"value", &value},
                        {"out", &out}, {"dout", &dout}, {"dquery", &d.dquery}, {"dkey", &d.dkey}, {"dvalue", &d.dvalue}})
      put_t(f, std::string("mha.") + n, *t);
    put_grads(f, "mha.", g, "layers.0.attention.");
  }
  {  // FeedForward: x (2,4,8)
    ts::zero_grad(g);
    const ts::Tensor x = rand_tensor(rng, {2, 4, 8}), dout = rand_tensor(rng, {2, 4, 8});
    const ts::FeedForward& ff = enc.layers[0].feed_forward;
    put_t(f, "ffn.x", x);
    put_t(f, "ffn.out", ff(x));
    put_t(f, "ffn.dout", dout);
    put_t(f, "ffn.dx", ff.backward(dout, g.layers[0].feed_forward));
    put_grads(f, "ffn.", g, "layers.0.feed_forward.");
  }
  {  // TransformerEncoderLayer (pre-LN): x (2,4,8), the padding mask
    ts::zero_grad(g);
    const ts::Tensor x = rand_tensor(rng, {2, 4, 8}), dout = rand_tensor(rng, {2, 4, 8});
    const ts::TransformerEncoderLayer& layer = enc.layers[0];
    put_t(f, "layer.x", x);
    const ts::BTensor keep = ts::keep_where_nonzero(mask);
    put_t(f, "layer.out", layer(x, &keep));
    put_t(f, "layer.dout", dout);
    put_t(f, "layer.dx", layer.backward(dout, g.layers[0]));
    put_grads(f, "layer.", g, "layers.0.");
  }
  for (bool mean : {false, true}) {  // EncoderClassifier's pooling: x (2,4,8) -> (2,8)
    ts::EncoderClassifier m;
    m.mean_pool = mean, m.pad_id = 0;
    const std::string p = mean ? "pool_mean." : "pool_cls.";
    const ts::Tensor x = rand_tensor(rng, {2, 4, 8}), dout = rand_tensor(rng, {2, 8});
    put_t(f, p + "x", x);
    put_t(f, p + "out", m.pool(x, ids));
    put_t(f, p + "dout", dout);
    put_t(f, p + "dx", m.pool_backward(dout, ids, 4));
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  return dump::main_of(argc, argv, "classifier_dump", op_cases, [](const std::string& dir, bool quick) {
    ClassifierConfig cfg;
    cfg.vocab = classifier_vocab();
    cfg.dropout = 0.0;
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
      classifier_forward(m, w, bs[0], false);
      classifier_loss(w, bs[0], cfg.classes);
      classifier_backward(m, w, bs[0]);
      save_safetensors(dir + (mean ? "/grads0_mean.safetensors" : "/grads0.safetensors"),
                       per_param(w.grad.named_parameters()), {});
    }
    cfg.mean_pool = false;
    {  // 20 Adam steps, dropout off
      Classifier m = init_classifier(cfg, 3);
      Adam adam;
      ClsWorkspace w;
      std::vector<float> loss;
      for (const ClsBatch& b : bs) {
        classifier_forward(m, w, b, false);
        loss.push_back(classifier_loss(w, b, cfg.classes));
        classifier_backward(m, w, b);
        adam.update(m.model.named_parameters(), w.grad.named_parameters());
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
    ts::manual_seed(4);  // the dropout masks
    for (int s = 0; s < 200; ++s) {
      const ClsBatch b = make_cls_batch(next_numbers(ep2));
      classifier_forward(m, w, b, true);
      classifier_loss(w, b, cfg.classes);
      classifier_backward(m, w, b);
      adam.update(m.model.named_parameters(), w.grad.named_parameters());
    }
    save_classifier(dir + "/trained", m, adam);
    const ClsBatch held = make_cls_batch(number_split().held_out);
    classifier_forward(m, w, held, false);
    StFile out;
    out["ids"] = st_i64(held.ids.data(), {held.B, held.T});
    out["logits"] = st_f32(w.logits.data(), {held.B, cfg.classes});
    save_safetensors(dir + "/logits.safetensors", out, {});
  });
}
