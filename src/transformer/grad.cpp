// grad.cpp: grad mode and the row-major gemm the backwards share (see grad.hpp).
#include "transformer/grad.hpp"

#include "exact/matmul.hpp"
#include "exact/rng.hpp"

namespace ts {

namespace {
thread_local bool g_grad_enabled = false;
thread_local Generator* g_dropout_generator = nullptr;  // nullptr: default_generator()
}

bool grad_enabled() { return g_grad_enabled; }

EnableGrad::EnableGrad() : prev_(g_grad_enabled) { g_grad_enabled = true; }
EnableGrad::~EnableGrad() { g_grad_enabled = prev_; }

Generator& dropout_generator() { return g_dropout_generator ? *g_dropout_generator : default_generator(); }

UseGenerator::UseGenerator(Generator& g) : prev_(g_dropout_generator) { g_dropout_generator = &g; }
UseGenerator::~UseGenerator() { g_dropout_generator = prev_; }

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
void mm_rows(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
             int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  gemm(tb ? 'T' : 'N', ta ? 'T' : 'N', N, M, K, 1.0f, B, ldb, A, lda, beta, C, ldc);
}

}  // namespace ts
