// openblas.hpp: the OpenBLAS symbols the course calls, declared once (introduced in ch02:
// exact/matmul.cpp multiplies through sgemm_; fast/blas_core.cpp picks OpenBLAS's kernel).
#pragma once

// OpenBLAS's Fortran entry point: the very symbol torch's cpublas::gemm calls.
// C (m,n) = alpha op(A) op(B) + beta C, column-major, op = transa / transb ('N' or 'T').
extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                       const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                       const float* beta, float* c, const int* ldc);

// OpenBLAS's own controls. Weak: with another BLAS behind libblas they are null, and the
// course simply runs that BLAS as it is (test the pointer before calling).
extern "C" {
char* openblas_get_corename(void) __attribute__((weak));
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
// unload and reload the kernel table: OpenBLAS re-reads OPENBLAS_CORETYPE (blas_core.cpp)
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}
