# aarch64-linux-gnu.cmake: cross-compile for arm64 (Linux) on a Debian x86-64 host
# (scripts/arm64.sh). The compilers come from crossbuild-essential-arm64, the libraries that
# hold code (OpenBLAS, SLEEF, fmt) from Debian's arm64 multiarch packages
# (/usr/lib/aarch64-linux-gnu), the header-only ones (xtensor, xtl, xsimd, Catch2, CLI11,
# nlohmann-json) from the host's packages: their headers are the same on every architecture.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# test executables run under qemu-user (ctest, try_run); the arm64 loader and libraries are
# the multiarch ones in /lib/aarch64-linux-gnu and /usr/lib/aarch64-linux-gnu
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# programs (msgfmt, python) are the host's
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
