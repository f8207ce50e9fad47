// mask_stats.hpp: what ch08's notes measure on masks and attention weights (introduced in
// ch08; moved out of the chapter so its main shows the masks). Every tensor is read as rows of
// its last dim; `keep` is a 0/1 mask of the same size as the weights it describes (1 = keep).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "exact/tensor.hpp"

namespace ts {

// torch.equal: same shape and every element equal (xtensor's == on containers; NaN != NaN).
template <class A>
bool same(const A& a, const A& b) {
  return a == b;
}
std::string py_bool(bool b);                   // "True" / "False"
size_t count_equal(const Tensor& t, float v);  // (t == v).sum()
size_t empty_rows(const Tensor& keep);         // rows that keep no key
size_t nan_rows(const Tensor& w);              // rows that are all nan
// largest weight on a hidden key (nan if one is nan)
float max_hidden(const Tensor& w, const Tensor& keep);
// largest |row sum - 1| (nan if a row is nan)
double row_sum_dev(const Tensor& w);
// largest |w - 1/n| over the n kept keys of each row; a row that keeps no key is held to
// 1/S over all S keys (what -1e9 gives it); only_empty: check those rows only
double uniform_dev(const Tensor& w, const Tensor& keep, bool only_empty);
// (a - b).abs().max() over the rows of a that are not all nan (core max_abs_diff)
double kept_rows_diff(const Tensor& a, const Tensor& b);
// largest weight a query gives its own key or an earlier one, over the rows that keep a key
float max_on_or_below_diagonal(const Tensor& w, const Tensor& keep);
// the values masked_fill wrote, if they are all one value: "-inf", "-1e+09"; else "mixed"
std::string filled_value(const Tensor& filled, const Tensor& keep);
// Which keys a (T,S) 0/1 mask keeps (1 = keep), in words: "token t sees tokens 0..t" when it is
// the causal triangle, "token t sees tokens t..T-1" or "... only the FUTURE tokens t+1..T-1" when
// it is a flip of it, else "" (another pattern).
std::string kept_pattern(const Tensor& keep);
// The table of the articles' masks: which polarity each uses and how it applies it.
std::string polarity_table();

// The note under create_look_ahead_mask(n): which keys it hides, read from the mask (1 = hide).
std::string look_note(const Tensor& look);
// The NOT OK of a comparison between Step 2's mask (or its weights) and one built from `other`,
// a causal mask: what was measured of Step 2's mask (causal or not, and its kept_pattern).
std::string mask_differs(bool causal, const std::string& pattern, const std::string& other);

// Why a KV cache cannot give what a full pass with this self-attention mask gives, read from the
// mask: hide (T,T) row-major, 1 = hide, as the forward built it (its padding-free part). A cached
// step for token t attends over the t+1 positions cached so far, all of them, so it reproduces
// exactly the causal triangle. Returns "" for that triangle; else the first query t (in order)
// that sees a later key s > t ("the mask lets query 2 see key 3, a later position: ..."), or
// that hides an earlier key s <= t, and `site` (file:function) as where to look.
std::string mask_breaks_cache(const std::vector<float>& hide, int64_t T, const std::string& site);

}  // namespace ts
