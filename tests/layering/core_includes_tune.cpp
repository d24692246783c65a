// Built only by the test Build.WrongWayIncludeFails, with the core layer's include path: core is
// the lowest layer, so this include of the tuner must not compile (cmake/layers.cmake).
#include "core/validate.h"
#include "tune/tuning_selector.h"
