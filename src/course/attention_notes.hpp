// attention_notes.hpp: notes that ch04 prints under attention weights, each computed from the
// tensors and modules it describes (introduced in ch04). Presentation only: the chapter keeps
// the model lines, these turn what they built into sentences.
#pragma once

#include <string>

#include "exact/tensor.hpp"
#include "transformer/nn.hpp"

namespace ts {

// Under a module's output: what its dropout did to the weights attn (B,H,T,S) on this call.
// Eval mode: no dropout; train mode: how many weights it zeroed (counted) and the 1/(1-p)
// scaling of the rest; p = 0 or no zero drawn: says so.
std::string dropout_weights_note(const Dropout& dropout, const Tensor& attn);
// Under one head's output: each row is a weighted mean of the S value rows, and the range of
// the head's weights w (B,T,S) against the uniform 1/S.
std::string weights_range_note(const Tensor& w);
// The mean weight a token puts on itself with q = k = v (ch03's weights `unprojected`, (B,T,T))
// against the heads' weights `projected` (B,H,T,T), and 1/T.
std::string self_weight_note(const Tensor& unprojected, const Tensor& projected);
// After a TensorFlow-printed result: its numbers are not TensorFlow's, since the course drew
// the `inputs` input numbers and the four (C,C) weights with PyTorch's generator (seed `seed`).
std::string not_tensorflow_draws_note(size_t inputs, size_t C, const std::string& seed);
// One line on a module's weights w (1,H,T,S): the mean weight a position puts on itself, 1/T,
// and the range of the heads' largest weights.
std::string head_peaks_note(const Tensor& w);
// Under an output x (1,T,C): how much a column varies across the T rows, against the range of
// all values (rows that are means of similar rows barely differ).
std::string row_spread_note(const Tensor& x);

}  // namespace ts
