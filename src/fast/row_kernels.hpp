// row_kernels.hpp: the fast path's row kernels, on the active SIMD route (isa.hpp,
// src/fast/simd/). They agree with the torch-exact kernels of exact/kernels.hpp to ~1e-6;
// they ignore set_kernel_path(). Introduced with ch07's fast encoder.
#pragma once

#include <cstdint>

namespace ts::fast {
// y = F.softmax(x, dim=-1) on rows (rows, n); with mask (rows, n), entries where mask == 0
// count as -inf first (masked_fill). A row with every entry -inf gives NaN, like torch.
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n, const float* mask = nullptr);
// y = nn.LayerNorm(n, eps)(x) on rows (rows, n) with weight gamma (n) and bias beta (n).
void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma,
                     const float* beta, float eps);
// y = GELU(x [+ bias]) on rows (rows, n) whose starts are `ld` apart (in place allowed);
// bias (n) or nullptr. GELU is the exact (erf) form, erf to ~5e-7.
void bias_gelu_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t ld, const float* bias);
// y = GELU(x) on n contiguous values.
void gelu(const float* x, float* y, int64_t n);
}  // namespace ts::fast
