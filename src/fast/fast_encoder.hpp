// fast_encoder.hpp: article 000's encoder (TransformerEncoder, eval mode) at full speed.
//
// TransformerEncoder::operator() (nn.hpp) replays PyTorch op by op -- 12 heads x 3 small
// Linears, a bmm per head, a cat -- so that every printed digit equals the twin's. This
// file computes the same function the way a fast inference engine would:
//   1) one (3C, C) projection for Q, K and V of all heads (the per-head weights stacked once)
//   2) the four weight products by a GEMM whose weights are packed once, at construction,
//      into the micro-kernel's panel order (sgemm repacks W on every call: a fifth of its
//      time at T = 128); bias, residual and GELU applied to each finished tile in L1; the
//      LayerNorm output and FFN1's output written straight in the packed order the next
//      product reads. On the AVX-512 and AVX2 routes (src/fast/simd/, chosen at run time) --
//      on the scalar route (or with Gemm::Sgemm) OpenBLAS sgemm; for a few rows (the
//      walkthrough's T = 5, where reading W from memory is the limit) a kernel that
//      streams W once
//   3) per (batch, head): scores = Q K^T / sqrt(D) and P V on the heads' columns of the
//      Q|K|V buffer (leading dimensions / small packs, no per-head tensors), the masked
//      softmax in place between them, the result written straight into the concatenated
//      (B*T, C) buffer
//   4) LayerNorm, softmax, GELU over contiguous rows, written once with xsimd for both
//      vector widths (plain loops on the scalar route; fast:: below), within ~1e-6 of
//      torch's kernels
//   5) threads: one team per forward; each phase splits its work into one chunk per thread,
//      with a barrier between phases; OpenBLAS runs single-threaded inside. LayerNorm splits
//      rows; a weight product (packed GEMM) splits rows x output panels as a grid
//      (gemm_grid below); attention splits (batch, head, block of query rows) (head_row_blocks):
//      at 16 threads every phase of [1,128] and [8,128] has 16 chunks within a few % of
//      each other (layer_split; tests/test_fast_encoder.cpp checks it)
//   6) buffers allocated once per shape, reused by every layer and call.
// Results equal TransformerEncoder::operator() to ~1e-5 (sums round in another order), not
// to the bit: no chapter prints its output as a PyTorch twin value.
// The process-wide switches still apply: MatmulPath::Naive / KernelPath::Naive (a
// chapter's --naive) make it run the plain triple loop and the textbook row kernels.
//
// Introduced in ch07 (the timing of both paths); measured by bench/ (docs/performance.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exact/tensor.hpp"
#include "fast/row_kernels.hpp"  // fast::softmax_rows, ... (the route's row kernels)
#include "fast/thread_pool.hpp"  // set_num_threads, parallel_for

namespace ts {

struct TransformerEncoder;

// A TransformerEncoder with its weights packed for the fast path: Q/K/V of all heads as
// one projection per layer and, with the packed GEMM, every layer weight in panel order
// (a second copy of the layer weights: ~340 MB at BERT-base, ~0.2 s to build). Keeps a
// reference to `encoder` (which must outlive it) and copies weights at construction:
// construct again after changing them. One forward at a time per process (the thread team
// and the buffers are shared).
class FastEncoder {
 public:
  // Which GEMM runs the weight products: Auto = the route's packed GEMM (AVX-512 or AVX2,
  // isa.hpp), else OpenBLAS; Sgemm = OpenBLAS always (to compare the two). The route is
  // the one active when the encoder is built (the panels are packed for it).
  enum class Gemm { Auto, Sgemm };

  explicit FastEncoder(const TransformerEncoder& encoder, Gemm gemm = Gemm::Auto);
  ~FastEncoder();
  FastEncoder(const FastEncoder&) = delete;
  FastEncoder& operator=(const FastEncoder&) = delete;

  // ids (B,T) -> (B,T,C); equals encoder(ids, mask) in eval mode within 1e-4.
  // mask (1 or B,T,S) with 0 = hide, or nullptr. Throws if a dropout is in train mode.
  Tensor operator()(const ITensor& ids, const Tensor* mask = nullptr);
  // x (B,T,C) -> (B,T,C): encoder.layers[i](x, mask), eval mode.
  Tensor layer(size_t i, const Tensor& x, const Tensor* mask = nullptr);

  // Floating-point operations of one forward on (B,T) through `layers` layers (all of
  // them by default), counting the products only: per layer
  //   2*N*C*3C (Q,K,V) + 2*N*C*C (output) + 2*2*N*C*F (FFN) + 2*2*B*H*T*T*D (QK^T, PV),
  // N = B*T. LayerNorm, softmax, GELU and the embeddings are not counted.
  double flops(int64_t B, int64_t T, int64_t layers = -1) const;

  // The GEMM in use, one line, e.g. "packed-weight GEMM, avx2 route, 6x16, AVX2
  // (weights packed once)": the route and the register blocking of its kind of core (isa.hpp).
  std::string backend() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};


// ---- how a team of nt threads splits one layer (fast_encoder.cpp uses these; the tests check them) ----

// A weight product on the packed GEMM, N rows x P panels of outputs: a grid of `rows` row groups
// x `panels` panel groups (rows x panels <= nt, one chunk per thread), the grid whose largest
// chunk (rows x panels) is smallest; row groups no thinner than mr rows (one micro-tile); ties
// go to fewer row groups (a thread then reads only its own panels of W).
struct GemmGrid {
  int rows = 1, panels = 1;
};
GemmGrid gemm_grid(int64_t N, int64_t P, int nt, int mr);
// Thread tid's chunk of that grid: rows [r0,r1) x panels [p0,p1) (empty past rows x panels).
struct GemmChunk {
  int64_t r0 = 0, r1 = 0, p0 = 0, p1 = 0;
};
GemmChunk gemm_chunk(const GemmGrid& g, int64_t N, int64_t P, int tid);

// Attention: `heads` (batch, head) pairs, each head's T query rows cut into the returned number
// of blocks (the fewest that keep the largest thread's share smallest; blocks no thinner than mr
// rows): nt threads take contiguous runs of the heads x blocks units.
int64_t head_row_blocks(int64_t heads, int64_t T, int nt, int mr);

// One phase of a layer as the team splits it: chunks with work, and the largest, smallest and
// mean work of the nt threads' chunks (multiply-adds; LayerNorm: elements).
struct PhaseSplit {
  std::string phase;
  int chunks = 0;
  double largest = 0, smallest = 0, mean = 0;
};
// Every phase of one layer (C, H heads, F) on (B, T) at nt threads, for a packed GEMM of mr x nr.
std::vector<PhaseSplit> layer_split(int64_t C, int64_t H, int64_t F, int64_t B, int64_t T, int nt, int mr, int nr);

}  // namespace ts
