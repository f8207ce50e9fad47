// layernorm_notes.hpp: ch06's checks and tables on LayerNorm outputs, the statistics that only
// feed its notes (introduced in ch06; moved out of the chapter so its main shows the model).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "course/chapter.hpp"
#include "exact/stats.hpp"
#include "exact/tensor.hpp"

namespace ts {

// t (..., 1) -> (...): drop the kept last dim (what torch prints for x.mean(-1) without keepdim)
Tensor squeeze_last(Tensor t);
// The smallest and largest value of a list, in double.
Range range_of(const std::vector<double>& v);
// f(v) for every value v of a per-row statistic: (T) -> T doubles
std::vector<double> per_row(const Tensor& stat, const std::function<double(double)>& f);

// How many rows of an embedding lookup e (B,T,C) are not, value for value, the table's row
// weight[ids[t]] (V,C) for their id: 0 when the lookup copied every row.   ids (B,T)
size_t rows_not_from_table(const Tensor& e, const Tensor& weight, const ITensor& ids);
// The values of a whole table (an embedding's weight), measured: their mean, std (population)
// and kurtosis (4th moment / std^4), and whether those are N(0, 1)'s 0, 1 and 3 within five
// standard errors of n draws (sqrt(1/n), sqrt(2/n) for the variance, sqrt(24/n)): how the table
// was drawn, read from the table rather than from its initialiser's name.
struct Moments {
  double mean = 0, std = 0, kurtosis = 0;
  bool standard_normal = false;
};
Moments moments_of(const Tensor& table);
// How many values of x are NaN or inf
size_t count_nonfinite(const Tensor& x);

// y.mean(-1) and y.var(-1, unbiased=False) of a LayerNorm's output, shown and checked against
// its bias and weight² x unit[t] (the formula's own variance per row, named by `formula`).
// Returns true when both checks hold (or weight/bias are not uniform and nothing is checked).
bool row_stats(Chapter& ch, const std::string& name, const Tensor& y, const Tensor& weight, const Tensor& bias,
               const std::vector<double>& unit, const std::string& formula);

// What a LayerNorm divided the row x by, measured: (x_k - mean) / y_k at the k farthest from
// the mean (bias 0, weight 1); 0 when the row is constant.   x (1,n), y (1,n) -> a number
double divisor_of(const Tensor& x, const Tensor& y);
// A divisor note: the measured one against the formula's (`how` = formula), OK within 1e-4 relative.
std::string divisor_note(Chapter& ch, double measured, double formula, const std::string& how);

// A short row in float32 and in double: what the modules' float32 arithmetic can overflow.
// mean_f, var_f: x.mean(-1) and x.var(-1, unbiased=False) in float32; mean, var_n, var_u: the same
// in double (var_u divided by n - 1), sum_sq = sum (x - mean)^2; big: the largest of |x|, |mean| and
// |x - mean| (the statistics square it, and sum n of them); constant: every value equal.  x (1,n)
struct ShortRow {
  double mean_f = 0, var_f = 0, mean = 0, var_n = 0, var_u = 0, sum_sq = 0, big = 0;
  size_t n = 0;
  bool constant = false;
  // a square or a sum of the statistics passes float32's largest value, 3.40282e+38
  bool overflows() const;
};
ShortRow short_row(const Tensor& x);
// y's note when float32 overflow decides it, checked (OK / NOT OK): NaN outputs, or every output 0
// on a row that is not constant; "" otherwise (divisor_note speaks then). `what` names the quantity
// the module's divisor is made from (sum (x - mean)^2, std_u^2, std_n + eps) and `value` is it in
// double: above float32's largest, the divisor is inf in float32 and every output 0.   y (1,n)
std::string overflow_note(Chapter& ch, const Tensor& y, const ShortRow& r, const std::string& what, double value);

// The table of what each formula divides by, per token (var_n, var_u (T); eps of each), and the
// sentence after it: in how many rows article 002's divisor is the largest (follows_002: its
// module divides by its formula's divisor, as Step 3 measured).
void divisor_table(Chapter& ch, const std::vector<std::string>& tokens, const Tensor& var_n, const Tensor& var_u,
                   size_t C, double eps_000, double eps_002, double eps_004, bool follows_002);
// 1e-05 -> "1e-5", as the articles write an eps
std::string eps_str(double eps);

// "1,2,3,4" -> {1, 2, 3, 4}: plain decimal numbers only (what Python's float() reads the same
// way); bad input is a UsageError naming the fix.
std::vector<float> parse_row(const std::string& text);

}  // namespace ts
