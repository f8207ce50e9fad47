// matmul.cpp: matrix products that give PyTorch 1.13's bits (see matmul.hpp).
//
// Each function below names the ATen code it mirrors (PyTorch v1.13):
//   gemm        <- aten/src/ATen/native/CPUBlas.cpp       cpublas::gemm (normalize_last_dims, use_blas_gemm)
//   addmm_      <- aten/src/ATen/native/LinearAlgebra.cpp addmm_impl_cpu_
//   bmm_        <- aten/src/ATen/native/LinearAlgebra.cpp bmm_out_or_baddbmm_, baddbmm_cpu_kernel
//   matmul      <- aten/src/ATen/native/LinearAlgebra.cpp _matmul_impl, should_fold
//   linear      <- aten/src/ATen/native/Linear.cpp        linear
// Torch here is built without MKL, so bmm never takes the batched-gemm branch.
// Under TS_TORCH=2.6 (exact/torch_version.hpp) matmul decides as 2.x does whether to fold
// (should_fold_torch2): 2-D @ N-D is no longer folded but broadcast and sent to bmm.
#include "exact/matmul.hpp"
#include "exact/fp_contract.hpp"
#include "exact/openblas.hpp"
#include "exact/torch_version.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// Torch's small-bmm loop is compiled for plain x86-64, which has no fused
// multiply-add: every product is rounded before it is added. Our build uses
// -march=native, so that one function is marked TS_NO_FP_CONTRACT (fp_contract.hpp).

namespace ts {

namespace {
std::atomic<MatmulPath> g_matmul_path{MatmulPath::Blas};
std::atomic<int64_t> g_sgemm_calls{0};  // sgemm_calls()

bool is_trans(char t) {
  switch (t) {
    case 'N': case 'n': return false;
    case 'T': case 't': case 'C': case 'c': return true;  // real numbers: conj-transpose == transpose
    default: throw std::invalid_argument(std::string("gemm: trans must be N or T, got ") + t);
  }
}

void fail(const std::string& what) { throw std::invalid_argument(what); }
}  // namespace

void set_matmul_path(MatmulPath p) { g_matmul_path.store(p); }
MatmulPath matmul_path() { return g_matmul_path.load(); }

// ================================================================================
// 1) Raw column-major GEMM
// ================================================================================

// C (m,n) = alpha * op(A) (m,k) @ op(B) (k,n) + beta * C, column-major, one dot product per entry.
void gemm_naive(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const bool ta = is_trans(transa), tb = is_trans(transb);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (int64_t l = 0; l < k; ++l) {
        const float a_il = ta ? a[l + i * lda] : a[i + l * lda];
        const float b_lj = tb ? b[j + l * ldb] : b[l + j * ldb];
        sum += a_il * b_lj;
      }
      float& c_ij = c[i + j * ldc];
      c_ij = (beta == 0.0f) ? alpha * sum : alpha * sum + beta * c_ij;  // beta == 0 never reads C (BLAS rule)
    }
  }
}

