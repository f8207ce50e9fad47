// grad.hpp: what every module's backward shares (introduced in ch11). The course's backward is
// llm.c's: each module's backward is written right below its forward, opens with its shape
// contract and gradient formula, and ADDS (+=) into the gradient of its parameters, which live
// in a second module of the same type (as llm.c's `grads` is a ParameterTensors like `params`):
//   EncoderDecoder grads = model;  zero_grad(grads);  ...  model.backward(dout, grads);
// A forward keeps what its backward needs only under EnableGrad (torch's grad mode), so the
// chapters that only run the model (ch01-ch10) keep nothing and print the same bytes.
#pragma once

#include <cstdint>

namespace ts {

class Generator;

// Whether forwards keep what their backward needs (this thread). Off unless an EnableGrad lives.
bool grad_enabled();

// On for its lifetime, then back to what it was (torch.enable_grad()).
class EnableGrad {
 public:
  EnableGrad();
  ~EnableGrad();
  EnableGrad(const EnableGrad&) = delete;
  EnableGrad& operator=(const EnableGrad&) = delete;

 private:
  bool prev_;
};

// The generator a train-mode Dropout draws from on this thread: default_generator() unless a
// UseGenerator lives. Training runs each part of a batch (train/batch_parts.hpp) with its own
// generator, so the draws do not depend on which thread takes the part.
Generator& dropout_generator();

// dropout_generator() is g for its lifetime (this thread), then what it was.
class UseGenerator {
 public:
  explicit UseGenerator(Generator& g);
  ~UseGenerator();
  UseGenerator(const UseGenerator&) = delete;
  UseGenerator& operator=(const UseGenerator&) = delete;

 private:
  Generator* prev_;
};

// Row-major C (M,N) = op(A) op(B) + beta * C through the course's float gemm (honours --naive).
// op(A) is (M,K): A stored (M,K) with row stride lda, or (K,M) if ta; op(B) is (K,N): B stored
// (K,N) with row stride ldb, or (N,K) if tb; C has row stride ldc. Strides let a backward read
// one head's (T,D) slice of a (B,T,C) tensor in place (row stride C).
void mm_rows(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
             int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace ts
