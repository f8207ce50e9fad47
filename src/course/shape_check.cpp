#include "course/shape_check.hpp"

#include <fmt/format.h>

#include "base/errors.hpp"
#include "course/i18n.hpp"
#include "exact/print.hpp"

namespace ts {

void require_shape(const Tensor& t, const Shape& want, const std::string& name, const std::string& role,
                   const std::string& site) {
  if (shape_of(t) == want) return;
  throw CheckFailure(trf("{name} has the shape {got}, not {want}: {role} (look at {site})", fmt::arg("name", name),
                         fmt::arg("got", size_str(shape_of(t))), fmt::arg("want", size_str(want)),
                         fmt::arg("role", role), fmt::arg("site", site)));
}

}  // namespace ts
