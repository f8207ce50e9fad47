// transformer/encoder_classifier.cpp: see encoder_classifier.hpp. Reads like nanoGPT's GPT.forward:
// the modules of transformer_encoder.hpp called in order, each backward right below its forward.
#include "transformer/encoder_classifier.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "exact/matmul.hpp"
#include "transformer/grad.hpp"

namespace ts {

EncoderClassifier::EncoderClassifier(const Config& config, int64_t num_labels, bool mean_pool, int64_t pad_id)
    : mean_pool(mean_pool), pad_id(pad_id) {
  encoder = TransformerEncoder(config);
  encoder.embeddings.dropout = Dropout(config.hidden_dropout_prob);  // article 000's nn.Dropout() is 0.5: one rate here
  dropout = Dropout(config.hidden_dropout_prob);
  classifier = Linear(config.hidden_size, num_labels);
}

Tensor EncoderClassifier::operator()(const ITensor& ids) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("EncoderClassifier", ids);
  // 1) hide the padded keys from every query   (B,T,T)
  const Tensor mask = padding_mask(ids);
  // 2) x = Encoder(ids)   (B,T) -> (B,T,C)
  const Tensor x = encoder(ids, &mask);
  if (grad_enabled()) saved.mask = mask;
  // 3) logits = head(x)   (B,T,C) -> (B,K)
  return head(x, ids);
}

Tensor EncoderClassifier::padding_mask(const ITensor& ids) const {
  // mask[b,q,s] = ids[b,s] != pad   (B,T,T), 0 = hide
  const size_t B = ids.shape()[0], T = ids.shape()[1];
  Tensor mask = Tensor::from_shape({B, T, T});
  for (size_t b = 0; b < B; ++b)
    for (size_t q = 0; q < T; ++q)
      for (size_t s = 0; s < T; ++s) mask(b, q, s) = ids(b, s) != pad_id ? 1.0f : 0.0f;
  return mask;
}

static const CodeSite kHeadForwardSite{__FILE__, __LINE__ + 1, "EncoderClassifier::head"};
Tensor EncoderClassifier::head(const Tensor& x, const ITensor& ids) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("head", x);
  // 1) one vector per sentence   (B,T,C) -> (B,C)
  Tensor pooled = pool(x, ids);
  // 2) dropout, then the classifier   (B,C) -> (B,K)
  Tensor dropped = dropout(pooled);
  if (grad_enabled()) saved.ids = ids, saved.x = x, saved.pooled = pooled, saved.dropped = dropped;
  return classifier(dropped);
}

// the line below + 1: pool's own, for classifier_pool_site()
static const CodeSite kPoolSite{__FILE__, __LINE__ + 1, "EncoderClassifier::pool"};
Tensor EncoderClassifier::pool(const Tensor& x, const ITensor& ids) const {
  // [CLS]: out[b] = x[b,0];   mean: out[b] = sum_{t: ids[b,t] != pad} x[b,t] / count_b   (B,T,C) -> (B,C)
  const size_t B = x.shape()[0], T = x.shape()[1], C = x.shape()[2];
  Tensor out = Tensor::from_shape({B, C});
  out.fill(0.0f);
  for (size_t b = 0; b < B; ++b) {
    float* o = out.data() + b * C;
    if (!mean_pool) {
      std::copy_n(x.data() + b * T * C, C, o);
      continue;
    }
    float n = 0;
    for (size_t t = 0; t < T; ++t)
      if (ids(b, t) != pad_id) {
        for (size_t c = 0; c < C; ++c) o[c] += x.data()[(b * T + t) * C + c];
        n += 1;
      }
    for (size_t c = 0; c < C; ++c) o[c] /= n;
  }
  return out;
}

Tensor EncoderClassifier::pool_backward(const Tensor& dpooled, const ITensor& ids, size_t T) const {
  // [CLS]: dx[b,0] = dpooled[b];   mean: dx[b,t] = dpooled[b] / count_b for every real t   (B,C) -> (B,T,C)
  const size_t B = dpooled.shape()[0], C = dpooled.shape()[1];
  Tensor dx = Tensor::from_shape({B, T, C});
  dx.fill(0.0f);
  for (size_t b = 0; b < B; ++b) {
    const float* d = dpooled.data() + b * C;
    if (!mean_pool) {
      std::copy_n(d, C, dx.data() + b * T * C);
      continue;
    }
    float n = 0;
    for (size_t t = 0; t < T; ++t) n += ids(b, t) != pad_id ? 1.0f : 0.0f;
    for (size_t t = 0; t < T; ++t)
      if (ids(b, t) != pad_id)
        for (size_t c = 0; c < C; ++c) dx.data()[(b * T + t) * C + c] = d[c] / n;
  }
  return dx;
}

static const CodeSite kBackwardSite{__FILE__, __LINE__ + 1, "EncoderClassifier::backward"};
void EncoderClassifier::backward(const Tensor& dlogits, EncoderClassifier& grad) const {
  TS_CODE_SITE();
  if (saved.dropped.dimension() == 0) throw std::logic_error("EncoderClassifier.backward: no forward under EnableGrad");
  // 3) the head: dd = classifier.backward(dropped, dlogits)   (B,C);  dpooled = dropout.backward(dd)
  const Tensor dd = classifier.backward(saved.dropped, dlogits, grad.classifier);
  require_forward(dropout.ready_for(dd), "dropout", kHeadForwardSite, kBackwardSite);
  const Tensor dpooled = dropout.backward(dd);
  //    dx = pool_backward(dpooled)   (B,T,C)
  const Tensor dx = pool_backward(dpooled, saved.ids, saved.x.shape()[1]);
  // 2) the encoder, its layers last first, then the embeddings
  encoder.backward(dx, grad.encoder);
}

std::vector<std::pair<std::string, Tensor*>> EncoderClassifier::named_parameters() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (auto& [name, p] : encoder.named_parameters()) out.push_back({"encoder." + name, p});
  out.push_back({"classifier.weight", &classifier.weight});
  out.push_back({"classifier.bias", &classifier.bias});
  return out;
}

void EncoderClassifier::train(bool on) {
  encoder.train(on);
  dropout.training = on;
}

void zero_grad(EncoderClassifier& grads) {
  for (auto& [name, p] : grads.named_parameters()) p->fill(0.0f);
}

std::string classifier_pool_site() {
  return code_site_path(kPoolSite.file) + ":" + std::to_string(kPoolSite.line) + " " + kPoolSite.func;
}

}  // namespace ts
