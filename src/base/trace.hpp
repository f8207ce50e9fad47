// trace.hpp: what ran, recorded while a chapter asks (issue 41, "every sentence from what ran").
//
// Like PyTorch's forward hooks: a module opens its forward (or backward) with
//   TS_TRACE_SCOPE("LayerNorm", x);
// and, while a TraceRecorder is alive on this thread, the trace gets an Enter event (the name as
// the article names the module, the input's shape) and, when the function returns, a Leave event.
// The training step, the optimiser, the data split, the KV cache and the beam record what they
// did as named calls and values (trace_call, trace_value). A chapter then renders a sentence from
// the events (what ran, counted: "DecoderLayer" x 6 then "LayerNorm" under "Decoder") instead of
// from a setting or fixed text (docs/conventions.md, "How a sentence gets its facts").
//
// Off (no recorder on this thread): one predictable branch on a thread-local pointer per hook, no
// allocation, no formatting; names are string literals stored as pointers. Only the thread that
// started the recorder records (the fast path's and training's workers never touch the trace).
// This is the lowest layer of src/: it includes nothing of the course and no tensor header.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

struct TraceEvent {
  enum class Kind : uint8_t { Enter, Leave, Call, Value, Output };
  Kind kind;
  const char* name;  // a string literal: "Decoder", "LayerNorm", "zero_grad", "Adam.beta_1"
  uint8_t rank = 0;  // Enter: the input's rank, Output: the output's (at most 4 dims kept)
  std::array<size_t, 4> shape{};
  double value = 0.0;  // Value: the measured number; Enter, Output: how many elements are NaN or inf
};

namespace detail {
// How many recorders are alive, in any thread: 0 (the usual case) means nobody traces, and a hook
// costs this one load and branch. The thread's own list lives in trace.cpp (a thread_local read
// only there: an `extern thread_local` read through GCC's TLS wrapper in every file that includes
// this header is reported as a null load by GCC 12's UBSan).
extern std::atomic<int> trace_recorders;
bool trace_here();  // a recorder is on in this thread
void trace_push(const TraceEvent& e);
}  // namespace detail

inline bool trace_on() {
  return detail::trace_recorders.load(std::memory_order_relaxed) != 0 && detail::trace_here();
}

// A named call of the training step or a decoder ("forward", "loss", "zero_grad", "backward",
// "step"); a measured value ("Adam.beta_1" = 0.9 read back from the update).
inline void trace_call(const char* name) {
  if (trace_on()) detail::trace_push({TraceEvent::Kind::Call, name});
}
inline void trace_value(const char* name, double v) {
  if (trace_on()) {
    TraceEvent e{TraceEvent::Kind::Value, name};
    e.value = v;
    detail::trace_push(e);
  }
}

// The output of the innermost open scope: its shape and how many of its elements are not finite
// (NaN, inf), so a check can name where a NaN first appeared: `return trace_output(f(x));`.
// Returns y (moved); costs a branch when off.
template <class Y>
Y trace_output(Y y) {
  if (trace_on()) {
    TraceEvent e{TraceEvent::Kind::Output, nullptr};
    const auto& s = y.shape();
    e.rank = static_cast<uint8_t>(s.size() < 4 ? s.size() : 4);
    for (size_t i = 0; i < e.rank; ++i) e.shape[i] = s[i];
    size_t bad = 0;
    for (const auto v : y) bad += !(v - v == v - v);  // NaN or inf: v - v is NaN
    e.value = static_cast<double>(bad);
    detail::trace_push(e);
  }
  return y;
}

// Enter on construction, Leave on destruction (any return path). The shape is read only when a
// recorder is on; X is anything with .shape() (a Tensor) or nullptr_t for "no tensor input".
// A null name records nothing: a part that its article does not name as a module (article 000's
// residual, a SublayerConnection in the other articles) opens no scope of its own.
class TraceScope {
 public:
  template <class X>
  TraceScope(const char* name, const X& x) : name_(name) {
    if (name && trace_on()) {
      TraceEvent e{TraceEvent::Kind::Enter, name};
      const auto& s = x.shape();
      e.rank = static_cast<uint8_t>(s.size() < 4 ? s.size() : 4);
      for (size_t i = 0; i < e.rank; ++i) e.shape[i] = s[i];
      size_t bad = 0;  // NaN or inf in the input: v - v is NaN
      for (const auto v : x) bad += !(v - v == v - v);
      e.value = static_cast<double>(bad);
      detail::trace_push(e);
      on_ = true;
    }
  }
  explicit TraceScope(const char* name) : name_(name) {
    if (name && trace_on()) detail::trace_push({TraceEvent::Kind::Enter, name}), on_ = true;
  }
  ~TraceScope() {
    if (on_ && trace_on()) detail::trace_push({TraceEvent::Kind::Leave, name_});
  }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  const char* name_;
  bool on_ = false;
};

#define TS_TRACE_CAT2(a, b) a##b
#define TS_TRACE_CAT(a, b) TS_TRACE_CAT2(a, b)
// TS_TRACE_SCOPE("LayerNorm", x) or TS_TRACE_SCOPE("Adam.step"): one line at the top of a function
#define TS_TRACE_SCOPE(...) const ::ts::TraceScope TS_TRACE_CAT(ts_trace_scope_, __LINE__)(__VA_ARGS__)

// Records this thread's events into `into` while alive; nests (the inner recorder wins until it
// ends). A probe the chapter runs to measure something (not a step) records into its own list.
class TraceRecorder {
 public:
  explicit TraceRecorder(std::vector<TraceEvent>& into);
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

 private:
  std::vector<TraceEvent>* previous_;
};

// Reading a trace (the chapter's side; these allocate, they run after the step).
// The names of the modules entered directly inside the first scope named `parent`, in order,
// each followed by [k] when the same name ran more than once there: {"DecoderLayer[0]", ...,
// "DecoderLayer[5]", "LayerNorm"}. Empty when `parent` never ran.
std::vector<std::string> trace_children(const std::vector<TraceEvent>& events, const char* parent);
// "DecoderLayer x 6, then LayerNorm": the children folded into runs of one name.
std::string trace_children_words(const std::vector<std::string>& children);
// The Call events in order ({"forward", "loss", "zero_grad", "backward", "step"}), and how
// many times `name` was called.
std::vector<std::string> trace_calls(const std::vector<TraceEvent>& events);
size_t trace_count(const std::vector<TraceEvent>& events, const char* name);
// Where the trace first saw a NaN or inf: the scope whose output held it (a trace_output, or the
// scope that returned just before a scope received it), as the open scopes, outermost first, each
// counted among its siblings ("EncoderClassifier > TransformerEncoderLayer[0] > MultiHeadAttention");
// the receiving scope's path prefixed "the input of " when nothing returned before it; empty when
// every traced input and output was finite.
std::string trace_first_nonfinite(const std::vector<TraceEvent>& events);
// The last Value named `name`; `fallback` when none was recorded.
double trace_last_value(const std::vector<TraceEvent>& events, const char* name, double fallback);

}  // namespace ts
