/*
** test_alloc_fail.c — allocation-failure injection, as Lua's ltests.c and
** SQLite do it: every allocation from the Nth on fails, for N = 1, 2, ... up
** to what the operation allocates, over the operations of
** tests/c/alloc_fail_cases.lua (op calls, backward, save, load, a DataLoader
** batch). At each N the operation must either succeed (what failed was
** optional: a cache, Lua's emergency collection) or raise a Lua error about
** memory; the state must stay usable (the same operation succeeds once
** allocation works again); and nothing may leak (make asan builds this test
** with LeakSanitizer, which checks at exit, after lua_close).
**
** What fails: the Lua state's allocator (lua_newstate with this file's
** lua_Alloc) and every malloc, calloc, realloc, aligned_alloc,
** posix_memalign, strdup, strndup and mmap that lutorch's own code makes:
** the program links liblutorch.a with the linker's --wrap for each of them
** (Makefile, "alloc-fail"), so the library needs no hook and costs nothing
** in other builds. Libraries lutorch links as shared objects (OpenBLAS,
** jansson, libzip, zlib) allocate normally.
**
** LT_ALLOC_FAIL_MAX (default 300) bounds the points swept per operation: one
** that allocates more is swept with a stride, every point near the start.
** LT_ALLOC_FAIL_ONLY=NAME sweeps one case; LT_ALLOC_FAIL_LEAKS=1 (sanitized
** builds) checks for leaks after every point and names the N.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

#include "ctest.h"

int lutorch_openlibs(lua_State *L);
const char *lutorch_last_error(void);

/* ---- the failing allocations ---- */

static atomic_long n_allocs;          /* allocations counted since armed */
static atomic_long fail_from = -1;    /* -1: nothing fails; else the allocation count that starts failing */
static atomic_int armed;

static int should_fail(void) {
  if (!atomic_load_explicit(&armed, memory_order_relaxed)) return 0;
  long n = atomic_fetch_add(&n_allocs, 1) + 1;
  long f = atomic_load(&fail_from);
  return f >= 0 && n >= f;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

void *__wrap_malloc(size_t n) { if (should_fail()) { errno = ENOMEM; return NULL; } return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { if (should_fail()) { errno = ENOMEM; return NULL; } return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) {
  if (n > 0 && should_fail()) { errno = ENOMEM; return NULL; }
  return __real_realloc(p, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n) {
  if (should_fail()) { errno = ENOMEM; return NULL; }
  return __real_aligned_alloc(a, n);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n) {
  if (should_fail()) return ENOMEM;
  return __real_posix_memalign(p, a, n);
}
char *__wrap_strdup(const char *s) { if (should_fail()) { errno = ENOMEM; return NULL; } return __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) {
  if (should_fail()) { errno = ENOMEM; return NULL; }
  return __real_strndup(s, n);
}
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (should_fail()) { errno = ENOMEM; return MAP_FAILED; }
  return __real_mmap(addr, len, prot, flags, fd, off);
}

/* Lua's: a growing block may fail, a shrinking one may not (the manual's rule) */
static void *l_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) { free(ptr); return NULL; }
  if ((ptr == NULL || nsize > osize) && should_fail()) return NULL;
  return __real_realloc(ptr, nsize);
}

static void arm(long from) { atomic_store(&n_allocs, 0); atomic_store(&fail_from, from); atomic_store(&armed, 1); }
static long disarm(void) { atomic_store(&armed, 0); atomic_store(&fail_from, -1); return atomic_load(&n_allocs); }

/* LT_ALLOC_FAIL_LEAKS=1 under LeakSanitizer: a leak check after every point,
** so a leak is reported with the operation and the N that made it */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LSAN 1
#endif
#endif
#if !defined(HAVE_LSAN) && defined(__SANITIZE_ADDRESS__)
#define HAVE_LSAN 1
#endif
#ifdef HAVE_LSAN
int __lsan_do_recoverable_leak_check(void);
#endif
static int leak_each;

static void check_leaks(const char *name, long n) {
#ifdef HAVE_LSAN
  if (leak_each && __lsan_do_recoverable_leak_check()) {
    ctest_fail(__FILE__, __LINE__);
    fprintf(stderr, "%s: a leak after allocation %ld failed (report above; leaks are not checked again)\n", name, n);
    leak_each = 0;   /* LeakSanitizer would report the same leak at every later point */
  }
#else
  (void)name; (void)n;
#endif
}

/* ---- the sweep ---- */

static int traceback(lua_State *L) {
  const char *m = lua_tostring(L, 1);
  luaL_traceback(L, L, m ? m : "(error object is not a string)", 1);
  return 1;
}

/* run(ctx) in protected mode; 0 or the Lua status, the message left on the stack */
static int run_case(lua_State *L, int run_ref, int ctx_ref) {
  lua_pushcfunction(L, traceback);
  lua_rawgeti(L, LUA_REGISTRYINDEX, run_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ctx_ref);
  int rc = lua_pcall(L, 1, 0, -3);
  lua_remove(L, rc == LUA_OK ? -1 : -2);
  return rc;
}

