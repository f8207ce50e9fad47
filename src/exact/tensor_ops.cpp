// tensor_ops.cpp: see tensor_ops.hpp. Every op is a block copy on row-major data: a tensor
// of shape (outer, n, inner) around the axis it works on.
#include "exact/tensor_ops.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ts {
namespace {

size_t axis_of(int dim, size_t rank, const char* op) {
  const int r = static_cast<int>(rank);
  if (dim < -r || dim >= r) throw std::invalid_argument(std::string(op) + ": dim out of range");
  return static_cast<size_t>(dim < 0 ? dim + r : dim);
}

size_t prod(const Shape& s, size_t b, size_t e) {
  size_t n = 1;
  for (size_t i = b; i < e; ++i) n *= s[i];
  return n;
}

}  // namespace

Tensor cat(const std::vector<const Tensor*>& parts, int dim) {
  // (outer, n_i, inner) for each part -> (outer, sum n_i, inner)
  if (parts.empty()) throw std::invalid_argument("cat: nothing to concatenate");
  Shape shape = shape_of(*parts[0]);
  const size_t ax = axis_of(dim, shape.size(), "cat");
  size_t total = 0;
  for (const Tensor* p : parts) {
    Shape s = shape_of(*p);
    if (s.size() != shape.size()) throw std::invalid_argument("cat: parts differ in rank");
    for (size_t i = 0; i < s.size(); ++i)
      if (i != ax && s[i] != shape[i]) throw std::invalid_argument("cat: parts differ outside dim");
    total += s[ax];
  }
  const size_t outer = prod(shape, 0, ax), inner = prod(shape, ax + 1, shape.size());
  shape[ax] = total;
  Tensor out = Tensor::from_shape(shape);
  size_t offset = 0;  // along the axis
  for (const Tensor* p : parts) {
    const size_t n = p->shape()[ax];
    for (size_t o = 0; o < outer; ++o)
      std::copy_n(p->data() + o * n * inner, n * inner, out.data() + (o * total + offset) * inner);
    offset += n;
  }
  return out;
}

Tensor cat(const std::vector<Tensor>& parts, int dim) {
  std::vector<const Tensor*> ptrs;
  for (const Tensor& p : parts) ptrs.push_back(&p);
  return cat(ptrs, dim);
}

Tensor stack(const std::vector<Tensor>& parts, int dim) {
  // H x (outer, inner) -> (outer, H, inner)
  if (parts.empty()) throw std::invalid_argument("stack: nothing to stack");
  Shape shape = shape_of(parts[0]);
  const size_t ax = axis_of(dim, shape.size() + 1, "stack");
  const size_t outer = prod(shape, 0, ax), inner = prod(shape, ax, shape.size()), H = parts.size();
  for (const Tensor& p : parts)
    if (shape_of(p) != shape) throw std::invalid_argument("stack: parts differ in shape");
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(ax), H);
  Tensor out = Tensor::from_shape(shape);
  for (size_t o = 0; o < outer; ++o)
    for (size_t h = 0; h < H; ++h)
      std::copy_n(parts[h].data() + o * inner, inner, out.data() + (o * H + h) * inner);
  return out;
}

Tensor split_heads(const Tensor& x, int64_t heads) {
  // (B,T,C) -> (B,H,T,D): out[b,h,t,:] = x[b,t,h*D:(h+1)*D]
  if (x.dimension() != 3 || heads <= 0 || x.shape()[2] % static_cast<size_t>(heads) != 0)
    throw std::invalid_argument("split_heads: x must be (B,T,C) with H dividing C");
  const size_t B = x.shape()[0], T = x.shape()[1], C = x.shape()[2], H = static_cast<size_t>(heads), D = C / H;
  Tensor out = Tensor::from_shape({B, H, T, D});
  for (size_t b = 0; b < B; ++b)
    for (size_t h = 0; h < H; ++h)
      for (size_t t = 0; t < T; ++t)
        std::copy_n(x.data() + (b * T + t) * C + h * D, D, out.data() + ((b * H + h) * T + t) * D);
  return out;
}

Tensor merge_heads(const Tensor& x) {
  // (B,H,T,D) -> (B,T,H*D): out[b,t,h*D:(h+1)*D] = x[b,h,t,:]
  if (x.dimension() != 4) throw std::invalid_argument("merge_heads: x must be (B,H,T,D)");
  const size_t B = x.shape()[0], H = x.shape()[1], T = x.shape()[2], D = x.shape()[3];
  Tensor out = Tensor::from_shape({B, T, H * D});
  for (size_t b = 0; b < B; ++b)
    for (size_t h = 0; h < H; ++h)
      for (size_t t = 0; t < T; ++t)
        std::copy_n(x.data() + ((b * H + h) * T + t) * D, D, out.data() + (b * T + t) * H * D + h * D);
  return out;
}

Tensor slice_rows(const Tensor& t, size_t r0, size_t n) {
  // (R,...) -> (n,...)
  Shape shape = shape_of(t);
  if (shape.empty() || r0 + n > shape[0]) throw std::invalid_argument("slice_rows: rows out of range");
  const size_t row = shape[0] ? t.size() / shape[0] : 0;
  shape[0] = n;
  Tensor out = Tensor::from_shape(shape);
  std::copy_n(t.data() + r0 * row, n * row, out.data());
  return out;
}

Tensor position(const Tensor& x, size_t t, bool keepdim) {
  // (B,T,C) -> (B,C) or (B,1,C)
  if (x.dimension() != 3 || t >= x.shape()[1]) throw std::invalid_argument("position: x must be (B,T,C), t < T");
  const size_t B = x.shape()[0], T = x.shape()[1], C = x.shape()[2];
  Tensor r = keepdim ? Tensor::from_shape({B, 1, C}) : Tensor::from_shape({B, C});
  for (size_t b = 0; b < B; ++b) std::copy_n(x.data() + (b * T + t) * C, C, r.data() + b * C);
  return r;
}

Tensor tril_ones(size_t n) {
  // (n,n): 1 where s <= t
  Tensor m = Tensor::from_shape({n, n});
  for (size_t t = 0; t < n; ++t)
    for (size_t s = 0; s < n; ++s) m(t, s) = s <= t ? 1.0f : 0.0f;
  return m;
}

}  // namespace ts
