/* lprint.c — binding file (filled in by its owner) */
#include "lutorch_vm.h"
void lt_vm_open_print(lua_State *L) { (void)L; }
