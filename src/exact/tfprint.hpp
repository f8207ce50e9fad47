// tfprint.hpp: print tensors the way article 004 (TensorFlow) shows them (introduced in ch01).
//   print(t.shape)  -> (50, 512)
//   print(t)        -> tf.Tensor(\n[[0. 1. 1.]\n [0. 0. 1.]\n [0. 0. 0.]], shape=(3, 3), dtype=float32)
// The array text is numpy's array_str (precision 8, unique shortest digits, linewidth 75,
// summarised above 1000 elements), which is what TensorFlow's str() uses.
#pragma once

#include <string>

#include "exact/tensor.hpp"

namespace ts {

std::string tf_shape_str(const Shape& shape);        // (50, 512)   (5,)   ()
std::string np_array_str(const Tensor& t);           // numpy.array_str of float32 values
std::string tf_str(const Tensor& t);                 // tf.Tensor(..., shape=(...), dtype=float32)

}  // namespace ts
