// softmax_notes.hpp: what ch03 prints beside its softmax steps, computed from the tensors the
// chapter built (introduced in ch03). Presentation only: the softmax itself stays in the chapter.
#pragma once

#include <string>
#include <vector>

#include "course/chapter.hpp"
#include "course/weight_stats.hpp"
#include "exact/tensor.hpp"

namespace ts {

// The note under the naive softmax exp(x) / sum exp(x): which rows overflowed (their sum is
// inf: nan where an entry was inf, 0 elsewhere), and a verdict on whether the other rows match
// F.softmax's `library` within `tol`.   naive_w, library (1,T,S)
std::string naive_softmax_note(Chapter& ch, const Tensor& naive_w, const Tensor& library, double tol);
// Step 5's table: for each d_k, the mean largest weight and eff. keys, unscaled and scaled.
std::string scaling_table(const std::vector<int64_t>& dks, const std::vector<Peak>& unscaled,
                          const std::vector<Peak>& scaled);

}  // namespace ts
