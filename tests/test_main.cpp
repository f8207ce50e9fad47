// test_main.cpp: Catch2's runner, after the one set-up every program of the course does
// first: OpenBLAS on the widest kernel the CPU runs (exact/matmul.hpp).
#define CATCH_CONFIG_RUNNER
#include "catch_compat.hpp"

#include "exact/matmul.hpp"
#include "fast/blas_core.hpp"

int main(int argc, char** argv) {
  ts::use_widest_blas_core();
  return Catch::Session().run(argc, argv);
}
