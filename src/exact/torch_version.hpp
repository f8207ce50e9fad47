// torch_version.hpp: which PyTorch's CPU arithmetic the exact path reproduces.
//
// PyTorch changed some CPU kernels between 1.13 and 2.x (src/exact/exact_kernels_torch2.cpp
// lists which and why), so "byte-identical to the PyTorch twin" depends on the PyTorch the
// twin runs. The build reproduces one of them, chosen at configure time:
//   cmake -S . -B build                  the installed one (/usr/bin/python3 -c 'import torch'),
//                                        1.13 when none is installed
//   cmake -S . -B build -DTS_TORCH=2.6   PyTorch 2.6 (Debian 13's python3-torch)
//   cmake -S . -B build -DTS_TORCH=1.13  PyTorch 1.13 (Debian 12's python3-torch)
//   TS_TORCH=2.6 ./build/ch05_ffn        the environment overrides the build's choice
//                                        (1.13 or 2.6; any other value: exit 2)
// Every chapter's header names it, and tests/twin_compare.py stops with one line when the
// twins' PyTorch is another one.
#pragma once

namespace ts {

enum class TorchVersion { V1_13, V2_6 };

// The version this run reproduces: $TS_TORCH if set, else TS_TORCH at configure time; a
// test may set another with set_torch_version().
TorchVersion torch_version();
void set_torch_version(TorchVersion v);

// "1.13" or "2.6", as TS_TORCH spells it.
const char* torch_version_name(TorchVersion v);
inline const char* torch_version_name() { return torch_version_name(torch_version()); }

}  // namespace ts
