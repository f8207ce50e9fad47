// softmax_notes.cpp: see softmax_notes.hpp.
#include "course/softmax_notes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "course/i18n.hpp"
#include "course/layout.hpp"

namespace ts {

// naive_w, library (1,T,S). A row is lost when its sum overflowed: nan where an entry was inf
// (inf / inf), 0 elsewhere (finite / inf).
std::string naive_softmax_note(Chapter& ch, const Tensor& naive_w, const Tensor& library, double tol) {
  const size_t S = naive_w.shape()[2], T = naive_w.size() / S;
  size_t lost = 0, nans = 0;
  double good_gap = 0;
  for (size_t t = 0; t < T; ++t) {
    const float* row = naive_w.data() + t * S;
    size_t row_nans = 0;
    double sum = 0;
    for (size_t s = 0; s < S; ++s) {
      row_nans += std::isnan(row[s]);
      sum += row[s];
    }
    nans += row_nans;
    if (row_nans > 0 || sum == 0.0) {
      ++lost;
      continue;
    }
    for (size_t s = 0; s < S; ++s)
      good_gap = std::max(good_gap, std::fabs(static_cast<double>(row[s]) - library.data()[t * S + s]));
  }
  std::string note;
  if (lost > 0)
    note = trf("{lost} of the {T} rows overflow: their sum is inf, so inf / inf = nan and finite / inf = 0 ({n} "
               "nan in all). The naive formula destroys those rows.",
               fmt::arg("lost", lost), fmt::arg("T", T), fmt::arg("n", nans));
  if (lost < T) {
    if (!note.empty()) note += " ";
    const bool ok = good_gap <= tol;
    note += ch.verdict(ok, trf(ok ? N_("{good} of the {T} rows do not overflow, and there the naive formula matches "
                                       "F.softmax: max difference {d:.3g} (tolerance for float rounding: {tol})")
                                  : N_("{good} of the {T} rows do not overflow, but there the naive formula differs from "
                                       "F.softmax by {d:.3g}, above {tol}"),
                               fmt::arg("good", T - lost), fmt::arg("T", T), fmt::arg("d", good_gap),
                               fmt::arg("tol", short_sci(tol))));
  }
  return note;
}

std::string scaling_table(const std::vector<int64_t>& dks, const std::vector<Peak>& unscaled,
                                 const std::vector<Peak>& scaled) {
  const std::string max_weight = _("max weight"), eff_keys = _("eff. keys");
  std::string table = "  " + pad_left("", 6) + "  " + pad_left(_("unscaled"), 22) + "  " +
                      pad_left(_("scaled by 1/sqrt(d_k)"), 22) + "\n";
  table += "  " + pad_left("d_k", 6) + "  " + pad_left(max_weight, 10) + " " + pad_left(eff_keys, 11) + "  " +
           pad_left(max_weight, 10) + " " + pad_left(eff_keys, 11) + "\n";
  for (size_t i = 0; i < dks.size(); ++i)
    table += fmt::format("  {:>6}  {:>10.3f} {:>11.2f}  {:>10.3f} {:>11.2f}\n", dks[i], unscaled[i].max_weight,
                         unscaled[i].effective_keys, scaled[i].max_weight, scaled[i].effective_keys);
  return table;
}

}  // namespace ts
