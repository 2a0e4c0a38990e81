/*
** main.c — the `lutorch` program: runs scripts, -e chunks and the REPL
** (src/repl/), with the torch module preloaded as the global `torch`.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "vm/lutorch_vm.h"
#include "vm/lt7.h"
#include "repl/repl.h"
#include "repl/launch.h"
#ifndef LT_NO_KERNEL
#include "repl/kernel.h"
#endif


static const char *progname = "lutorch";

#define docall lt_repl_docall
#define report lt_repl_report

/* where the Lua libraries are: lib/ beside build/ in the source tree, or the
** install's share directory */
static void set_paths(lua_State *L, const char *argv0) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) { strncpy(exe, argv0, sizeof exe - 1); n = (ssize_t)strlen(exe); }
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (slash) *slash = 0; else strcpy(exe, ".");
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/../lib/?.lua;%s/../lib/?/init.lua;%s/../share/lua/5.4/?.lua;%s/../share/lua/5.4/?/init.lua;",
                  exe, exe, exe, exe);
  lua_getfield(L, -2, "path");
  lua_concat(L, 2);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
}

static int dochunk(lua_State *L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l mod or -l g=mod: require mod into the global g (mod by default) */
static int dolibrary(lua_State *L, const char *arg) {
  const char *eq = strchr(arg, '=');
  const char *mod = eq ? eq + 1 : arg;
  lua_getglobal(L, "require");
  lua_pushstring(L, mod);
  int status = docall(L, 1, 1);
  if (status == LUA_OK) {
    if (eq) lua_pushlstring(L, arg, (size_t)(eq - arg));
    else lua_pushstring(L, arg);
    lua_insert(L, -2);
    lua_setglobal(L, lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  return report(L, status);
}

/* LUTORCH_INIT, as lua.c treats LUA_INIT: "@file" runs the file, else the code */
static int doinit(lua_State *L) {
  const char *init = getenv("LUTORCH_INIT");
  if (init == NULL || *init == 0) return LUA_OK;
  if (init[0] == '@') return dochunk(L, luaL_loadfile(L, init + 1));
  return dostring(L, init, "=LUTORCH_INIT");
}

/* torch._repl.baseline(): the globals before any user code, for who() */
static void mark_baseline(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  if (lua_istable(L, -1) && lua_getfield(L, -1, "_repl") == LUA_TTABLE &&
      lua_getfield(L, -1, "baseline") == LUA_TFUNCTION)
    lua_pcall(L, 0, 0, 0);
  lua_settop(L, 0);
}

static void usage(void) {
  fprintf(stderr,
          "usage: %s [options] [script [args]]\n"
          "  -e stat   execute string 'stat'\n"
          "  -l mod    require library 'mod' into global 'mod' (-l g=mod: into 'g')\n"
          "  -i        enter interactive mode after running the script\n"
          "  -q        no banner in interactive mode\n"
          "  -v        show version information\n"
          "  -E        ignore environment variables (LUTORCH_INIT)\n"
          "  -W        turn warnings on\n"
          "  -h        show this help\n"
          "  --nproc N run the script on N ranks through mpirun (torch.distributed)\n"
          "  --torch7  Torch7 mode: Torch7's meanings of the names they share (x:add(y) in place, ...)\n"
          "  --kernel -f FILE   run as a Jupyter kernel (FILE: the connection file)\n"
          "  --install-kernel [--user] [--prefix P]   install the Jupyter kernelspec\n"
          "  --        stop handling options\n"
          "  -         run stdin as a script\n"
          "With no script and a terminal, %s starts its REPL: ? there for help; see lutorch(1).\n",
          progname, progname);
}

static void print_version(void) {
  printf("lutorch %s (%s)\n", lutorch_version(), LUA_RELEASE);
  fflush(stdout);
}

static int pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  luaL_openlibs(L);
  set_paths(L, argv[0]);
  /* --torch7 is chosen before the torch module opens: it decides what the
  ** module's names mean (lutorch-torch7(7)) */
  for (int k = 1; k < argc; k++) {
    const char *a = argv[k];
    if (a[0] != '-' || strcmp(a, "-") == 0 || strcmp(a, "--") == 0) break;
    if (strcmp(a, "--torch7") == 0) { lt_vm_set_torch7(L); break; }
    if (strcmp(a, "-e") == 0 || strcmp(a, "-l") == 0 || strcmp(a, "--nproc") == 0) k++;
  }
  luaL_requiref(L, "torch", luaopen_torch, 1);
  lua_pop(L, 1);
  mark_baseline(L);
  /* Most tensors die young: the generational collector frees them in small
  ** batches, so their headers are reused from the allocator's caches instead
  ** of piling up (4x faster per small op than the incremental collector). */
  lua_gc(L, LUA_GCGEN, 0, 0);
  /* first pass: the options that change how the rest runs */
  int interactive = 0, quiet = 0, noenv = 0, script = 0, ran = 0, nproc = 0;
  const char *kernel_file = NULL;
  int i;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || strcmp(a, "-") == 0) { script = i; break; }
    if (strcmp(a, "--") == 0) { if (i + 1 < argc) script = i + 1; break; }
    if (strcmp(a, "-i") == 0) interactive = 1;
    else if (strcmp(a, "-q") == 0) quiet = 1;
    else if (strcmp(a, "-E") == 0) noenv = 1;
    else if (strcmp(a, "-W") == 0) lua_warning(L, "@on", 0);
    else if (strcmp(a, "-v") == 0) { print_version(); ran = 1; }
    else if (strcmp(a, "--torch7") == 0) { /* handled before the module opened */ }
    else if (strcmp(a, "--kernel") == 0) {
      /* --kernel -f FILE (jupyter's form) or --kernel FILE */
      if (i + 1 < argc && strcmp(argv[i + 1], "-f") == 0) i++;
      if (i + 1 >= argc) {
        fprintf(stderr, "%s: --kernel needs the connection file: --kernel -f FILE\n", progname);
        lua_pushboolean(L, 0);
        return 1;
      }
      kernel_file = argv[++i];
    }
    else if (strcmp(a, "--nproc") == 0) {
      if (i + 1 >= argc || (nproc = atoi(argv[i + 1])) < 1) {
        fprintf(stderr, "%s: --nproc needs a number of ranks (at least 1)\n", progname);
        lua_pushboolean(L, 0);
        return 1;
      }
      i++;
    }
    else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { usage(); lua_pushboolean(L, 1); return 1; }
    else if (strcmp(a, "-e") == 0 || strcmp(a, "-l") == 0) {
      if (i + 1 >= argc) { usage(); lua_pushboolean(L, 0); return 1; }
      i++;
    } else {
      fprintf(stderr, "%s: unrecognized option '%s'\n", progname, a);
      usage();
      lua_pushboolean(L, 0);
      return 1;
    }
  }
  if (nproc > 0) {   /* returns only when mpirun could not be started */
    lt_launch_nproc(nproc, argc, argv, script);
    lua_pushboolean(L, 0);
    return 1;
  }
  if (!noenv && doinit(L) != LUA_OK) { lua_pushboolean(L, 0); return 1; }
  if (kernel_file) {
#ifndef LT_NO_KERNEL
    lua_pushboolean(L, lt_kernel_main(L, kernel_file) == EXIT_SUCCESS);
#else
    fprintf(stderr, "%s: this build has no Jupyter kernel (it was built without ZeroMQ: apt-get install libzmq3-dev, rebuild)\n", progname);
    lua_pushboolean(L, 0);
#endif
    return 1;
  }
  /* second pass: -e and -l in order */
  int last = script ? script : argc;
  for (i = 1; i < last; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) break;
    if (strcmp(a, "-e") == 0 || strcmp(a, "-l") == 0) {
      int st = a[1] == 'e' ? dostring(L, argv[i + 1], "=(command line)") : dolibrary(L, argv[i + 1]);
      if (st != LUA_OK) { lua_pushboolean(L, 0); return 1; }
      if (a[1] == 'e') ran = 1;
      i++;
    }
  }
  if (script) {
    /* arg table: script at 0, its arguments from 1, the options before it negative */
    lua_createtable(L, argc - script, script + 1);
    for (int k = 0; k < argc; k++) {
      lua_pushstring(L, argv[k]);
      lua_rawseti(L, -2, k - script);
    }
    lua_setglobal(L, "arg");
    const char *fname = strcmp(argv[script], "-") == 0 ? NULL : argv[script];
    int status = luaL_loadfile(L, fname);
    if (status == LUA_OK) {
      int n = argc - script - 1;
      luaL_checkstack(L, n, "too many arguments to script");
      for (int k = script + 1; k < argc; k++) lua_pushstring(L, argv[k]);
      status = docall(L, n, LUA_MULTRET);
    }
    if (report(L, status) != LUA_OK) { lua_pushboolean(L, 0); return 1; }
    ran = 1;
  }
  if (interactive || (!ran && isatty(0))) lt_repl_run(L, !quiet);
  else if (!ran && dochunk(L, luaL_loadfile(L, NULL)) != LUA_OK) { lua_pushboolean(L, 0); return 1; }
  lua_pushboolean(L, 1);
  return 1;
}

