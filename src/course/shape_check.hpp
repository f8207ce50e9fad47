// shape_check.hpp: a chapter's guard before it reads a tensor by index (introduced in ch02):
// when an edit makes a function return another shape, the chapter stops with one NOT OK naming
// that function, instead of an index past the end or an internal error further down.
#pragma once

#include <string>

#include "exact/tensor.hpp"

namespace ts {

// Throws CheckFailure "{name} has the shape {got}, not {want}: {role} (look at {site})" when
// t's shape is not `want`; `role` says what the tensor holds, `site` the code that made it
// (Chapter::ran). Returns nothing: past this line the chapter may index t as `want`.
void require_shape(const Tensor& t, const Shape& want, const std::string& name, const std::string& role,
                   const std::string& site);

}  // namespace ts
