// course/loop_trace.cpp: the training loop as it ran (see loop_trace.hpp).
#include "course/loop_trace.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "base/errors.hpp"
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

namespace {
// one parameter tensor's gradient: its state_dict name and values, wherever they are stored (a
// checkpoint key holding several module parameters: one span each)
struct GradView {
  const std::string* name;
  std::vector<std::pair<const float*, size_t>> spans;
};
std::vector<GradView> keyed_views(const NamedTensors& grads, const std::vector<train::CheckpointKey>& keys) {
  std::vector<GradView> views;
  for (const train::CheckpointKey& k : keys) {
    GradView v{&k.key, {}};
    for (size_t i : k.params) v.spans.emplace_back(grads.at(i).second->data(), grads.at(i).second->size());
    views.push_back(std::move(v));
  }
  return views;
}

void check_views_finite(double loss, const std::vector<GradView>& grads, int64_t step, const std::string& forward,
                        const std::string& backward) {
  if (!std::isfinite(loss)) {
    // step 1 ran the initial weights: no update, so no learning rate, could have made it
    if (step == 1)
      throw CheckFailure(trf("the loss is {loss} at step 1, from the initial weights before any update: the forward "
                             "computed it, not the learning rate (look at {where})",
                             fmt::arg("loss", loss), fmt::arg("where", forward)));
    // every earlier step's gradients were finite (checked below): the updates moved the weights too far
    throw UsageError(trf("the loss became {loss} at step {s}: lower --lr", fmt::arg("loss", loss), fmt::arg("s", step)));
  }
  size_t bad = 0, tensors = 0, total = 0;
  std::string first;
  for (const GradView& p : grads) {
    size_t here = 0;
    for (const auto& [data, n] : p.spans) {
      for (size_t i = 0; i < n; ++i) here += !std::isfinite(data[i]);
      total += n;
    }
    if (here && first.empty()) first = *p.name;
    bad += here, tensors += here != 0;
  }
  if (bad)
    throw CheckFailure(trf("at step {s} the loss was finite ({loss:.4g}) but the backward left {bad} of the {n} "
                           "gradients NaN or inf, in {k} of the {K} parameter tensors (the first: {first}); the "
                           "learning rate has not touched them yet (look at {where})",
                           fmt::arg("s", step), fmt::arg("loss", loss), fmt::arg("bad", bad),
                           fmt::arg("n", total), fmt::arg("k", tensors), fmt::arg("K", grads.size()),
                           fmt::arg("first", first), fmt::arg("where", backward)));
}

}  // namespace

void check_step_finite(double loss, const std::vector<float>& grads, const std::vector<train::ParamSpec>& specs,
                       int64_t step, const std::string& forward, const std::string& backward) {
  std::vector<GradView> views;
  for (const train::ParamSpec& p : specs)
    views.push_back({&p.name, {{grads.data() + std::min(p.offset, grads.size()),
                                p.offset >= grads.size() ? 0 : std::min(p.numel, grads.size() - p.offset)}}});
  check_views_finite(loss, views, step, forward, backward);
}

void check_step_finite(double loss, const NamedTensors& grads, const std::vector<train::CheckpointKey>& keys,
                       int64_t step, const std::string& forward, const std::string& backward) {
  check_views_finite(loss, keyed_views(grads, keys), step, forward, backward);
}

std::vector<std::string> zero_gradient_tensors(const std::vector<float>& grads, const std::vector<train::ParamSpec>& specs) {
  std::vector<std::string> names;
  for (const train::ParamSpec& p : specs)
    if (p.offset + p.numel <= grads.size() &&
        std::all_of(grads.begin() + std::ptrdiff_t(p.offset), grads.begin() + std::ptrdiff_t(p.offset + p.numel),
                    [](float g) { return g == 0.0f; }))
      names.push_back(p.name);
  return names;
}

std::vector<std::string> zero_gradient_tensors(const NamedTensors& grads, const std::vector<train::CheckpointKey>& keys) {
  std::vector<std::string> names;
  for (const GradView& v : keyed_views(grads, keys))
    if (std::all_of(v.spans.begin(), v.spans.end(), [](const std::pair<const float*, size_t>& s) {
          return std::all_of(s.first, s.first + s.second, [](float g) { return g == 0.0f; });
        }))
      names.push_back(*v.name);
  return names;
}

