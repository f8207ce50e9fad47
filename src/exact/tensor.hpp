// tensor.hpp: the course's tensor types and its one shape vocabulary.
//
// Shape letters, used in every comment of the project (see docs/conventions.md):
//   B batch, T target/query length, S source/key length, C = d_model,
//   H heads, D = d_k = C / H, F = d_ff, V vocabulary size.
// Shapes are written in PyTorch order, e.g. x (B,T,C).
//
// Tensors are xtensor containers, row-major, any rank. Three element types
// are enough for the course: float32 values, int64 ids, bool masks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

namespace ts {

using Tensor = xt::xarray<float>;     // float32, like torch.float32
using ITensor = xt::xarray<int64_t>;  // int64 ids, like torch.long
using BTensor = xt::xarray<bool>;     // masks, like torch.bool
using Shape = std::vector<size_t>;
// a module's parameters by their PyTorch state_dict names, in named_parameters() order
using NamedTensors = std::vector<std::pair<std::string, Tensor*>>;

// A tensor of the given shape filled with zeros (xt::zeros is lazy; this is real storage).
inline Tensor zeros(const Shape& shape) {
  Tensor t = Tensor::from_shape(shape);
  t.fill(0.0f);
  return t;
}

// Shape of any xtensor container as a plain vector (PyTorch order).
template <class E>
Shape shape_of(const E& e) {
  return Shape(e.shape().begin(), e.shape().end());
}

}  // namespace ts
