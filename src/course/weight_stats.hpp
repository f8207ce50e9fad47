// weight_stats.hpp: the statistics that the notes of ch03 and ch04 quote about scores and
// attention weights (introduced in ch03, used again in ch04). Nothing here computes the model:
// each function only measures a tensor the chapter built, so a note can say what it holds.
#pragma once

#include <string>
#include <vector>

#include "exact/tensor.hpp"

namespace ts {

// What the notes say about a (B,T,S) matrix of batch 0 (T = S): its range, its diagonal, and
// by how much each row's best entry beats the runner-up.
struct RowStats {
  double min = 0, max = 0, diag_min = 0, diag_max = 0, min_gap = 0, max_gap = 0;
  double min_ratio = 0, max_ratio = 0;  // best / runner-up
  size_t diagonal_max_rows = 0;         // rows whose diagonal entry is their largest
};
// x (1,T,S), T = S -> range, diagonal range, runner-up gaps
RowStats row_stats(const Tensor& x);
// The largest sum of a row's off-diagonal weights.   w (1,T,S), T = S
double off_diagonal_mass(const Tensor& w);
// Largest relative gap between x[t,t] and |e_t|^2 = sum_c e[t,c]^2.   x (1,T,T), e (1,T,C)
double diagonal_vs_squared_norms(const Tensor& x, const Tensor& e);
// Mean and population standard deviation of all entries.
double mean_of(const Tensor& x);
double std_of(const Tensor& x);
// How peaked rows of weights are: the mean largest weight, and the mean exp(entropy) = the
// number of keys a row effectively spreads over (1 = one key, S = all keys equally).
struct Peak {
  double max_weight = 0, effective_keys = 0;
};
Peak peakedness(const Tensor& w);  // w (B,T,S) -> averages over the B*T rows
// The mean weight a query puts on its own position: w (..., T, T) -> a number in [0, 1]
// (1/T for uniform rows, 1 when every token attends only to itself).
double mean_diagonal(const Tensor& w);
// The largest attention weight of each head: w (1,H,T,S) -> H numbers.
std::vector<float> max_per_head(const Tensor& w);
// How far apart the rows of x (1,T,C) are: the largest spread (max - min over the T rows) of
// any column, and the range of all values.
struct ColumnSpread {
  double spread = 0, lo = 0, hi = 0;
};
ColumnSpread column_spread(const Tensor& x);
// Are the rows of x (..., V) log-probabilities? The largest |sum_v exp(x) - 1| over the rows
// (double sums) and the largest entry (<= 0 for log-probabilities).
struct ExpRowSums {
  float sum_err = 0, top = 0;
};
ExpRowSums exp_row_sums(const Tensor& x);
// How many entries are exactly 0 (dropout's zeros).
size_t count_zeros(const Tensor& t);
// A tolerance as a person writes it: 1e-05 -> "1e-5", 0.0001 -> "1e-4", 0.5 -> "0.5".
std::string short_sci(double x);
// {"q0", "q1", ...}
std::vector<std::string> numbered(const std::string& prefix, size_t n);

}  // namespace ts