// "a, b, c, d and 3 more"
static std::string some_names(const std::vector<std::string>& names) {
  const size_t shown = std::min<size_t>(names.size(), 4);
  std::string list = fmt::format("{}", fmt::join(names.begin(), names.begin() + std::ptrdiff_t(shown), ", "));
  if (names.size() > shown) list += trf(" and {n} more", fmt::arg("n", names.size() - shown));
  return list;
}

void show_unread(Chapter& ch, const std::vector<std::string>& names, size_t all, const std::string& where,
                 int64_t step) {
  if (names.empty()) return;
  ch.say("  " + ch.verdict(false, trf("after step {step}'s backward, {k} of the {K} parameter tensors have a gradient of "
                                      "exactly 0 ({list}), and no logit depends on them: moving every value of each "
                                      "leaves every logit where it was, so no backward can reach them. Either no "
                                      "module reads them or what reads them never reaches the logits: the storage "
                                      "the forward reads is chosen at {where}",
                                      fmt::arg("k", names.size()), fmt::arg("K", all),
                                      fmt::arg("list", some_names(names)), fmt::arg("where", where),
                                      fmt::arg("step", step))));
}

void TrainedNumbers::add(const std::vector<int64_t>& batch_numbers) {
  seen_.insert(batch_numbers.begin(), batch_numbers.end());
  ++batches_;
}

void show_train_eval_overlap(Chapter& ch, const TrainedNumbers& trained, const std::vector<int64_t>& evaluated,
                             const std::string& where) {
  if (trained.batches() == 0) return;  // nothing trained here (a loaded checkpoint, no steps)
  std::vector<int64_t> both;  // evaluated numbers that a training batch held
  for (int64_t n : evaluated)
    if (trained.has(n)) both.push_back(n);
  if (both.empty())
    ch.say("  " + ch.verdict(true, trf("the {b} training batches held {d} distinct numbers and none of the {h} "
                                       "held-out ones evaluated after training (measured over every batch)",
                                       fmt::arg("b", trained.batches()), fmt::arg("d", trained.distinct()),
                                       fmt::arg("h", evaluated.size()))));
  else
    ch.say("  " + ch.verdict(false, trf("{k} of the {h} held-out numbers evaluated after training were in training "
                                        "batches (the first: {n}): the held-out score counts numbers the model "
                                        "trained on, not unseen ones (look at {where})",
                                        fmt::arg("k", both.size()), fmt::arg("h", evaluated.size()),
                                        fmt::arg("n", both[0]), fmt::arg("where", where))));
}

void show_dropout_zeroed(Chapter& ch, const std::vector<std::string>& zero,
                         const std::vector<std::string>& zero_without_dropout, size_t all, int64_t step) {
  std::vector<std::string> reached;  // zero in step 1, nonzero without dropout
  for (const std::string& name : zero)
    if (std::find(zero_without_dropout.begin(), zero_without_dropout.end(), name) == zero_without_dropout.end())
      reached.push_back(name);
  if (reached.empty()) return;
  ch.say(trf("  after step {step}'s backward, {k} of the {K} parameter tensors had a gradient of exactly 0 ({list}): "
             "train-mode dropout zeroed every path from them to the loss in that batch. The same batch without "
             "dropout gives each of them a gradient (measured), so the backward does reach them",
             fmt::arg("k", reached.size()), fmt::arg("K", all), fmt::arg("list", some_names(reached)),
             fmt::arg("step", step)));
}

void show_unreached(Chapter& ch, const std::vector<std::string>& names, size_t all, const std::string& backward,
                    int64_t step) {
  if (names.empty()) return;
  const std::string list = some_names(names);
  ch.say("  " + ch.verdict(false, trf("after step {step}'s backward, {k} of the {K} parameter tensors have a gradient of "
                                      "exactly 0 ({list}): the backward never reached them, so Adam cannot move them "
                                      "(look at {where})",
                                      fmt::arg("k", names.size()), fmt::arg("K", all), fmt::arg("list", list),
                                      fmt::arg("where", backward), fmt::arg("step", step))));
}

}  // namespace ts
