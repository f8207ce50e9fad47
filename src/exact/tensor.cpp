// tensor.cpp: anchors the core library (the tensor helpers are header-only).
#include "tensor.hpp"
