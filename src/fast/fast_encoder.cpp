// fast_encoder.cpp: article 000's encoder forward, fused for speed (see fast_encoder.hpp).
//
// Read transformer/nn.cpp first: it is the same computation written the way the article
// writes it. Here every tensor of one layer lives in a preallocated buffer of rows (N = B*T):
//   x    (N,C)   the residual stream (the output tensor itself, updated in place)
//   ln   (N,C)   LayerNorm output           qkv  (N,3C)  Q | K | V of all heads
//   ctx  (N,C)   attention output, heads side by side
//   ff   (N,F)   GELU(ln W1^T + b1)         scores (T,S) per thread: one head's weights
// The fast path's four jobs live side by side in src/fast/:
//   simd/         the kernels, once per instruction set (a "route", chosen at run time:
//                 isa.hpp): row kernels, the packed GEMM's micro-kernel and packers
//   row_kernels   the active route's softmax / LayerNorm / GELU for other callers
//   thread_pool   the team of threads and its barrier
//   packed_gemm   a Linear's weights packed once, and the products that are not packed
//   fast_encoder  this file: the encoder's phases, run by the team
// The weight products run on the route's packed GEMM (AVX-512 or AVX2), else (TS_ISA=scalar,
// or Gemm::Sgemm) as column-major sgemm calls through ts::gemm; on the --naive path always
// through ts::gemm, i.e. the plain triple loop. For sgemm, a row-major (R,K) block with row
// stride ld is a column-major (K,R) one.
#include "fast/fast_encoder.hpp"
#include "base/code_site.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "fast/isa.hpp"
#include "fast/packed_gemm.hpp"
#include "fast/simd/route.hpp"
#include "fast/thread_pool.hpp"
#include "transformer/nn.hpp"
#include "transformer/transformer_encoder.hpp"

namespace ts {
namespace {
// While alive: OpenBLAS runs one thread per call (the team's threads call it side by side).
struct BlasSingleThreaded {
  int saved;
  BlasSingleThreaded() : saved(blas_threads()) {
    if (saved > 1) set_blas_threads(1);
  }
  ~BlasSingleThreaded() {
    if (saved > 1) set_blas_threads(saved);
  }
  BlasSingleThreaded(const BlasSingleThreaded&) = delete;
  BlasSingleThreaded& operator=(const BlasSingleThreaded&) = delete;
};
}  // namespace

struct FastEncoder::Impl {
  const TransformerEncoder& enc;
  const simd::Route& rt;  // the kernels, chosen when the encoder is built (the panels' layout)
  bool packed = false;    // the route's packed GEMM (else OpenBLAS sgemm / the few-rows kernel)
  int64_t kNR = 1;        // outputs per panel of the route's packed GEMM
  int64_t C = 0, H = 0, D = 0, F = 0;
  struct Layer {
    FastLinear qkv, out, ff1, ff2;
  };
  std::vector<Layer> layers;
  // buffers, sized for the largest (N, T, threads) seen
  std::vector<float> ln, qkv, ctx, ff, scores;
  std::vector<Aligned> apack;  // per thread: one head's K and V packed as panels

