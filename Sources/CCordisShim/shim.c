#include "CCordisShim.h"
int ccordis_shim_version(void) { return 1; }
