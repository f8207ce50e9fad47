// fast_encoder.cpp: article 000's encoder forward, fused for speed (see fast_encoder.hpp).
//
// Read nn.cpp first: it is the same computation written the way the article writes it.
// Here every tensor of one layer lives in a preallocated buffer of rows (N = B*T rows):
//   x    (N,C)   the residual stream            ln   (N,C)   LayerNorm output
//   qkv  (N,3C)  Q | K | V of all heads         ctx  (N,C)   attention output, heads side by side
//   ff   (N,F)   GELU(ln W1^T + b1)             scores (T,S) per worker: one head's weights
// Products are column-major sgemm calls through ts::gemm (so --naive still switches them to
// the plain loop); a row-major (R,K) block with row stride ld is a column-major (K,R) one.
#include "fast_encoder.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels.hpp"
#include "matmul.hpp"
#include "nn.hpp"

namespace ts {

// ================================================================================
// 1) A small pool: the caller plus (threads - 1) workers, one chunk each
// ================================================================================
namespace {

class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return int(workers_.size()) + 1; }

  // Stop the current workers and start n - 1 new ones.
  void resize(int n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      ++generation_;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    stop_ = false;
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
  }

  // body(chunk) for chunk in [0, size()): chunk 0 on the caller, the others on the workers.
  void run(const std::function<void(int)>& body) {
    if (workers_.empty()) {
      body(0);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      body_ = &body;
      pending_.store(int(workers_.size()));
      ++generation_;
    }
    cv_.notify_all();
    body(0);
    // the workers' chunks are as long as ours: spin briefly, then sleep
    for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
      if (spin > 2000) {
        std::unique_lock<std::mutex> lock(mu_);
        done_cv_.wait(lock, [this] { return pending_.load() == 0; });
        break;
      }
      std::this_thread::yield();
    }
  }

 private:
  void work(int chunk) {
    uint64_t seen = generation_;
    for (;;) {
      const std::function<void(int)>* body;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
        body = body_;
      }
      (*body)(chunk);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu_);
        done_cv_.notify_all();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  const std::function<void(int)>* body_ = nullptr;
  std::atomic<int> pending_{0};
};

Pool& pool() {
  static Pool p;
  return p;
}

std::atomic<int> g_threads{0};  // 0 = not set yet: 1 thread

// While alive: OpenBLAS single-threaded (each worker runs its own small products).
struct BlasSingleThreaded {
  int saved;
  BlasSingleThreaded() : saved(num_threads()) {
    if (saved > 1) set_blas_threads(1);
  }
  ~BlasSingleThreaded() {
    if (saved > 1) set_blas_threads(saved);
  }
};

}  // namespace

void set_num_threads(int n) {
  n = std::max(1, n);
  set_blas_threads(n);
  if (pool().size() != n) pool().resize(n);
  g_threads.store(n);
}

int num_threads() {
  const int n = g_threads.load();
  return n == 0 ? 1 : n;
}

namespace {
// body(chunk, begin, end) over [0, n) in at most num_threads() chunks of >= grain items.
void run_chunks(int64_t n, int64_t grain, const std::function<void(int, int64_t, int64_t)>& body) {
  if (n <= 0) return;
  const int64_t chunks = std::min<int64_t>(num_threads(), std::max<int64_t>(1, n / std::max<int64_t>(1, grain)));
  if (chunks <= 1 || pool().size() < 2) {
    body(0, 0, n);
    return;
  }
  const int64_t per = (n + chunks - 1) / chunks;
  pool().run([&](int c) {
    const int64_t begin = std::min<int64_t>(n, c * per), end = std::min<int64_t>(n, begin + per);
    if (c < chunks && begin < end) body(c, begin, end);
  });
}
}  // namespace

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  run_chunks(n, grain, [&](int, int64_t begin, int64_t end) { body(begin, end); });
}

// ================================================================================
// 2) The encoder
// ================================================================================