  Impl(const TransformerEncoder& e, Gemm gemm) : enc(e), rt(simd::route()), layers(e.layers.size()) {
    packed = gemm != Gemm::Sgemm && rt.packed_product != nullptr;
    if (packed) kNR = rt.nr;
    if (e.layers.empty()) return;
    const MultiHeadedAttention& a0 = e.layers[0].self_attn;
    H = a0.h;
    C = int64_t(a0.output_linear().in_features);
    D = C / H;
    F = e.layers[0].feed_forward.linear_1.out_features;
    for (size_t li = 0; li < e.layers.size(); ++li) {
      const TransformerEncoderLayer& layer = e.layers[li];
      Layer& L = layers[li];
      // Q/K/V of all heads stacked (3C, C): rows [0,C) = q of heads 0..H-1, [C,2C) = k,
      // [2C,3C) = v -- the order of the qkv buffer's columns
      L.qkv.own_w.resize(size_t(3 * C * C));
      L.qkv.own_bias.resize(size_t(3 * C));
      for (int64_t h = 0; h < H; ++h) {
        // head h's q, k, v Linears (article 000's layout of the one attention)
        const std::vector<Linear>& lin = layer.self_attn.linears;
        const Linear* parts[3] = {&lin[size_t(3 * h)], &lin[size_t(3 * h + 1)], &lin[size_t(3 * h + 2)]};
        for (int64_t p = 0; p < 3; ++p) {
          const int64_t row0 = p * C + h * D;
          std::copy_n(parts[p]->weight.data(), D * C, L.qkv.own_w.data() + row0 * C);
          std::copy_n(parts[p]->bias.data(), D, L.qkv.own_bias.data() + row0);
        }
      }
      L.qkv.set(L.qkv.own_w.data(), L.qkv.own_bias.data(), 3 * C, C, packed ? &rt : nullptr);  // (the naive path reads own_w)
      const Linear& o = layer.self_attn.output_linear();
      const Linear& l1 = layer.feed_forward.linear_1;
      const Linear& l2 = layer.feed_forward.linear_2;
      L.out.set(o.weight.data(), o.bias.data(), C, C, packed ? &rt : nullptr);
      L.ff1.set(l1.weight.data(), l1.bias.data(), F, C, packed ? &rt : nullptr);
      L.ff2.set(l2.weight.data(), l2.bias.data(), C, F, packed ? &rt : nullptr);
    }
  }

  void reserve(int64_t N, int64_t T, int nt) {
    auto grow = [](std::vector<float>& v, int64_t n) {
      if (int64_t(v.size()) < n) v.resize(size_t(n));
    };
    grow(ln, N * C);
    grow(qkv, N * 3 * C);
    grow(ctx, N * C);
    grow(ff, N * F);
    grow(scores, int64_t(nt) * T * T);
    if (packed) {
      if (int(apack.size()) < nt) apack = std::vector<Aligned>(size_t(nt));
      for (Aligned& a : apack) a.resize(size_t(attention_scratch(T)));
    }
  }

  // ---- the phases of one layer, each run by every thread `tid` of a team of `nt` ----

  // y (N, M) = epilogue(x (N, K) W^T) for the team's share of it.
  // Packed GEMM: each thread runs its chunk of the rows x panels grid (gemm_grid: at 16
  // threads and C = 768 the 24 panels alone would give 8 threads two and 8 threads one), x
  // read in place (x is not packed). OpenBLAS: each thread a share of the M output columns.
  void linear(const FastLinear& L, const float* x, int64_t N, float* y, int64_t ldy, const simd::Epilogue& epi, int tid,
              int nt) {
    if (packed && matmul_path() == MatmulPath::Blas) {
      const int64_t P = (L.M + kNR - 1) / kNR;
      const GemmChunk ch = gemm_chunk(gemm_grid(N, P, nt, rt.mr), N, P, tid);
      if (ch.r0 < ch.r1 && ch.p0 < ch.p1)
        rt.packed_product(x + ch.r0 * L.K, L.K, ch.r1 - ch.r0, L.K, L.panels.p, L.M, ch.p0, ch.p1, y + ch.r0 * ldy, ldy,
                          epi);
      return;
    }
    // OpenBLAS (or, on the naive path, the triple loop): prepare C, add the product, then GELU
    const auto [c0, c1] = part_of(L.M, nt, tid, 16);
    if (c0 >= c1) return;
    for (int64_t r = 0; r < N; ++r) {
      float* yr = y + r * ldy;
      if (!epi.residual) std::fill(yr + c0, yr + c1, 0.0f);
      if (epi.bias)
        for (int64_t i = c0; i < c1; ++i) yr[i] += epi.bias[i];
    }
    product(rt, x, N, L.K, L.w, c0, c1, y, ldy);
    if (!epi.gelu) return;
    if (kernel_path() == KernelPath::Naive) {
      for (int64_t r = 0; r < N; ++r) naive_kernels.gelu(y + r * ldy + c0, y + r * ldy + c0, c1 - c0);
    } else {
      rt.bias_gelu_rows(y + c0, y + c0, N, c1 - c0, ldy, nullptr);
    }
  }