/* --install-kernel [--user] [--prefix P]: needs no Lua state */
static int install_kernel(int argc, char **argv) {
  bool user = false;
  const char *prefix = NULL;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--user") == 0) user = true;
    else if (strcmp(argv[i], "--prefix") == 0 && i + 1 < argc) prefix = argv[++i];
    else {
      fprintf(stderr, "%s --install-kernel: unknown argument '%s' (--user, --prefix P)\n", progname, argv[i]);
      return EXIT_FAILURE;
    }
  }
#ifndef LT_NO_KERNEL
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) { fprintf(stderr, "%s --install-kernel: cannot find the program's path\n", progname); return EXIT_FAILURE; }
  exe[n] = 0;
  return lt_kernel_install(exe, user, prefix) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
#else
  (void)user;
  fprintf(stderr, "%s: this build has no Jupyter kernel (it was built without ZeroMQ)\n", progname);
  return EXIT_FAILURE;
#endif
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--install-kernel") == 0) return install_kernel(argc, argv);
  lua_State *L = luaL_newstate();
  if (!L) { fprintf(stderr, "%s: cannot create state: not enough memory\n", progname); return EXIT_FAILURE; }
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 0);
  int ok = lua_toboolean(L, -1);
  report(L, status);
  lua_close(L);
  return (ok && status == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}
