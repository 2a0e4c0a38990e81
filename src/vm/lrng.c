/* lrng.c — binding file (filled in by its owner) */
#include "lutorch_vm.h"
void lt_vm_open_rng(lua_State *L) { (void)L; }
