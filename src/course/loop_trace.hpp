// course/loop_trace.hpp: the training loop as it ran, from the trace of its first steps (issue 41:
// "the training loop, written out" from what ran, not from fixed text). Introduced in ch12.
#pragma once

#include <vector>

#include "base/trace.hpp"
#include "course/chapter.hpp"

namespace ts {

// "  each training step ran (traced, steps 1-2): forward, loss, zero_grad, backward, Adam.step", and,
// when a backward started from gradients left by the step before (zero_grad missing or misplaced),
// a NOT OK measuring them: each step's gradients then add up over the run.
void show_loop_trace(Chapter& ch, const std::vector<TraceEvent>& events);

}  // namespace ts
