// figure_sink.cpp: see figure_sink.hpp.
#include "base/figure_sink.hpp"

#include <utility>

namespace ts {
namespace {
FigureSink& sink() {
  static FigureSink s;
  return s;
}
}  // namespace

void set_figure_sink(FigureSink s) { sink() = std::move(s); }

void emit_figure(const FigureData& f) {
  if (sink()) sink()(f);
}

}  // namespace ts
