// train/module_check.hpp: does the model ch11 trains still compute what ch10's module computes?
// (introduced in ch11, for issue "edit anything": derived code follows the model or says so.)
//
// ch11 trains its own implementation (train/model.cpp, with a hand-written backward); it only
// copies ch10's weights. A learner who edits ch10's EncoderDecoder (src/transformer/annotated.cpp)
// would see ch11 train the old model silently; this check runs both on the same batch with the
// same weights and says whether they agree.
#pragma once

#include <string>

#include "train/model.hpp"
#include "transformer/annotated.hpp"

namespace ts::train {

// ch10's create_model(V_src, V_tgt, N, d_model, d_ff, h) of m's sizes, holding m's weights
// (the reverse of init_model's copy).
EncoderDecoder to_module(const Model<float>& m);

struct ModuleCheck {
  double maxdiff = 0;       // max |ours - module's| over the log-probabilities (B,T,V)
  double scale = 0;         // max |log-probability| of the module's (the tolerance grows with it)
  // ours runs OpenBLAS products, the module torch's: every sum of the whole model in another order,
  // then a log-softmax over V; rounding grows with the values (exact/compare.hpp):
  // kModuleGrowth float epsilons x max(1, scale), 1.2e-4 for values of size 1
  static constexpr double kModuleGrowth = 1024;
  double tolerance = 0;
  bool ok = false;          // maxdiff <= tolerance for one of the variants below
  bool relu = false;        // the variant that came closest: ours with the ReLU on (as ch11 trains) or off
  int64_t B = 0, T = 0, V = 0;
};

// On batch b, both in eval mode (dropout off), with the masks ch11's create_mask builds
// (1 = hide, handed to the module as its true = keep):
//   module:  generator(decode(encode(inputs, enc_mask), cross_mask, tar_inp, self_mask))
//   ours:    log_softmax of forward(m') (train/model.cpp), m' = m's weights with ch10's layer:
//            pre-LN, scores divided by sqrt(d_k), the feed-forward with and without its ReLU
//            (article 002's listing has none; article 004's, which ch11 trains, has one).
ModuleCheck check_against_module(EncoderDecoder& module, const Model<float>& m, const Batch& b);

}  // namespace ts::train
