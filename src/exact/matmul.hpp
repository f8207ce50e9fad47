// matmul.hpp: matrix products with PyTorch 1.13's exact bits, and a plain loop beside them.
//
// Introduced with the attention chapters (scores = Q K^T, weights @ V) and nn.Linear.
//
// Why this file is more than "call sgemm": PyTorch here calls the system OpenBLAS
// sgemm_. Two calls that compute the same product but pass other transposes,
// sizes, leading dimensions or a C pre-filled with the bias may round differently
// in the last bit, and a last bit can change a printed digit. So every function
// below makes exactly the call PyTorch makes (see matmul.cpp for the ATen function
// each one mirrors), and never copies an operand where PyTorch does not.
//
// Two paths, one switch:
//   MatmulPath::Blas  - OpenBLAS sgemm, PyTorch's bits (the default)
//   MatmulPath::Naive - a readable triple loop (a chapter's --naive flag), close
//                       to but not always bit-identical with PyTorch.
#pragma once

#include <cstdint>
#include <string>

#include "exact/tensor.hpp"

namespace ts {

enum class MatmulPath { Blas, Naive };

// Process-wide choice of the path every product below takes (default Blas).
void set_matmul_path(MatmulPath p);
MatmulPath matmul_path();

// A strided 2-D view into float memory, sizes/strides in elements, exactly like a
// torch tensor's: element (i,j) at data[i*rs + j*cs].
struct MatView {
  float* data;
  int64_t rows, cols, rs, cs;
};
struct CMatView {
  const float* data;
  int64_t rows, cols, rs, cs;
};

// A strided batch of matrices: element (b,i,j) at data[b*bs + i*rs + j*cs].
struct BatchView {
  float* data;
  int64_t batch, rows, cols, bs, rs, cs;
};
struct CBatchView {
  const float* data;
  int64_t batch, rows, cols, bs, rs, cs;
};

// ---- raw column-major GEMM: C = alpha * op(A) op(B) + beta * C -------------------
// op(A) is (m,k), op(B) is (k,n), C is (m,n); trans is 'N' or 'T'. Column-major:
// A(i,l) = a[i + l*lda] for 'N', a[l + i*lda] for 'T'. beta == 0 never reads C.
// Dispatches like torch's cpublas::gemm (normalize_last_dims, then sgemm_) or, on the
// Naive path, to gemm_naive.
void gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// The same contract as gemm, as a plain triple loop (the readable reference).
void gemm_naive(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// ---- strided views (ATen's addmm_impl_cpu_ and bmm_out_or_baddbmm_) -------------
// result (M,N) = beta*result + alpha*(m1 (M,K) @ m2 (K,N)), choosing transposes and
// leading dimensions like torch's addmm_impl_cpu_ (copies only where torch copies).
void addmm_(MatView result, CMatView m1, CMatView m2, float beta, float alpha);

// out (B,M,N) = a (B,M,K) @ b (B,K,N), like torch.bmm on these strided views:
// a plain loop when K*M*N < 400 (torch's small-size kernel), else one addmm per batch.
void bmm_(BatchView out, CBatchView a, CBatchView b);

// ---- tensors, PyTorch semantics and bits ----------------------------------------
// x (...,in), weight (out,in), bias (out) or nullptr -> (...,out); nn.functional.linear.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor* bias);

// While a FewRowsProducts lives (on this thread), linear() on the Blas path computes an input
// of at most kFewRows rows by few_rows_linear below instead of calling sgemm, which repacks
// the whole weight on every call (a cached generation step is one row). Only for callers that
// do not promise PyTorch's bits (GPT::forward with KV caches): the sums run in another order
// than sgemm's, so outputs may differ from linear()'s in the last bits.
constexpr int64_t kFewRows = 8;
class FewRowsProducts {
 public:
  explicit FewRowsProducts(bool on = true);
  ~FewRowsProducts();
  FewRowsProducts(const FewRowsProducts&) = delete;
  FewRowsProducts& operator=(const FewRowsProducts&) = delete;

 private:
  bool was_;
};
bool few_rows_products();

// out (rows,out_f) = x (rows,in_f) @ w (out_f,in_f)^T (+ bias), all row-major contiguous,
// rows <= kFewRows; each output is bias + a dot product of contiguous rows (8 partial sums
// added at the end where AVX2 runs, else one running sum).
void few_rows_linear(const float* x, int64_t rows, int64_t in_f, const float* w, int64_t out_f, const float* bias,
                     float* out);
// A wide weight (at least kFewRowsSplit floats: a GPT's LM head, its MLP) is split by output rows
// over the threads of a parallel-for a layer above installs (fast/thread_pool's parallel_for,
// installed by train::Gpt): each output is computed as alone, by the same code, so the split
// changes no bit; the parts start at multiples of 8 outputs (the AVX2 loop's groups stay whole).
// parallel(n, grain, body, ctx) runs body(ctx, begin, end) over [0, n) in chunks of >= grain.
using FewRowsParallel = void (*)(int64_t n, int64_t grain, void (*body)(void*, int64_t, int64_t), void* ctx);
void set_few_rows_parallel(FewRowsParallel parallel);
constexpr int64_t kFewRowsSplit = int64_t(1) << 17;

// a (B,M,K), b (B,K,N) -> (B,M,N); torch.bmm.
Tensor bmm(const Tensor& a, const Tensor& b);

// a (B,M,K), b (B,N,K) -> (B,M,N); torch.bmm(a, b.transpose(1,2)), b is not copied.
Tensor bmm_nt(const Tensor& a, const Tensor& b);

// torch.matmul for 2-D..4-D operands with broadcast batch dims, e.g.
// (M,K)@(K,N) -> (M,N), (B,T,C)@(C,F) -> (B,T,F), (B,H,T,D)@(B,H,D,S) -> (B,H,T,S).
Tensor matmul(const Tensor& a, const Tensor& b);

// Per-head attention products on views, no copies where torch makes none:
// q (B,T,C), k (B,S,C) -> (B,H,T,S); torch.matmul(q4, k4.transpose(-2,-1)) where
// q4 = q.view(B,T,H,D).transpose(1,2) and k4 likewise (article 002), D = C/H.
Tensor matmul_heads_qk(const Tensor& q, const Tensor& k, int64_t H);

// p (B,H,T,S), v (B,S,C) -> (B,H,T,D); torch.matmul(p, v.view(B,S,H,D).transpose(1,2)).
Tensor matmul_heads_pv(const Tensor& p, const Tensor& v);

// ---- which OpenBLAS kernel runs (chosen by fast/blas_core.hpp, use_widest_blas_core) ----
// The core OpenBLAS is running, e.g. "SkylakeX", "Cooperlake", "Haswell" ("" if the BLAS
// is not OpenBLAS).
std::string blas_core();
// How many products gemm() has handed to sgemm_ in this process so far (what ran on blas_core()'s
// kernel: a chapter says which kernel its digits came from, ch12's training).
int64_t sgemm_calls();
// OpenBLAS's thread count for one product (openblas_set_num_threads); 0 if unknown.
void set_blas_threads(int n);
int blas_threads();

}  // namespace ts