  // ln = LayerNorm(x) on the team's share of the rows
  void norm(const LayerNorm& n, const float* x, int64_t N, int tid, int nt) {
    const auto [r0, r1] = part_of(N, nt, tid);
    if (r0 >= r1) return;
    if (kernel_path() == KernelPath::Naive)
      naive_kernels.layer_norm_rows(x + r0 * C, ln.data() + r0 * C, r1 - r0, C, n.weight.data(), n.bias.data(), float(n.eps));
    else
      rt.layer_norm_rows(x + r0 * C, ln.data() + r0 * C, r1 - r0, C, n.weight.data(), n.bias.data(), float(n.eps));
  }

  // one (batch, head), query rows [t0,t1): ctx[b, t0:t1, h*D:(h+1)*D] = softmax(Q K^T / sqrt(D) [masked]) V
  //   p: this thread's (T,S) scratch for the weights; scratch: its packing space; pack: whether
  //   K and V of this head must be packed into scratch (false: the thread's previous unit
  //   packed this same head there)
  void attention_head(int64_t b, int64_t h, int64_t T, int64_t t0, int64_t t1, const Tensor* mask, float* p,
                      float* scratch, bool pack) {
    const int64_t S = T, ld = 3 * C, R = t1 - t0;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));  // D = 64: 1/8, exact
    const float* q0 = qkv.data() + b * T * ld + h * D;              // (T,D), row stride 3C
    const float* k = q0 + C;                                        // (S,D)
    const float* v = q0 + 2 * C;                                    // (S,D)
    const float* q = q0 + t0 * ld;                                  // (R,D): this unit's queries
    const float* m = mask ? mask->data() + (mask->shape()[0] == 1 ? 0 : b * T * S) + t0 * S : nullptr;
    float* out = ctx.data() + (b * T + t0) * C + h * D;             // (R,D), row stride C
    if (packed && matmul_path() == MatmulPath::Blas) {
      attention_head_packed(q, k, v, ld, R, S, scale, m, p, out, scratch, pack);
      return;
    }
    // 1) p (R,S) = Q K^T / sqrt(D): column-major (S,R) = K (S,D) . Q^T (D,R)
    gemm('t', 'n', S, R, D, scale, k, ld, q, ld, 0.0f, p, S);
    // 2) p = softmax(masked_fill(p, mask == 0, -inf)) over S
    masked_softmax(p, R, S, m);
    // 3) out (R,D) = P (R,S) V (S,D): column-major (D,R) = V^T (D,S) . P^T (S,R)
    gemm('n', 'n', D, R, S, 1.0f, v, ld, p, S, 0.0f, out, C);
  }

  // Floats of packing space one head needs (T = S), each part on a 64-byte boundary.
  // p (T,S) <- softmax(masked_fill(p, m == 0, -inf)) over S, in place; m (T,S) or nullptr.
  // Both attention routes below share it; --naive takes the textbook loops.
  void masked_softmax(float* p, int64_t T, int64_t S, const float* m) {
    if (kernel_path() == KernelPath::Naive) {
      if (m)
        for (int64_t j = 0; j < T * S; ++j)
          if (m[j] == 0.0f) p[j] = -std::numeric_limits<float>::infinity();
      naive_kernels.softmax_rows(p, p, T, S);
    } else {
      rt.softmax_rows(p, p, T, S, m);
    }
  }

  int64_t attention_scratch(int64_t T) const {
    const int64_t Sp = (T + kNR - 1) / kNR * kNR, Dp = (D + kNR - 1) / kNR * kNR;
    auto up = [](int64_t n) { return (n + 15) / 16 * 16; };
    return up(Sp * D) + up(Dp * T);
  }

  // The same with the packed micro-tiles: K (scaled) and V packed as panels, the rows of Q
  // and P read where they are.
  void attention_head_packed(const float* q, const float* k, const float* v, int64_t ld, int64_t T, int64_t S,
                             float scale, const float* m, float* p, float* out, float* scratch, bool pack) {
    const int64_t Sp = (S + kNR - 1) / kNR * kNR;
    auto up = [](int64_t n) { return (n + 15) / 16 * 16; };
    float* kp = scratch;           // (Sp, D) K / sqrt(D) in panels
    float* vp = kp + up(Sp * D);   // V in panels of nr features
    const simd::Epilogue none;
    // 1) p (T,S) = Q K^T / sqrt(D): rows of Q against panels of keys (1/sqrt(D) folded
    //    into the packed K: a power of two for D = 64, so the product is unchanged)
    if (pack) rt.pack_panels(k, ld, S, D, scale, kp);
    rt.packed_product(q, ld, T, D, kp, S, 0, (S + kNR - 1) / kNR, p, S, none);
    // 2) p = softmax(masked_fill(p, mask == 0, -inf)) over S
    masked_softmax(p, T, S, m);
    // 3) out (T,D) = P (T,S) V (S,D): rows of P against panels of features of V
    if (pack) rt.pack_panels_kmajor(v, ld, D, S, vp);
    rt.packed_product(p, S, T, S, vp, D, 0, (D + kNR - 1) / kNR, out, C, none);
  }

  // x (N,C) <- layer li (x), in place; every thread of the team calls it.
  void run_layer(size_t li, float* x, int64_t B, int64_t T, const Tensor* mask, int tid, int nt, Barrier& sync) {
    const TransformerEncoderLayer& L = enc.layers[li];
    const Layer& W = layers[li];
    const int64_t N = B * T;
    // 1) ln = LN1(x)                                                    (N,C)
    norm(L.layer_norm_1(), x, N, tid, nt);
    sync.wait();
    // 2) qkv = ln Wqkv^T + bqkv, the team splits the 3C columns         (N,3C)
    linear(W.qkv, ln.data(), N, qkv.data(), 3 * C, simd::Epilogue{W.qkv.bias, false, false}, tid, nt);
    sync.wait();
    // 3) ctx = the heads side by side, the team splits (b, h, block of query rows)   (N,C)
    {
      float* p = scores.data() + int64_t(tid) * T * T;  // this thread's (T,S) scratch
      float* scratch = packed ? apack[size_t(tid)].p : nullptr;
      const int64_t blocks = head_row_blocks(B * H, T, nt, packed ? rt.mr : 1);
      const auto [u0, u1] = part_of(B * H * blocks, nt, tid);
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t i = u / blocks;  // (b, h) = (i / H, i % H)
        const auto [t0, t1] = part_of(T, int(blocks), int(u % blocks));
        if (t0 < t1) attention_head(i / H, i % H, T, t0, t1, mask, p, scratch, u == u0 || (u - 1) / blocks != i);
      }
    }
    sync.wait();
    // 4) x = x + (ctx Wo^T + bo), the team splits the C columns         (N,C)
    linear(W.out, ctx.data(), N, x, C, simd::Epilogue{W.out.bias, true, false}, tid, nt);
    sync.wait();
    // 5) ln = LN2(x)                                                    (N,C)
    norm(L.layer_norm_2(), x, N, tid, nt);
    sync.wait();
    // 6) ff = GELU(ln W1^T + b1), the team splits the F columns         (N,F)
    linear(W.ff1, ln.data(), N, ff.data(), F, simd::Epilogue{W.ff1.bias, false, true}, tid, nt);
    sync.wait();
    // 7) x = x + (ff W2^T + b2), the team splits the C columns          (N,C)
    linear(W.ff2, ff.data(), N, x, C, simd::Epilogue{W.ff2.bias, true, false}, tid, nt);
    sync.wait();
  }

  void check_mask(const Tensor* mask, int64_t B, int64_t T) const {
    if (!mask) return;
    if (mask->dimension() != 3 || int64_t(mask->shape()[1]) != T || int64_t(mask->shape()[2]) != T ||
        (mask->shape()[0] != 1 && int64_t(mask->shape()[0]) != B))
      throw std::invalid_argument("FastEncoder: mask must be (1,T,T) or (B,T,T)");
  }

  // x (B,T,C) <- layers [first, last) applied to x, in place.
  void forward_layers(Tensor& x, size_t first, size_t last, const Tensor* mask) {
    if (x.dimension() != 3 || int64_t(x.shape()[2]) != C)
      throw std::invalid_argument("FastEncoder: input must be (B,T," + std::to_string(C) + ")");
    for (size_t li = first; li < last; ++li)
      if (enc.layers[li].feed_forward.dropout.training)
        throw std::invalid_argument("FastEncoder: eval mode only (call encoder.train(false) first)");
    const int64_t B = int64_t(x.shape()[0]), T = int64_t(x.shape()[1]);
    check_mask(mask, B, T);
    const int nt = std::min(num_threads(), team_size());
    reserve(B * T, T, nt);
    const BlasSingleThreaded single;  // the team's threads call sgemm side by side
    Barrier sync(nt);
    float* data = x.data();
    auto team = [&](int tid) {
      for (size_t li = first; li < last; ++li) run_layer(li, data, B, T, mask, tid, nt, sync);
    };
    if (nt == 1)
      team(0);
    else
      team_run(team);
  }

  double flops(int64_t B, int64_t T, int64_t layers_run) const {
    const double N = double(B) * double(T);
    const double per_layer = 2 * N * C * (3 * C) + 2 * N * C * C + 2 * 2 * N * C * F + 2 * 2 * double(B) * H * T * T * D;
    return per_layer * double(layers_run < 0 ? int64_t(enc.layers.size()) : layers_run);
  }
};

