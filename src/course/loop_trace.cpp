// course/loop_trace.cpp: the training loop as it ran (see loop_trace.hpp).
#include "course/loop_trace.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "course/i18n.hpp"

namespace ts {

void show_loop_trace(Chapter& ch, const std::vector<TraceEvent>& events) {
  const std::vector<std::string> calls = trace_calls(events);
  if (calls.empty()) return;  // no step ran
  // one step: the calls up to the second "forward"
  size_t end = 1;
  while (end < calls.size() && calls[end] != "forward") ++end;
  const size_t steps = std::max<size_t>(1, trace_count(events, "forward"));
  const std::vector<std::string> one(calls.begin(), calls.begin() + static_cast<std::ptrdiff_t>(end));
  ch.say(trf("  each training step ran (traced, {n}): {calls}", fmt::arg("n", steps == 1 ? _("step 1") : _("steps 1-2")),
             fmt::arg("calls", fmt::format("{}", fmt::join(one, ", ")))));
  // what each backward started from: 0 when the gradients were zeroed before it
  double left = 0;
  for (const TraceEvent& e : events)
    if (e.kind == TraceEvent::Kind::Value && std::string(e.name) == "grads.sum_abs_before_backward")
      left = std::max(left, e.value);
  if (left != 0.0)
    ch.say("  " + ch.verdict(false, trf("a backward started from gradients summing |g| = {g:.3g}, not 0: nothing zeroed "
                                        "them after the step before, so each step's gradients add up over the run and "
                                        "Adam follows their running sum; article 004's train_step computes fresh ones "
                                        "every step (look at the calls above: zero_grad before backward)",
                                        fmt::arg("g", left))));
}

}  // namespace ts
