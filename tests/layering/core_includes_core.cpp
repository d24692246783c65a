// Built only by the test Build.RightWayIncludeBuilds, with the core layer's include path: the
// control of Build.WrongWayIncludeFails (the same target set-up compiles an include of its own
// layer, so that test fails for the include alone).
#include "core/validate.h"
