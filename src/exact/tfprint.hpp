// tfprint.hpp: print tensors the way article 004 (TensorFlow) shows them (introduced in ch01).
//   print(t.shape)  -> (50, 512)
//   print(t)        -> tf.Tensor(\n[[0. 1. 1.]\n [0. 0. 1.]\n [0. 0. 0.]], shape=(3, 3), dtype=float32)
// The array text is numpy's array_str (precision 8, unique shortest digits, linewidth 75,
// summarised above 1000 elements), which is what TensorFlow's str() uses;
// np.set_printoptions(linewidth=...) changes its wrapping, and so TensorFlow's.
#pragma once

#include <string>

#include "exact/tensor.hpp"

namespace ts {

// numpy's default line width (np.get_printoptions()['linewidth']).
constexpr size_t kNumpyLineWidth = 75;
// np.set_printoptions(linewidth=w) for every print that names no width of its own: the
// explained mode sets min(75, terminal columns) (Chapter::run); elsewhere numpy's 75.
void set_np_linewidth(size_t linewidth);
size_t np_linewidth();

// linewidth 0: np_linewidth()
std::string tf_shape_str(const Shape& shape);                         // (50, 512)   (5,)   ()
std::string np_array_str(const Tensor& t, size_t linewidth = 0);      // numpy.array_str of float32 values
std::string tf_str(const Tensor& t, size_t linewidth = 0);            // tf.Tensor(..., shape=(...), dtype=float32)

}  // namespace ts
