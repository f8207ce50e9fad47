// course/settings.hpp: each training chapter's default knobs, once (introduced in ch14, for
// issue 32 "defaults live once"). The chapter binds its flags to these fields; a chapter that
// runs another chapter's model (ch14, ch12 --vs-ch11, ch10's look ahead at ch11) reads the same
// struct instead of copying its numbers, and says which settings it used (describe()).
// The values are written once, in settings.cpp (chNN_defaults()): change one there and every
// chapter that runs that model follows.
#pragma once

#include <cstdint>
#include <string>

namespace ts {

// ch11_training: article 004's encoder-decoder on the digits-to-words task
struct Ch11Settings {
  int64_t steps = 0, batch = 0, log_every = 0, threads = 0;
  int64_t layers = 0, d_model = 0, heads = 0, d_ff = 0;
  double dropout = 0, lr = 0, label_smoothing = 0;
};
Ch11Settings ch11_defaults();

// ch12_gpt: the decoder-only model
struct Ch12Settings {
  int64_t steps = 0, batch = 0, layers = 0, d_model = 0, heads = 0, d_ff = 0, log_every = 0, threads = 0;
  int64_t top_k = 0, samples = 0;
  double dropout = 0, lr = 0, temperature = 0, top_p = 0;
};
Ch12Settings ch12_defaults();

// ch13_classifier: the encoder-only classifier
struct Ch13Settings {
  int64_t steps = 0, batch = 0, log_every = 0;
  int64_t layers = 0, d_model = 0, heads = 0, d_ff = 0;
  double lr = 0, dropout = 0;
};
Ch13Settings ch13_defaults();

// "B = 64, lr 0.002, dropout 0, N = 2, C = 64, H = 4, F = 256": what a run of that chapter's
// model used, from the struct it was given (ch11's adds its label smoothing where it is not 0)
std::string describe(const Ch11Settings& s);
std::string describe(const Ch12Settings& s);
std::string describe(const Ch13Settings& s);

}  // namespace ts
