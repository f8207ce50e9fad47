// errors.hpp: UsageError and IoError, the two kinds of failure a chapter reports to the
// learner (introduced in ch01), now live in base/errors.hpp beside train's FileError, so every
// layer reads them from one home; this header keeps the chapters' include.
#pragma once

#include "base/errors.hpp"
