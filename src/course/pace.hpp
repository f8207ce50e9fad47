// pace.hpp: how long a loop will take, read from its first steps (introduced in ch09, whose
// decoding loop is the long part of a run with large sizes).
#pragma once

#include <vector>

namespace ts {

// The processor time this process has used so far, in seconds, all its threads together: a step's
// cost as the machine counts it, which other programs sharing the cores do not stretch (they
// stretch the clock; a loaded machine's clock says little about the sizes).
double cpu_seconds();

// The seconds a loop of work.size() steps takes, step k doing work[k] (its multiply-adds, counted
// before it runs), from the measured seconds of its first steps, timed[k] for step k
// (1 <= timed.size() <= work.size()): the timed steps as measured, every later step at the pace of
// the last one timed (its seconds per unit of work). The first step may do one-time work at another
// pace (ch09: the memory's keys and values, projected once), so time two steps where there are two.
// A last timed step with no work gives no pace: the timed steps' sum, then.
double loop_seconds(const std::vector<double>& work, const std::vector<double>& timed);

}  // namespace ts