namespace {
constexpr int64_t kFewRows = 8;

// y (R, M) += x (R, K) W^T with W (M, K) row-major, R <= kFewRows, y's rows ldy apart.
// With a few rows the product is bound by reading W from memory, and sgemm spends its time
// packing W into blocks it then uses R times only. Here each row of W is read once and
// dotted with the R rows of x (which stay in L1): R x 16 running sums the compiler keeps in
// vector registers.
template <int R>
void few_rows(const float* x, int64_t K, const float* w, int64_t M, float* y, int64_t ldy) {
  constexpr int kL = 16;
  for (int64_t o = 0; o < M; ++o) {
    const float* wo = w + o * K;
    float acc[R][kL] = {};
    int64_t k = 0;
    for (; k + kL <= K; k += kL)
      for (int r = 0; r < R; ++r)
        for (int j = 0; j < kL; ++j) acc[r][j] = std::fma(wo[k + j], x[r * K + k + j], acc[r][j]);
    for (int r = 0; r < R; ++r) {
      float sum = 0.0f;
      for (int j = 0; j < kL; ++j) sum += acc[r][j];
      for (int64_t kk = k; kk < K; ++kk) sum = std::fma(wo[kk], x[r * K + kk], sum);
      y[r * ldy + o] += sum;
    }
  }
}

void gemm_few_rows(const float* x, int64_t R, int64_t K, const float* w, int64_t M, float* y, int64_t ldy) {
  switch (R) {
    case 1: return few_rows<1>(x, K, w, M, y, ldy);
    case 2: return few_rows<2>(x, K, w, M, y, ldy);
    case 3: return few_rows<3>(x, K, w, M, y, ldy);
    case 4: return few_rows<4>(x, K, w, M, y, ldy);
    case 5: return few_rows<5>(x, K, w, M, y, ldy);
    case 6: return few_rows<6>(x, K, w, M, y, ldy);
    case 7: return few_rows<7>(x, K, w, M, y, ldy);
    case 8: return few_rows<8>(x, K, w, M, y, ldy);
    default: throw std::logic_error("gemm_few_rows: R must be 1..8");
  }
}
}  // namespace

struct FastEncoder::Impl {
  const TransformerEncoder& enc;
  int64_t C = 0, H = 0, D = 0, F = 0;
  // per layer: Q/K/V weights of all heads stacked (3C, C) and their biases (3C)
  std::vector<std::vector<float>> w_qkv, b_qkv;
  // buffers, sized for the last (N, T) seen
  std::vector<float> x, ln, qkv, ctx, ff, scores;

  explicit Impl(const TransformerEncoder& e) : enc(e) {
    if (e.layers.empty()) return;
    const MultiHeadAttention& a0 = e.layers[0].attention;
    H = int64_t(a0.heads.size());
    C = int64_t(a0.output_linear.in_features);
    D = C / H;
    F = e.layers[0].feed_forward.linear_1.out_features;
    for (const TransformerEncoderLayer& layer : e.layers) {
      // rows [0,C) = q of heads 0..H-1, [C,2C) = k, [2C,3C) = v: the order of the qkv buffer's columns
      std::vector<float> w(size_t(3 * C * C)), b(size_t(3 * C));
      for (int64_t h = 0; h < H; ++h) {
        const AttentionHead& head = layer.attention.heads[size_t(h)];
        const Linear* parts[3] = {&head.q, &head.k, &head.v};
        for (int64_t p = 0; p < 3; ++p) {
          const int64_t row0 = p * C + h * D;
          std::copy_n(parts[p]->weight.data(), D * C, w.data() + row0 * C);
          std::copy_n(parts[p]->bias.data(), D, b.data() + row0);
        }
      }
      w_qkv.push_back(std::move(w));
      b_qkv.push_back(std::move(b));
    }
  }

  void reserve(int64_t N, int64_t T) {
    x.resize(size_t(N * C));
    ln.resize(size_t(N * C));
    qkv.resize(size_t(N * 3 * C));
    ctx.resize(size_t(N * C));
    ff.resize(size_t(N * F));
    scores.resize(size_t(num_threads() * T * T));
  }