FastEncoder::FastEncoder(const TransformerEncoder& encoder, Gemm gemm) : impl_(std::make_unique<Impl>(encoder, gemm)) {}
FastEncoder::~FastEncoder() = default;

Tensor FastEncoder::operator()(const ITensor& ids, const Tensor* mask) {
  TS_CODE_SITE();
  // x = Embeddings(ids) (the exact path: a lookup and one LayerNorm); then the N layers,
  // fused, in place on x
  // (B,T) -> (B,T,C)
  if (impl_->enc.embeddings.dropout.training)
    throw std::invalid_argument("FastEncoder: eval mode only (call encoder.train(false) first)");
  Tensor x = impl_->enc.embeddings(ids);
  impl_->forward_layers(x, 0, impl_->enc.layers.size(), mask);
  return x;
}

Tensor FastEncoder::layer(size_t i, const Tensor& x_in, const Tensor* mask) {
  // x (B,T,C) -> (B,T,C)
  if (i >= impl_->enc.layers.size()) throw std::out_of_range("FastEncoder: no layer " + std::to_string(i));
  Tensor x = x_in;
  impl_->forward_layers(x, i, i + 1, mask);
  return x;
}

double FastEncoder::flops(int64_t B, int64_t T, int64_t layers) const { return impl_->flops(B, T, layers); }

