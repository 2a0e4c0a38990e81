/*
** lclock.c — a monotonic wall clock for the Lua side of the benchmarks. Lua's os.clock is
** process CPU time (it adds up every pool thread) and os.time counts seconds; neither times
** a parallel kernel. Built by bench/run.sh into $BUILD/bench/lclock.so.
**   local clock = require "lclock"; local t0 = clock.now(); ...; clock.now() - t0  -- seconds
*/
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

static int l_now(lua_State *L) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  lua_pushnumber(L, (lua_Number)t.tv_sec + 1e-9 * (lua_Number)t.tv_nsec);
  return 1;
}

/* VmRSS / VmHWM of this process in KiB, from /proc/self/status */
static int l_rss(lua_State *L) {
  FILE *f = fopen("/proc/self/status", "r");
  long rss = -1, hwm = -1;
  char line[256];
  if (f) {
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "VmRSS:", 6) == 0) sscanf(line + 6, "%ld", &rss);
      else if (strncmp(line, "VmHWM:", 6) == 0) sscanf(line + 6, "%ld", &hwm);
    }
    fclose(f);
  }
  lua_pushinteger(L, rss);
  lua_pushinteger(L, hwm);
  return 2;
}

int luaopen_lclock(lua_State *L) {
  static const luaL_Reg fns[] = {{"now", l_now}, {"rss", l_rss}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
