// openblas.cpp: what the course asks OpenBLAS at run time (declared in matmul.hpp): which core
// its sgemm runs and how many threads it uses; through the weak symbols of openblas.hpp, so a BLAS
// that is not OpenBLAS answers "" and 0.
#include "exact/matmul.hpp"
#include "exact/openblas.hpp"

#include <string>

namespace ts {

std::string blas_core() { return openblas_get_corename ? std::string(openblas_get_corename()) : std::string(); }

void set_blas_threads(int n) {
  if (openblas_set_num_threads && n > 0) openblas_set_num_threads(n);
}
int blas_threads() { return openblas_get_num_threads ? openblas_get_num_threads() : 0; }

}  // namespace ts
