// fast_encoder.hpp: article 000's encoder (TransformerEncoder, eval mode) at full speed.
//
// TransformerEncoder::operator() (nn.hpp) replays PyTorch op by op -- 12 heads x 3 small
// Linears, a bmm per head, a cat -- so that every printed digit equals the twin's. This
// file computes the same function the way a fast inference engine would:
//   1) one (3C, C) projection for Q, K and V of all heads (the per-head weights packed once)
//   2) per (batch, head): scores = Q K^T / sqrt(D) and P V by sgemm on strided views, the
//      softmax in place between them, written straight into the concatenated (B*T, C) buffer
//   3) bias and residual folded into the GEMM's C operand (beta = 1): x + b + a W^T in one pass
//   4) LayerNorm, softmax, GELU: the row kernels of kernels.hpp, rows split over threads
//   5) buffers allocated once per shape, reused by every layer and call.
// Results equal TransformerEncoder::operator() to ~1e-5 (the fused bias/residual add rounds
// in another order), not to the bit: no chapter prints its output as a PyTorch twin value.
// The process-wide switches still apply: MatmulPath::Naive / KernelPath::Naive (a
// chapter's --naive) make it run the plain loops.
//
// Introduced in ch07 (the timing of both paths); measured by bench/ (docs/performance.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "tensor.hpp"

namespace ts {

struct TransformerEncoder;

// Threads used by the fast path: OpenBLAS's threads for the big products and as many
// workers (including the caller) for the row kernels. Default: 1 (like torch here).
void set_num_threads(int n);
int num_threads();

// body(begin, end) over [0, n) split into num_threads() contiguous chunks, run in
// parallel (the caller runs the first); inline when n < 2 * grain.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

// A TransformerEncoder with its Q/K/V weights packed for one projection per layer.
// Keeps a reference to `encoder` (which must outlive it); the Q/K/V weights are copied
// at construction, so re-pack (construct again) after changing them.
class FastEncoder {
 public:
  explicit FastEncoder(const TransformerEncoder& encoder);
  ~FastEncoder();
  FastEncoder(const FastEncoder&) = delete;
  FastEncoder& operator=(const FastEncoder&) = delete;

  // ids (B,T) -> (B,T,C); equals encoder(ids, mask) in eval mode within 1e-4.
  // mask (1 or B,T,S) with 0 = hide, or nullptr. Throws if a dropout is in train mode.
  Tensor operator()(const ITensor& ids, const Tensor* mask = nullptr);
  // x (B,T,C) -> (B,T,C): encoder.layers[i](x, mask), eval mode.
  Tensor layer(size_t i, const Tensor& x, const Tensor* mask = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ts
