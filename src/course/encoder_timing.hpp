// encoder_timing.hpp: ch07's Step 7, the same encoder timed on three paths (the PyTorch-exact
// code, the fast path, with --naive the plain loops), and the check that the fast path, a second
// implementation of the encoder, still computes what the module the learner reads computes
// (introduced in ch07; the measurements behind docs/performance.md are `make bench`'s).
#pragma once

#include "course/chapter.hpp"
#include "exact/tensor.hpp"
#include "transformer/nn.hpp"
#include "transformer/transformer_encoder.hpp"

namespace ts {

// The fast path may differ from the exact one by what rounding in another order explains, which
// grows with the values (exact/compare.hpp): kFastGrowth float epsilons x max(1, max |exact|).
// Its products are packed GEMMs and its exp / GELU / LayerNorm row kernels agree with torch's to
// ~1e-6 relative, through every layer: 8x kRoundingGrowth, 1.2e-4 for values of size 1.
constexpr double kFastGrowth = 1024;

// Times encoder(input_ids) on each path in eval mode, on 1 thread, prints the table and the
// notes, and checks max |fast - exact| (a verdict: NOT OK names the files to edit as well).
// full_timing: each path for ~0.4 s (--time), otherwise a warm-up and 3 runs.
// Leaves `encoder` in eval mode and the matmul/kernel paths on BLAS/exact.
void time_encoder_paths(Chapter& ch, TransformerEncoder& encoder, const ITensor& input_ids, bool full_timing);

}  // namespace ts
