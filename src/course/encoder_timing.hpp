// encoder_timing.hpp: ch07's Step 7, the same encoder timed on three paths (the PyTorch-exact
// code, the fast path, with --naive the plain loops), and the check that the fast path, a second
// implementation of the encoder, still computes what the module the learner reads computes
// (introduced in ch07; the measurements behind docs/performance.md are `make bench`'s).
#pragma once

#include "course/chapter.hpp"
#include "exact/tensor.hpp"
#include "transformer/nn.hpp"

namespace ts {

// The fast path may differ from the exact one by this much: its sums round in another order.
constexpr float kFastTolerance = 1e-4f;

// Times encoder(input_ids) on each path in eval mode, on 1 thread, prints the table and the
// notes, and checks max |fast - exact| (a verdict: NOT OK names the files to edit as well).
// full_timing: each path for ~0.4 s (--time), otherwise a warm-up and 3 runs.
// Leaves `encoder` in eval mode and the matmul/kernel paths on BLAS/exact.
void time_encoder_paths(Chapter& ch, TransformerEncoder& encoder, const ITensor& input_ids, bool full_timing);

}  // namespace ts
