// test_trace.cpp: base/trace (what ran, counted; nothing recorded while off; where a NaN first appeared).
#include "catch_compat.hpp"

#include <cmath>
#include <vector>

#include "base/trace.hpp"

namespace {
struct Fake {  // a tensor stand-in: shape() and iteration
  std::vector<size_t> dims;
  std::vector<float> values;
  const std::vector<size_t>& shape() const { return dims; }
  auto begin() const { return values.begin(); }
  auto end() const { return values.end(); }
};
void layer(const Fake& x, bool nan_out) {
  TS_TRACE_SCOPE("DecoderLayer", x);
  { TS_TRACE_SCOPE("LayerNorm", x); }
  Fake y = x;
  if (nan_out) y.values[0] = NAN;
  (void)ts::trace_output(y);
}
void decoder(const Fake& x, int n, bool norm, int nan_at) {
  TS_TRACE_SCOPE("Decoder", x);
  for (int i = 0; i < n; ++i) layer(x, i == nan_at);
  if (norm) {
    TS_TRACE_SCOPE("LayerNorm", x);
  }
}
}  // namespace

TEST_CASE("a trace counts what ran inside a module, and records nothing while off", "[trace]") {
  const Fake x{{1, 5, 8}, std::vector<float>(40, 1.0f)};
  decoder(x, 3, true, -1);  // no recorder: nothing to see, nothing kept
  CHECK_FALSE(ts::trace_on());
  std::vector<ts::TraceEvent> ev;
  {
    const ts::TraceRecorder rec(ev);
    decoder(x, 3, true, -1);
    ts::trace_call("zero_grad");
    ts::trace_value("Adam.beta_1", 0.9);
  }
  CHECK_FALSE(ts::trace_on());
  const auto kids = ts::trace_children(ev, "Decoder");
  CHECK(kids == std::vector<std::string>{"DecoderLayer[0]", "DecoderLayer[1]", "DecoderLayer[2]", "LayerNorm"});
  CHECK(ts::trace_children_words(kids) == "DecoderLayer x 3, then LayerNorm");
  CHECK(ev.front().rank == 3);
  CHECK(ev.front().shape[2] == 8);
  CHECK(ts::trace_calls(ev) == std::vector<std::string>{"zero_grad"});
  CHECK(ts::trace_count(ev, "DecoderLayer") == 3);
  CHECK(ts::trace_last_value(ev, "Adam.beta_1", 0.0) == 0.9);
  CHECK(ts::trace_first_nonfinite(ev).empty());
  std::vector<ts::TraceEvent> without;
  {
    const ts::TraceRecorder rec(without);
    decoder(x, 2, false, -1);
  }
  CHECK(ts::trace_children_words(ts::trace_children(without, "Decoder")) == "DecoderLayer x 2");
}

TEST_CASE("a trace names where a NaN first appeared", "[trace]") {
  const Fake x{{1, 2}, {1.0f, 2.0f}};
  std::vector<ts::TraceEvent> ev;
  {
    const ts::TraceRecorder rec(ev);
    decoder(x, 3, true, 1);
  }
  CHECK(ts::trace_first_nonfinite(ev) == "Decoder > DecoderLayer[1]");
  // a NaN input seen on entry: the scope that returned just before it
  const Fake bad{{1, 2}, {NAN, 2.0f}};
  std::vector<ts::TraceEvent> ev2;
  {
    const ts::TraceRecorder rec(ev2);
    TS_TRACE_SCOPE("Decoder", x);
    { TS_TRACE_SCOPE("Embeddings", x); }
    { TS_TRACE_SCOPE("LayerNorm", bad); }
  }
  CHECK(ts::trace_first_nonfinite(ev2) == "Decoder > Embeddings");
}