std::string FastEncoder::backend() const {
  const std::string isa = isa_name(impl_->rt.isa);
  return impl_->packed ? "packed-weight GEMM, " + isa + " route, " + impl_->rt.blocking + " (weights packed once)"
                       : "OpenBLAS sgemm (" + blas_core() + "), " + isa + " row kernels";
}

GemmGrid gemm_grid(int64_t N, int64_t P, int nt, int mr) {
  GemmGrid best;
  int64_t best_cost = -1;
  const int64_t max_rows = std::max<int64_t>(1, N / std::max(mr, 1));  // row groups of >= mr rows
  for (int rg = 1; rg <= nt && rg <= max_rows; ++rg) {
    const int pg = nt / rg;
    const int64_t cost = (N + rg - 1) / rg * ((P + pg - 1) / pg);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = {rg, pg};
    }
  }
  return best;
}

GemmChunk gemm_chunk(const GemmGrid& g, int64_t N, int64_t P, int tid) {
  if (tid >= g.rows * g.panels) return {};
  const auto [r0, r1] = part_of(N, g.rows, tid / g.panels);
  const auto [p0, p1] = part_of(P, g.panels, tid % g.panels);
  return {r0, r1, p0, p1};
}

int64_t head_row_blocks(int64_t heads, int64_t T, int nt, int mr) {
  int64_t best = 1, best_cost = -1;
  const int64_t max_blocks = std::max<int64_t>(1, T / std::max(mr, 1));
  for (int64_t s = 1; s <= max_blocks; ++s) {
    const int64_t cost = (heads * s + nt - 1) / nt * ((T + s - 1) / s);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = s;
    }
  }
  return best;
}

