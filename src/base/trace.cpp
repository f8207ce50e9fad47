// trace.cpp: the recorder behind TS_TRACE_SCOPE() and the readers a chapter renders from (see trace.hpp).
#include "base/trace.hpp"

#include <cstring>

namespace ts {

namespace detail {
std::atomic<int> trace_recorders{0};
namespace {
thread_local std::vector<TraceEvent>* trace_events = nullptr;  // this thread's recorder's list
}  // namespace

bool trace_here() { return trace_events != nullptr; }
void trace_push(const TraceEvent& e) {
  if (trace_events) trace_events->push_back(e);
}
}  // namespace detail

TraceRecorder::TraceRecorder(std::vector<TraceEvent>& into) : previous_(detail::trace_events) {
  detail::trace_events = &into;
  detail::trace_recorders.fetch_add(1, std::memory_order_relaxed);
}

TraceRecorder::~TraceRecorder() {
  detail::trace_events = previous_;
  detail::trace_recorders.fetch_sub(1, std::memory_order_relaxed);
}

namespace {
bool same(const char* a, const char* b) { return a && b && std::strcmp(a, b) == 0; }

// names with [k] where a name ran more than once among its siblings
std::vector<std::string> indexed(const std::vector<const char*>& names) {
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i) {
    size_t total = 0, before = 0;
    for (size_t j = 0; j < names.size(); ++j)
      if (same(names[j], names[i])) total += 1, before += j < i;
    out.push_back(total > 1 ? std::string(names[i]) + "[" + std::to_string(before) + "]" : std::string(names[i]));
  }
  return out;
}
}  // namespace

std::vector<std::string> trace_children(const std::vector<TraceEvent>& events, const char* parent) {
  std::vector<const char*> names;
  size_t depth = 0;  // depth inside the parent's scope; 0 = not inside
  for (const TraceEvent& e : events) {
    if (e.kind == TraceEvent::Kind::Enter) {
      if (depth == 0) {
        if (same(e.name, parent)) depth = 1;
      } else {
        if (depth == 1) names.push_back(e.name);
        ++depth;
      }
    } else if (e.kind == TraceEvent::Kind::Leave && depth > 0) {
      if (--depth == 0) break;  // the first scope named `parent` ended
    }
  }
  return indexed(names);
}

std::string trace_children_words(const std::vector<std::string>& children) {
  std::string out;
  for (size_t i = 0; i < children.size();) {
    const std::string base = children[i].substr(0, children[i].find('['));
    size_t j = i;
    while (j < children.size() && children[j].substr(0, children[j].find('[')) == base) ++j;
    if (!out.empty()) out += ", then ";
    out += j - i > 1 ? base + " x " + std::to_string(j - i) : base;
    i = j;
  }
  return out;
}

std::vector<std::string> trace_calls(const std::vector<TraceEvent>& events) {
  std::vector<std::string> out;
  for (const TraceEvent& e : events)
    if (e.kind == TraceEvent::Kind::Call) out.emplace_back(e.name);
  return out;
}

size_t trace_count(const std::vector<TraceEvent>& events, const char* name) {
  size_t n = 0;
  for (const TraceEvent& e : events)
    n += (e.kind == TraceEvent::Kind::Call || e.kind == TraceEvent::Kind::Enter) && same(e.name, name);
  return n;
}

double trace_last_value(const std::vector<TraceEvent>& events, const char* name, double fallback) {
  for (size_t i = events.size(); i-- > 0;)
    if (events[i].kind == TraceEvent::Kind::Value && same(events[i].name, name)) return events[i].value;
  return fallback;
}

std::string trace_first_nonfinite(const std::vector<TraceEvent>& events) {
  // the open scopes (their names and, per level, the names seen so far among siblings)
  std::vector<const char*> open;
  std::vector<std::vector<const char*>> seen(1);
  const auto path = [&] {
    std::string out;
    for (size_t level = 0; level < open.size(); ++level) {
      // this scope's index among its same-named siblings so far: [k] when it is not the first
      const std::vector<const char*>& sib = seen[level];
      size_t k = 0;
      for (size_t j = 0; j + 1 < sib.size(); ++j) k += same(sib[j], open[level]);
      if (!out.empty()) out += " > ";
      out += open[level];
      if (k > 0) out += "[" + std::to_string(k) + "]";
    }
    return out;
  };
  std::string last_left;  // the path of the scope that returned last
  for (const TraceEvent& e : events) {
    if (e.kind == TraceEvent::Kind::Enter) {
      seen.back().push_back(e.name);
      open.push_back(e.name);
      seen.emplace_back();
      if (e.value > 0) return last_left.empty() ? "the input of " + path() : last_left;
    } else if (e.kind == TraceEvent::Kind::Leave && !open.empty()) {
      last_left = path();
      open.pop_back();
      seen.pop_back();
    } else if (e.kind == TraceEvent::Kind::Output && e.value > 0 && !open.empty()) {
      return path();
    }
  }
  return "";
}

}  // namespace ts