static int about_memory(const char *m) {
  return m && (strstr(m, "memory") || strstr(m, "Cannot allocate"));
}

static void sweep(lua_State *L, const char *name, int run_ref, int ctx_ref, long max_points) {
  ctest_current = name;
  /* twice unarmed: first-use work (caches, lazy tables) is not the operation's */
  for (int k = 0; k < 2; k++) {
    int rc = run_case(L, run_ref, ctx_ref);
    CHECK(rc == LUA_OK);
    if (rc != LUA_OK) { fprintf(stderr, "  %s fails with nothing failing: %s\n", name, lua_tostring(L, -1)); lua_pop(L, 1); return; }
  }
  arm(-1);
  run_case(L, run_ref, ctx_ref);
  long total = disarm();
  long stride = total > max_points ? total / max_points : 1;
  long points = 0, errors = 0, survived = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long n = 1; n <= total + 1; n += (n < 64 ? 1 : stride)) {
    points++;
    arm(n);
    int rc = run_case(L, run_ref, ctx_ref);
    disarm();
    if (rc == LUA_OK) {
      survived++;
    } else {
      errors++;
      const char *m = lua_tostring(L, -1);
      if (!about_memory(m)) {
        ctest_fail(__FILE__, __LINE__);
        fprintf(stderr, "%s: allocation %ld failing raised an error not about memory:\n%s\n", name, n, m ? m : "?");
      } else {
        atomic_fetch_add(&ctest_passed, 1);
      }
      lua_pop(L, 1);
    }
    /* the state is still usable: the same operation, nothing failing */
    lua_gc(L, LUA_GCCOLLECT, 0);
    rc = run_case(L, run_ref, ctx_ref);
    if (rc != LUA_OK) {
      ctest_fail(__FILE__, __LINE__);
      fprintf(stderr, "%s: after allocation %ld failed, the operation fails with nothing failing:\n%s\n",
              name, n, lua_tostring(L, -1));
      lua_pop(L, 1);
      return;
    }
    atomic_fetch_add(&ctest_passed, 1);
    check_leaks(name, n);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%-12s %6ld allocations, %4ld points swept: %4ld errors about memory, %4ld succeeded anyway (%.1fs)\n",
         name, total, points, errors, survived, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  fflush(stdout);
}

int main(void) {
  lua_State *L = lua_newstate(l_alloc, NULL);
  if (!L) { fprintf(stderr, "no Lua state\n"); return 1; }
  luaL_openlibs(L);
  luaL_dostring(L, "package.path = 'lib/?.lua;lib/?/init.lua;' .. package.path");
  if (lutorch_openlibs(L) < 0) { fprintf(stderr, "lutorch_openlibs: %s\n", lutorch_last_error()); return 1; }
  /* one thread: the allocations of a run are the same each time */
  luaL_dostring(L, "torch.set_num_threads(1)");
  char dir[] = "/tmp/lt-alloc-fail-XXXXXX";
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
  setenv("LT_ALLOC_FAIL_DIR", dir, 1);
  const char *mx = getenv("LT_ALLOC_FAIL_MAX");
  long max_points = mx && atol(mx) > 0 ? atol(mx) : 300;
  const char *only = getenv("LT_ALLOC_FAIL_ONLY");
  leak_each = getenv("LT_ALLOC_FAIL_LEAKS") != NULL;

  if (luaL_dofile(L, "tests/c/alloc_fail_cases.lua") != LUA_OK) {
    fprintf(stderr, "alloc_fail_cases.lua: %s\n", lua_tostring(L, -1));
    return 1;
  }
  int cases = lua_gettop(L);
  lua_Integer ncases = luaL_len(L, cases);
  for (lua_Integer i = 1; i <= ncases; i++) {
    lua_geti(L, cases, i);
    lua_geti(L, -1, 1);
    const char *name = lua_tostring(L, -1);
    char nm[64];
    snprintf(nm, sizeof nm, "%s", name ? name : "?");
    lua_pop(L, 1);
    if (only && strcmp(only, nm) != 0) { lua_pop(L, 1); continue; }
    lua_geti(L, -1, 2);
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
      ctest_current = nm;
      ctest_fail(__FILE__, __LINE__);
      fprintf(stderr, "setup: %s\n", lua_tostring(L, -1));
      lua_pop(L, 2);
      continue;
    }
    int ctx_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_geti(L, -1, 3);
    int run_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    sweep(L, nm, run_ref, ctx_ref, max_points);
    luaL_unref(L, LUA_REGISTRYINDEX, ctx_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, run_ref);
    lua_gc(L, LUA_GCCOLLECT, 0);
  }
  lua_close(L);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return ctest_summary();
}