// Same contract; torch's cpublas::gemm<float>: normalise degenerate leading dims, then sgemm_.
void gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (matmul_path() == MatmulPath::Naive) {
    gemm_naive(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const bool ta = is_trans(transa), tb = is_trans(transb);
  // normalize_last_dims: a dimension of size 1 makes its leading dim meaningless; BLAS wants a valid one.
  if (n == 1) ldc = m;
  if (ta) {
    if (m == 1) lda = k;
  } else if (k == 1) {
    lda = m;
  }
  if (tb) {
    if (k == 1) ldb = n;
  } else if (n == 1) {
    ldb = k;
  }
  // use_blas_gemm: sizes fit in int and leading dims are legal.
  const bool blas_ok = m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX &&
                       ldc <= INT_MAX && lda >= std::max<int64_t>(1, ta ? k : m) &&
                       ldb >= std::max<int64_t>(1, tb ? n : k) && ldc >= std::max<int64_t>(1, m);
  if (!blas_ok) {
    // Torch falls back to its own gemm_stub kernel here; addmm_ never gets here.
    gemm_naive(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const int m_ = int(m), n_ = int(n), k_ = int(k), lda_ = int(lda), ldb_ = int(ldb), ldc_ = int(ldc);
  const char ta_ = ta ? 't' : 'n', tb_ = tb ? 't' : 'n';  // torch's to_blas() spelling
  sgemm_(&ta_, &tb_, &m_, &n_, &k_, &alpha, a, &lda_, b, &ldb_, &beta, c, &ldc_);
  g_sgemm_calls.fetch_add(1, std::memory_order_relaxed);
}

// ================================================================================
// 2) addmm on strided views: addmm_impl_cpu_
// ================================================================================

namespace {
// A 2-D operand as addmm_impl_cpu_ sees it: sizes, strides, data.
struct Mat2 {
  const float* data;
  int64_t size[2];
  int64_t stride[2];
};

// Row-major contiguous copy of a strided (rows,cols) view: torch's clone(MemoryFormat::Contiguous).
std::vector<float> clone_contiguous(const Mat2& m) {
  std::vector<float> out(size_t(m.size[0] * m.size[1]));
  for (int64_t i = 0; i < m.size[0]; ++i)
    for (int64_t j = 0; j < m.size[1]; ++j) out[size_t(i * m.size[1] + j)] = m.data[i * m.stride[0] + j * m.stride[1]];
  return out;
}

// How addmm_impl_cpu_ hands operand `op` to gemm as a (rows, cols) matrix of the column-major C
// (transposed or not): column-major as it is (returns false), transposed (returns true), or else
// as a contiguous copy kept in `copy` (op then points at it; transposed unless C is).
bool cast_operand(Mat2& op, int64_t rows, int64_t cols, bool transpose_c, std::vector<float>& copy) {
  const int tc = transpose_c ? 1 : 0;
  if (op.stride[tc] == 1 && op.stride[1 - tc] >= std::max<int64_t>(1, rows)) return false;
  if (op.stride[1 - tc] == 1 && op.stride[tc] >= std::max<int64_t>(1, cols)) return true;
  copy = clone_contiguous(op);
  op = Mat2{copy.data(), {op.size[0], op.size[1]}, {std::max<int64_t>(op.size[1], 1), 1}};
  return !transpose_c;
}
}  // namespace

// result (M,N) = beta*result + alpha * m1 (M,K) @ m2 (K,N); result already holds "self".
void addmm_(MatView result, CMatView m1v, CMatView m2v, float beta, float alpha) {
  if (result.rows != m1v.rows || result.cols != m2v.cols || m1v.cols != m2v.rows)
    fail("addmm_: shapes (" + std::to_string(m1v.rows) + "x" + std::to_string(m1v.cols) + ") @ (" +
         std::to_string(m2v.rows) + "x" + std::to_string(m2v.cols) + ") != (" + std::to_string(result.rows) +
         "x" + std::to_string(result.cols) + ")");
  if (result.rows == 0 || result.cols == 0) return;
  auto at = [&](int64_t i, int64_t j) -> float& { return result.data[i * result.rs + j * result.cs]; };
  if (m1v.cols == 0) {  // [a,0] x [0,b]: nothing to multiply
    for (int64_t i = 0; i < result.rows; ++i)
      for (int64_t j = 0; j < result.cols; ++j) at(i, j) = (beta == 0.0f) ? 0.0f : at(i, j) * beta;
    return;
  }

  Mat2 m1{m1v.data, {m1v.rows, m1v.cols}, {m1v.rs, m1v.cs}};
  Mat2 m2{m2v.data, {m2v.rows, m2v.cols}, {m2v.rs, m2v.cs}};
  const int64_t rsz[2] = {result.rows, result.cols};
  const int64_t rst[2] = {result.rs, result.cs};

  // 1) Cast result as column-major C: as it is, as its transpose (swap m1/m2), or a Fortran copy.
  bool transpose_c = false;
  float* c = result.data;
  int64_t ldc = 0;
  std::vector<float> c_copy;
  if (rst[0] == 1 && (rsz[1] == 1 || rst[1] >= std::max<int64_t>(1, rsz[0]))) {
    transpose_c = false;
    ldc = rst[1];
  } else if (rst[1] == 1 && (rsz[0] == 1 || rst[0] >= std::max<int64_t>(1, rsz[1]))) {
    std::swap(m1, m2);
    transpose_c = true;
    ldc = rst[0];
  } else {
    transpose_c = false;
    c_copy.resize(size_t(rsz[0] * rsz[1]));
    for (int64_t j = 0; j < rsz[1]; ++j)
      for (int64_t i = 0; i < rsz[0]; ++i) c_copy[size_t(i + j * rsz[0])] = at(i, j);
    c = c_copy.data();
    ldc = rsz[0];
  }
  const int64_t m = rsz[transpose_c ? 1 : 0];
  const int64_t n = rsz[transpose_c ? 0 : 1];
  const int64_t k = m1.size[transpose_c ? 0 : 1];

  // 2) Cast m1 as A (m,k) and 3) m2 as B (k,n), each column-major as is, transposed, or a contiguous copy.
  std::vector<float> a_copy, b_copy;
  const bool transpose_a = cast_operand(m1, m, k, transpose_c, a_copy);
  const bool transpose_b = cast_operand(m2, k, n, transpose_c, b_copy);

  const int64_t lda = m1.stride[(transpose_a == transpose_c) ? 1 : 0];
  const int64_t ldb = m2.stride[(transpose_b == transpose_c) ? 1 : 0];
  gemm(transpose_a ? 't' : 'n', transpose_b ? 't' : 'n', m, n, k, alpha, m1.data, lda, m2.data, ldb, beta, c, ldc);

  if (!c_copy.empty()) {
    for (int64_t j = 0; j < rsz[1]; ++j)
      for (int64_t i = 0; i < rsz[0]; ++i) at(i, j) = c_copy[size_t(i + j * rsz[0])];
  }
}

// ================================================================================
// 3) Batched products on strided views: bmm_out_or_baddbmm_
// ================================================================================

namespace {
// out (B,M,N) = a (B,M,K) @ b (B,K,N), torch's baddbmm_cpu_kernel<float, is_bmm=true>:
// one running sum per entry, starting at 0, each product rounded before it is added.
TS_NO_FP_CONTRACT void bmm_small_kernel(BatchView out, CBatchView a, CBatchView b) {
  TS_NO_FP_CONTRACT_BODY
  for (int64_t bi = 0; bi < out.batch; ++bi) {
    for (int64_t i = 0; i < out.rows; ++i) {
      for (int64_t j = 0; j < out.cols; ++j) {
        float acc = 0.0f;
        for (int64_t l = 0; l < a.cols; ++l) {
          acc += a.data[bi * a.bs + i * a.rs + l * a.cs] * b.data[bi * b.bs + l * b.rs + j * b.cs];
        }
        out.data[bi * out.bs + i * out.rs + j * out.cs] = acc;
      }
    }
  }
}
}  // namespace

// out (B,M,N) = a (B,M,K) @ b (B,K,N): small products by the loop, else one addmm per batch item.
void bmm_(BatchView out, CBatchView a, CBatchView b) {
  if (a.batch != b.batch || out.batch != a.batch || a.cols != b.rows || out.rows != a.rows || out.cols != b.cols)
    fail("bmm_: shapes (" + std::to_string(a.batch) + "," + std::to_string(a.rows) + "," + std::to_string(a.cols) +
         ") @ (" + std::to_string(b.batch) + "," + std::to_string(b.rows) + "," + std::to_string(b.cols) +
         ") do not fit out (" + std::to_string(out.batch) + "," + std::to_string(out.rows) + "," +
         std::to_string(out.cols) + ")");
  const int64_t contraction = a.cols, rows = a.rows, cols = b.cols;
  if (out.batch == 0 || rows == 0 || cols == 0) return;
  if (contraction == 0) {
    for (int64_t bi = 0; bi < out.batch; ++bi)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) out.data[bi * out.bs + i * out.rs + j * out.cs] = 0.0f;
    return;
  }
  if (contraction * rows * cols < 400) {  // torch's threshold, on either path
    bmm_small_kernel(out, a, b);
    return;
  }
  for (int64_t bi = 0; bi < out.batch; ++bi) {  // "split along batch dimension" (no MKL here)
    MatView r{out.data + bi * out.bs, rows, cols, out.rs, out.cs};
    CMatView x{a.data + bi * a.bs, rows, contraction, a.rs, a.cs};
    CMatView y{b.data + bi * b.bs, contraction, cols, b.rs, b.cs};
    addmm_(r, x, y, 0.0f, 1.0f);
  }
}

// ================================================================================
// 4) Strided tensors: just enough of torch's view machinery for matmul
// ================================================================================

namespace {
using Dims = std::vector<int64_t>;

// A read-only strided tensor, any rank, sizes/strides exactly as torch would hold them.
struct Strided {
  const float* data;
  Dims sizes, strides;
  int64_t dim() const { return int64_t(sizes.size()); }
};

// Copies live here until the product is done (a deque never moves its elements).
using Scratch = std::deque<std::vector<float>>;

int64_t numel(const Dims& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Torch's contiguous strides: last dim 1, each dim the product of the later sizes (size 0 counts as 1).
Dims contiguous_strides(const Dims& sizes) {
  Dims st(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

Dims dims_of(const Tensor& t) { return Dims(t.shape().begin(), t.shape().end()); }

Strided view_of(const Tensor& t) {
  Dims sizes = dims_of(t);
  return Strided{t.data(), sizes, contiguous_strides(sizes)};
}

// t.transpose(d0, d1): swap sizes and strides.
Strided transposed(Strided t, int64_t d0, int64_t d1) {
  std::swap(t.sizes[size_t(d0)], t.sizes[size_t(d1)]);
  std::swap(t.strides[size_t(d0)], t.strides[size_t(d1)]);
  return t;
}
Strided mT(const Strided& t) { return transposed(t, t.dim() - 2, t.dim() - 1); }

// t.expand(target): ATen's inferExpandGeometry (broadcast dims get stride 0).
Strided expanded(const Strided& t, const Dims& target) {
  const int64_t nd = int64_t(target.size()), td = t.dim();
  Dims sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t d = td - (nd - i);
    int64_t size = d >= 0 ? t.sizes[size_t(d)] : 1;
    int64_t stride = d >= 0 ? t.strides[size_t(d)] : sizes[size_t(i + 1)] * strides[size_t(i + 1)];
    if (size != target[size_t(i)]) {
      if (size != 1) fail("matmul: cannot broadcast batch dims");
      size = target[size_t(i)];
      stride = 0;
    }
    sizes[size_t(i)] = size;
    strides[size_t(i)] = stride;
  }
  return Strided{t.data, sizes, strides};
}

// Strides for t.view(newshape) without copying, or nothing: ATen's computeStride.
std::optional<Dims> view_strides(const Strided& t, const Dims& newshape) {
  if (t.sizes.empty()) return Dims(newshape.size(), 1);
  if (numel(t.sizes) == 0) return contiguous_strides(newshape);
  Dims newstride(newshape.size());
  int64_t view_d = int64_t(newshape.size()) - 1;
  int64_t chunk_base_stride = t.strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    tensor_numel *= t.sizes[size_t(d)];
    const bool chunk_ends = d == 0 || (t.sizes[size_t(d - 1)] != 1 &&
                                       t.strides[size_t(d - 1)] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || newshape[size_t(view_d)] == 1)) {
      newstride[size_t(view_d)] = view_numel * chunk_base_stride;
      view_numel *= newshape[size_t(view_d)];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_base_stride = t.strides[size_t(d - 1)];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

// Gather a strided tensor into row-major order: an odometer over the outer dimensions, then
// one innermost row at a time (a plain copy when that row is contiguous). Only the order of
// reading changes, never a value: the bits are the same as element by element.
void copy_contiguous(const Strided& t, float* dst) {
  const int64_t n = numel(t.sizes);
  if (n == 0) return;
  const size_t R = t.sizes.size();
  if (R == 0) {
    dst[0] = t.data[0];
    return;
  }
  const int64_t inner = t.sizes[R - 1], is = t.strides[R - 1];
  Dims idx(R - 1, 0);
  for (int64_t row = 0; row < n / inner; ++row) {
    const float* src = t.data;
    for (size_t d = 0; d + 1 < R; ++d) src += idx[d] * t.strides[d];
    float* out = dst + row * inner;
    if (is == 1) {
      std::copy_n(src, inner, out);
    } else {
      for (int64_t j = 0; j < inner; ++j) out[j] = src[j * is];
    }
    for (size_t d = R - 1; d-- > 0;) {  // odometer increment over the outer dimensions
      if (++idx[d] < t.sizes[d]) break;
      idx[d] = 0;
    }
  }
}

// t.reshape(newshape): a view when strides allow, else a contiguous copy (torch's clone + view).
Strided reshaped(const Strided& t, const Dims& newshape, Scratch& scratch) {
  if (auto st = view_strides(t, newshape)) return Strided{t.data, newshape, *st};
  scratch.emplace_back(size_t(numel(t.sizes)));
  copy_contiguous(t, scratch.back().data());
  return Strided{scratch.back().data(), newshape, contiguous_strides(newshape)};
}

Shape to_shape(const Dims& d) { return Shape(d.begin(), d.end()); }

// t1 (n,k) @ t2 (k,p) -> (n,p), torch's mm: addmm_impl_cpu_(result, result, t1, t2, 0, 1).
Tensor mm(const Strided& t1, const Strided& t2) {
  const int64_t n = t1.sizes[0], p = t2.sizes[1];
  Tensor out = Tensor::from_shape({size_t(n), size_t(p)});
  const Dims st = contiguous_strides({n, p});
  addmm_(MatView{out.data(), n, p, st[0], st[1]}, CMatView{t1.data, t1.sizes[0], t1.sizes[1], t1.strides[0], t1.strides[1]},
         CMatView{t2.data, t2.sizes[0], t2.sizes[1], t2.strides[0], t2.strides[1]}, 0.0f, 1.0f);
  return out;
}

// a (B,M,K) @ b (B,K,N) -> (B,M,N) contiguous, torch's bmm.
Tensor bmm_strided(const Strided& a, const Strided& b) {
  if (a.dim() != 3 || b.dim() != 3) fail("bmm: both operands must be 3-D");
  if (a.sizes[0] != b.sizes[0] || a.sizes[2] != b.sizes[1])
    fail("bmm: shapes (" + std::to_string(a.sizes[0]) + "," + std::to_string(a.sizes[1]) + "," +
         std::to_string(a.sizes[2]) + ") and (" + std::to_string(b.sizes[0]) + "," + std::to_string(b.sizes[1]) +
         "," + std::to_string(b.sizes[2]) + ") cannot be multiplied");
  const Dims out_sizes{a.sizes[0], a.sizes[1], b.sizes[2]};
  Tensor out = Tensor::from_shape(to_shape(out_sizes));
  const Dims st = contiguous_strides(out_sizes);
  bmm_(BatchView{out.data(), out_sizes[0], out_sizes[1], out_sizes[2], st[0], st[1], st[2]},
       CBatchView{a.data, a.sizes[0], a.sizes[1], a.sizes[2], a.strides[0], a.strides[1], a.strides[2]},
       CBatchView{b.data, b.sizes[0], b.sizes[1], b.sizes[2], b.strides[0], b.strides[1], b.strides[2]});
  return out;
}

// should_fold: can the >=3-D operand be folded into one matrix for mm instead of bmm?
// Not when it is 3-D with its last two dims transposed (bmm handles that without a copy).
bool should_fold(const Strided& t, int64_t dim_other) {
  if (!(t.dim() >= 3 && (dim_other == 1 || dim_other == 2))) return false;
  if (t.dim() == 3 && dim_other == 2 && t.strides.back() != 1 && t.strides.front() == t.sizes[1] * t.sizes[2])
    return false;
  return true;
}

// should_fold as PyTorch 2.x has it (same file, rewritten in 2.0): the larger operand t (t2.mT()
// when t2 has more dims) of rank >= 3 against one of rank <= 2 is folded, but never when t1
// is 2-D (the folded product would come out transposed and need a copy: 2-D @ N-D goes to
// bmm), and only when t's leading dims are contiguous among themselves (a view, no copy).
// (2.x also folds when the smaller operand requires grad; the exact path's tensors do not.)
bool should_fold_torch2(const Strided& t1, const Strided& t2) {
  const bool t1_larger = t1.dim() >= t2.dim();
  const Strided t = t1_larger ? t1 : mT(t2);
  const int64_t dim_other = t1_larger ? t2.dim() : t1.dim();
  if (!(t.dim() >= 3 && dim_other <= 2)) return false;
  if (t1.dim() == 2) return false;
  if (numel(t.sizes) == 0) return true;
  for (int64_t i = 0; i < t.dim() - 2; ++i)
    if (t.strides[size_t(i)] != t.strides[size_t(i + 1)] * t.sizes[size_t(i + 1)]) return false;
  return true;
}

// torch.matmul (_matmul_impl) for operands of rank >= 2 (and 1-D @ 2-D).
Tensor matmul_strided(const Strided& t1, const Strided& t2) {
  const int64_t d1 = t1.dim(), d2 = t2.dim();
  if (d1 == 0 || d2 == 0) fail("matmul: both arguments need to be at least 1-D");
  if (t1.sizes.back() != t2.sizes[size_t(std::max<int64_t>(d2 - 2, 0))])
    fail("matmul: inner dimensions differ");
  Scratch scratch;

  if (d1 == 1 && d2 == 2) {  // x.unsqueeze(0).mm(w).squeeze_(0)
    Strided row{t1.data, {1, t1.sizes[0]}, {t1.sizes[0] * t1.strides[0], t1.strides[0]}};
    Tensor out = mm(row, t2);
    out.reshape({out.size()});
    return out;
  }
  if (d1 == 1 || d2 == 1) fail("matmul: vector operands are not supported here (use 2-D)");
  if (d1 == 2 && d2 == 2) return mm(t1, t2);

  const bool fold = torch_version() == TorchVersion::V2_6 ? should_fold_torch2(t1, t2)
                                                          : should_fold(t1, d2) || should_fold(t2, d1);
  if (fold) {
    // Fold the batch of the larger operand into the rows of one matrix and call mm once;
    // for 2-D @ N-D compute (b^T @ a^T)^T so the N-D operand is still the one folded.
    const bool transpose = d2 > d1;
    const Strided T1 = transpose ? mT(t2) : t1;
    const Strided T2 = !transpose ? t2 : transposed(t1, 0, 1);
    Dims out_shape(T1.sizes.begin(), T1.sizes.end() - 1);
    const int64_t folded = numel(out_shape);
    out_shape.push_back(T2.sizes[1]);
    const Strided T1f = reshaped(T1, {folded, T1.sizes.back()}, scratch);
    Tensor out = mm(T1f, T2);
    if (!transpose) {
      out.reshape(to_shape(out_shape));
      return out;
    }
    Strided o{out.data(), out_shape, contiguous_strides(out_shape)};  // output.mT().contiguous()
    const Strided ot = mT(o);
    Tensor res = Tensor::from_shape(to_shape(ot.sizes));
    copy_contiguous(ot, res.data());
    return res;
  }

  // Broadcast the batch dims, flatten them into one, and call bmm.
  const int64_t n = t1.sizes[size_t(d1 - 2)], m1 = t1.sizes[size_t(d1 - 1)];
  const int64_t m2 = t2.sizes[size_t(d2 - 2)], p = t2.sizes[size_t(d2 - 1)];
  const Dims batch1(t1.sizes.begin(), t1.sizes.end() - 2), batch2(t2.sizes.begin(), t2.sizes.end() - 2);
  const size_t nb = std::max(batch1.size(), batch2.size());
  Dims batch(nb);
  for (size_t i = 0; i < nb; ++i) {  // infer_size: right-aligned broadcast
    const int64_t o1 = int64_t(i) - int64_t(nb - batch1.size()), o2 = int64_t(i) - int64_t(nb - batch2.size());
    const int64_t s1 = o1 >= 0 ? batch1[size_t(o1)] : 1, s2 = o2 >= 0 ? batch2[size_t(o2)] : 1;
    if (s1 != s2 && s1 != 1 && s2 != 1) fail("matmul: batch dims cannot be broadcast");
    batch[i] = s1 == 1 ? s2 : s1;
  }
  const int64_t nbatch = numel(batch);
  Dims e1 = batch, e2 = batch;
  e1.insert(e1.end(), {n, m1});
  e2.insert(e2.end(), {m2, p});
  const Strided a = reshaped(expanded(t1, e1), {nbatch, n, m1}, scratch);
  const Strided b = reshaped(expanded(t2, e2), {nbatch, m2, p}, scratch);
  Tensor out = bmm_strided(a, b);
  Dims out_shape = batch;
  out_shape.insert(out_shape.end(), {n, p});
  out.reshape(to_shape(out_shape));
  return out;
}
}  // namespace

// ================================================================================
// 5) Tensor-level API
// ================================================================================

// x (...,in), weight (out,in), bias (out) or nullptr -> (...,out): torch 1.13's linear (2.6's
// under TS_TORCH=2.6).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor* bias) {
  if (weight.dimension() != 2) fail("linear: weight must be (out,in)");
  if (x.dimension() == 0) fail("linear: input must be at least 1-D");
  const int64_t out_f = int64_t(weight.shape()[0]), in_f = int64_t(weight.shape()[1]);
  if (int64_t(x.shape().back()) != in_f)
    fail("linear: input has " + std::to_string(x.shape().back()) + " features, weight expects " +
         std::to_string(in_f));
  if (bias && (bias->dimension() != 1 || int64_t(bias->shape()[0]) != out_f))
    fail("linear: bias must be (out)");
  const Strided w_t{weight.data(), {in_f, out_f}, {1, in_f}};  // weight.t(), no copy
  const int64_t x_rows = int64_t(x.size()) / std::max<int64_t>(in_f, 1);
  if (few_rows_products() && matmul_path() == MatmulPath::Blas && x_rows <= kFewRows && in_f > 0) {
    Shape out_shape = shape_of(x);
    out_shape.back() = size_t(out_f);
    Tensor out = Tensor::from_shape(out_shape);
    few_rows_linear(x.data(), x_rows, in_f, weight.data(), out_f, bias ? bias->data() : nullptr, out.data());
    return out;
  }

  // 1.13 fuses 2-D and contiguous 3-D inputs; 2.x fuses every contiguous input with a 1-D bias
  // (Linear.cpp's _flatten_nd_linear), a 1-D input as one row too: there b = w_2(w_1.bias) is
  // addmm's single sgemm with C starting at the bias, not mm then add_. The two round differently
  // (OpenBLAS 0.3.29, every x86 kernel); ch05's printed merged-Linear gap showed it on SkylakeX.
  if (bias && (x.dimension() == 2 || x.dimension() == 3 || torch_version() == TorchVersion::V2_6)) {
    // Fused: addmm(bias, x2d, weight.t()) -- C starts as the bias rows, beta = alpha = 1.
    const int64_t rows = int64_t(x.size()) / std::max<int64_t>(in_f, 1);
    Shape out_shape = shape_of(x);
    out_shape.back() = size_t(out_f);
    Tensor out = Tensor::from_shape(out_shape);
    // every row of C = the bias: row 0 copied, then the rows done so far doubled (a few long copies
    // instead of one short copy per row)
    if (rows > 0) std::copy(bias->data(), bias->data() + out_f, out.data());
    for (int64_t done = 1; done < rows; done *= 2)
      std::copy(out.data(), out.data() + std::min(done, rows - done) * out_f, out.data() + done * out_f);
    const Dims st = contiguous_strides({rows, out_f});
    const Dims xst = contiguous_strides({rows, in_f});
    addmm_(MatView{out.data(), rows, out_f, st[0], st[1]}, CMatView{x.data(), rows, in_f, xst[0], xst[1]},
           CMatView{w_t.data, in_f, out_f, w_t.strides[0], w_t.strides[1]}, 1.0f, 1.0f);
    return out;
  }
  // Otherwise: output = matmul(x, weight.t()); output.add_(bias).
  Tensor out = matmul_strided(view_of(x), w_t);
  if (bias) {
    const size_t rows = out.size() / size_t(std::max<int64_t>(out_f, 1));
    float* o = out.data();
    for (size_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < out_f; ++j) o[i * size_t(out_f) + size_t(j)] += (*bias)(size_t(j));
  }
  return out;
}

// a (B,M,K), b (B,K,N) -> (B,M,N)
Tensor bmm(const Tensor& a, const Tensor& b) { return bmm_strided(view_of(a), view_of(b)); }

// a (B,M,K), b (B,N,K) -> (B,M,N) = a @ b^T, b read through transposed strides.
Tensor bmm_nt(const Tensor& a, const Tensor& b) { return bmm_strided(view_of(a), transposed(view_of(b), 1, 2)); }

// torch.matmul on contiguous tensors.
Tensor matmul(const Tensor& a, const Tensor& b) { return matmul_strided(view_of(a), view_of(b)); }

namespace {
// x (B,S,C) -> (B,H,S,D), no copy: x.view(B,S,H,D).transpose(1,2); `who` names the caller in errors
Strided heads_view(const Tensor& x, int64_t H, const std::string& who) {
  const int64_t B = int64_t(x.shape()[0]), S = int64_t(x.shape()[1]), C = int64_t(x.shape()[2]);
  if (H <= 0 || C % H != 0) fail(who + ": C must be divisible by H");
  const int64_t D = C / H;
  return transposed(Strided{x.data(), {B, S, H, D}, contiguous_strides({B, S, H, D})}, 1, 2);
}
}  // namespace

// q (B,T,C), k (B,S,C) -> (B,H,T,S): q.view(B,T,H,D).transpose(1,2) @ k.view(B,S,H,D).transpose(1,2).transpose(-2,-1)
Tensor matmul_heads_qk(const Tensor& q, const Tensor& k, int64_t H) {
  if (q.dimension() != 3 || k.dimension() != 3) fail("matmul_heads_qk: q and k must be (B,T,C) and (B,S,C)");
  if (k.shape()[0] != q.shape()[0] || k.shape()[2] != q.shape()[2]) fail("matmul_heads_qk: q and k differ in B or C");
  return matmul_strided(heads_view(q, H, "matmul_heads_qk"), mT(heads_view(k, H, "matmul_heads_qk")));
}

// p (B,H,T,S), v (B,S,C) -> (B,H,T,D): p @ v.view(B,S,H,D).transpose(1,2)
Tensor matmul_heads_pv(const Tensor& p, const Tensor& v) {
  if (p.dimension() != 4 || v.dimension() != 3) fail("matmul_heads_pv: p must be (B,H,T,S), v (B,S,C)");
  if (v.shape()[0] != p.shape()[0] || v.shape()[1] != p.shape()[3]) fail("matmul_heads_pv: p and v differ in B or S");
  return matmul_strided(view_of(p), heads_view(v, int64_t(p.shape()[1]), "matmul_heads_pv"));
}

// ================================================================================
// 6) Which OpenBLAS kernel runs (the choice itself lives in fast/blas_core.cpp)
// ================================================================================
// (blas_core, set_blas_threads and blas_threads: exact/openblas.cpp)
int64_t sgemm_calls() { return g_sgemm_calls.load(std::memory_order_relaxed); }

}  // namespace ts
