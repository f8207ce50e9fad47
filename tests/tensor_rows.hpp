// tensor_rows.hpp: a 2-D tensor written out row by row in a test, as the articles write their
// small examples: matrix({{0, 1}, {2, 3}}).
#pragma once

#include <vector>

#include "exact/tensor.hpp"

namespace ts_test {

inline ts::Tensor matrix(const std::vector<std::vector<float>>& rows) {
  ts::Tensor m = ts::Tensor::from_shape({rows.size(), rows[0].size()});
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < rows[i].size(); ++j) m(i, j) = rows[i][j];
  return m;
}

}  // namespace ts_test