  // out (rows, n) = [residual (rows, n) +] bias (n), row by row: the C operand of a fused GEMM.
  static void fill_bias(float* out, const float* residual, const float* bias, int64_t rows, int64_t n) {
    parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        float* o = out + r * n;
        if (residual) {
          const float* x = residual + r * n;
          for (int64_t j = 0; j < n; ++j) o[j] = x[j] + bias[j];
        } else {
          std::copy_n(bias, n, o);
        }
      }
    });
  }

  // y (rows, out) += x (rows, in) W^T, W (out, in) row-major: sgemm('t','n', out, rows, in),
  // or, for a few rows (the walkthrough's T = 5), one pass over W (gemm_few_rows).
  static void gemm_rows(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y) {
    if (rows <= kFewRows && matmul_path() == MatmulPath::Blas) {
      parallel_for(out, 64, [&](int64_t o0, int64_t o1) { gemm_few_rows(x, rows, in, w + o0 * in, o1 - o0, y + o0, out); });
      return;
    }
    gemm('t', 'n', out, rows, in, 1.0f, w, in, x, in, 1.0f, y, out);
  }

  // y (rows, C) = LayerNorm(x), rows split over threads.
  static void layer_norm(const LayerNorm& norm, const float* x, float* y, int64_t rows, int64_t C) {
    parallel_for(rows, 8, [&](int64_t r0, int64_t r1) {
      layer_norm_rows(x + r0 * C, y + r0 * C, r1 - r0, C, norm.weight.data(), norm.bias.data(),
                      static_cast<float>(norm.eps));
    });
  }

  // ctx (B*T, C) = heads side by side of softmax(Q K^T / sqrt(D) [masked]) V, from qkv (B*T, 3C).
  void attention(int64_t B, int64_t T, const Tensor* mask) {
    const int64_t S = T, ld = 3 * C;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));  // D = 64: 1/8, exact
    const BlasSingleThreaded single;                               // parallel over heads instead
    run_chunks(B * H, 1, [&](int chunk, int64_t i0, int64_t i1) {
      float* p = scores.data() + chunk * T * S;  // this chunk's (T,S) scratch
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / H, h = i % H;
        const float* q = qkv.data() + b * T * ld + h * D;  // (T,D), row stride 3C
        const float* k = q + C;                            // (S,D)
        const float* v = q + 2 * C;                        // (S,D)
        // 1) scores (T,S) = Q K^T / sqrt(D): column-major (S,T) = K (S,D) . Q^T (D,T)
        gemm('t', 'n', S, T, D, scale, k, ld, q, ld, 0.0f, p, S);
        // 2) masked_fill(mask == 0, -inf)
        if (mask) {
          const float* m = mask->data() + (mask->shape()[0] == 1 ? 0 : b * T * S);
          for (int64_t j = 0; j < T * S; ++j)
            if (m[j] == 0.0f) p[j] = -INFINITY;
        }
        // 3) softmax over S, in place
        softmax_rows(p, p, T, S);
        // 4) ctx[:, h*D:(h+1)*D] (T,D) = P (T,S) V (S,D): column-major (D,T) = V^T (D,S) . P^T (S,T)
        gemm('n', 'n', D, T, S, 1.0f, v, ld, p, S, 0.0f, ctx.data() + b * T * C + h * D, C);
      }
    });
  }

  // x (N, C) <- layer(x), in place. B*T = N.
  void run_layer(size_t li, int64_t B, int64_t T, const Tensor* mask) {
    const TransformerEncoderLayer& L = enc.layers[li];
    const int64_t N = B * T;
    // 1) ln = LN1(x)                                  (N,C)
    layer_norm(L.layer_norm_1, x.data(), ln.data(), N, C);
    // 2) qkv = ln Wqkv^T + bqkv                        (N,3C)
    fill_bias(qkv.data(), nullptr, b_qkv[li].data(), N, 3 * C);
    gemm_rows(ln.data(), N, C, w_qkv[li].data(), 3 * C, qkv.data());
    // 3) ctx = attention per head                     (N,C)
    attention(B, T, mask);
    // 4) x = x + ctx Wo^T + bo                         (N,C), C operand = x + bo
    const Linear& o = L.attention.output_linear;
    fill_bias(x.data(), x.data(), o.bias.data(), N, C);
    gemm_rows(ctx.data(), N, C, o.weight.data(), C, x.data());
    // 5) ln = LN2(x)                                  (N,C)
    layer_norm(L.layer_norm_2, x.data(), ln.data(), N, C);
    // 6) ff = GELU(ln W1^T + b1)                      (N,F)
    const Linear& l1 = L.feed_forward.linear_1;
    const Linear& l2 = L.feed_forward.linear_2;
    fill_bias(ff.data(), nullptr, l1.bias.data(), N, F);
    gemm_rows(ln.data(), N, C, l1.weight.data(), F, ff.data());
    parallel_for(N, 4, [&](int64_t r0, int64_t r1) { gelu(ff.data() + r0 * F, ff.data() + r0 * F, (r1 - r0) * F); });
    // 7) x = x + ff W2^T + b2                          (N,C)
    fill_bias(x.data(), x.data(), l2.bias.data(), N, C);
    gemm_rows(ff.data(), N, F, l2.weight.data(), C, x.data());
  }

  void check_mask(const Tensor* mask, int64_t B, int64_t T) const {
    if (!mask) return;
    if (mask->dimension() != 3 || int64_t(mask->shape()[1]) != T || int64_t(mask->shape()[2]) != T ||
        (mask->shape()[0] != 1 && int64_t(mask->shape()[0]) != B))
      throw std::invalid_argument("FastEncoder: mask must be (1,T,T) or (B,T,T)");
  }

  Tensor forward_layers(const Tensor& x_in, size_t first, size_t last, const Tensor* mask) {
    if (x_in.dimension() != 3 || int64_t(x_in.shape()[2]) != C)
      throw std::invalid_argument("FastEncoder: input must be (B,T," + std::to_string(C) + ")");
    for (size_t li = first; li < last; ++li)
      if (L_training(li))
        throw std::invalid_argument("FastEncoder: eval mode only (call encoder.train(false) first)");
    const int64_t B = int64_t(x_in.shape()[0]), T = int64_t(x_in.shape()[1]);
    check_mask(mask, B, T);
    reserve(B * T, T);
    std::copy_n(x_in.data(), B * T * C, x.data());
    for (size_t li = first; li < last; ++li) run_layer(li, B, T, mask);
    Tensor out = Tensor::from_shape(shape_of(x_in));
    std::copy_n(x.data(), B * T * C, out.data());
    return out;
  }

  bool L_training(size_t li) const { return enc.layers[li].feed_forward.dropout.training; }
};

FastEncoder::FastEncoder(const TransformerEncoder& encoder) : impl_(std::make_unique<Impl>(encoder)) {}
FastEncoder::~FastEncoder() = default;

Tensor FastEncoder::operator()(const ITensor& ids, const Tensor* mask) {
  // x = Embeddings(ids) (the exact path: a lookup and one LayerNorm); then the N layers, fused
  // (B,T) -> (B,T,C)
  if (impl_->enc.embeddings.dropout.training)
    throw std::invalid_argument("FastEncoder: eval mode only (call encoder.train(false) first)");
  const Tensor x = impl_->enc.embeddings(ids);
  return impl_->forward_layers(x, 0, impl_->enc.layers.size(), mask);
}

Tensor FastEncoder::layer(size_t i, const Tensor& x, const Tensor* mask) {
  // x (B,T,C) -> (B,T,C)
  if (i >= impl_->enc.layers.size()) throw std::out_of_range("FastEncoder: no layer " + std::to_string(i));
  return impl_->forward_layers(x, i, i + 1, mask);
}

}  // namespace ts
