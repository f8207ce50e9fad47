// tensor.cpp: anchors the core library (the tensor helpers are header-only).
#include "exact/tensor.hpp"