std::vector<PhaseSplit> layer_split(int64_t C, int64_t H, int64_t F, int64_t B, int64_t T, int nt, int mr, int nr) {
  const int64_t N = B * T, D = C / H;
  std::vector<PhaseSplit> out;
  auto add = [&](const std::string& name, const std::vector<double>& work) {
    PhaseSplit ph{name, 0, 0, work.empty() ? 0 : work[0], 0};
    for (double w : work) {
      ph.chunks += w > 0;
      ph.largest = std::max(ph.largest, w);
      ph.smallest = std::min(ph.smallest, w);
      ph.mean += w / double(work.size());
    }
    out.push_back(ph);
  };
  auto norm = [&](const std::string& name) {  // fast_encoder.cpp's norm(): rows
    std::vector<double> w;
    for (int tid = 0; tid < nt; ++tid) {
      const auto [r0, r1] = part_of(N, nt, tid);
      w.push_back(double(r1 - r0) * double(C));
    }
    add(name, w);
  };
  auto linear = [&](const std::string& name, int64_t M, int64_t K) {  // linear(): the grid
    const int64_t P = (M + nr - 1) / nr;
    const GemmGrid g = gemm_grid(N, P, nt, mr);
    std::vector<double> w;
    for (int tid = 0; tid < nt; ++tid) {
      const GemmChunk ch = gemm_chunk(g, N, P, tid);
      const int64_t outputs = std::max<int64_t>(0, std::min(M, ch.p1 * nr) - ch.p0 * nr);
      w.push_back(ch.p1 > ch.p0 ? double(ch.r1 - ch.r0) * double(outputs) * double(K) : 0.0);
    }
    add(name, w);
  };
  norm("LayerNorm 1");
  linear("Q|K|V", 3 * C, C);
  {  // run_layer's attention: units of (b, h, block of query rows)
    const int64_t blocks = head_row_blocks(B * H, T, nt, mr);
    std::vector<double> w;
    for (int tid = 0; tid < nt; ++tid) {
      const auto [u0, u1] = part_of(B * H * blocks, nt, tid);
      double sum = 0;
      for (int64_t u = u0; u < u1; ++u) {
        const auto [t0, t1] = part_of(T, int(blocks), int(u % blocks));
        sum += 2.0 * double(t1 - t0) * double(T) * double(D);  // Q K^T and P V
      }
      w.push_back(sum);
    }
    add("attention", w);
  }
  linear("output", C, C);
  norm("LayerNorm 2");
  linear("FFN 1", F, C);
  linear("FFN 2", C, F);
  return out;
}

}  // namespace ts
