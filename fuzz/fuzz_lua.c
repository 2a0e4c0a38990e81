/*
** fuzz_lua.c — the driver shared by the fuzz targets (fuzz_lua.h): one lutorch
** Lua state for the whole process, each input handed to the target's Lua
** function in protected mode. libFuzzer's entry points, or (LT_FUZZ_REPLAY) a
** main() that replays files and directories of inputs.
*/
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

#include "fuzz_lua.h"

lua_State *lutorch_open(void);
int lutorch_openlibs(lua_State *L);
int lutorch_set_compat(lua_State *L, const char *mode);
const char *lutorch_last_error(void);

static lua_State *L;
static int fn_ref = LUA_NOREF;
static char dir[256];        /* the process's scratch directory */
static char path[320];       /* the input's file, in it */
static unsigned long runs;
static int running;          /* inside a run: an exit from Lua must not close its state */

static void die(const char *what, const char *why) {
  fprintf(stderr, "fuzz %s: %s: %s\n", lt_fuzz_this.name, what, why ? why : "?");
  exit(2);
}

/* remove what a run left in the scratch directory, but for the top-level
** entries named keep-* (what a target sets up once) unless `all` */
static void clean_dir(const char *d, int depth, int all) {
  DIR *dp = opendir(d);
  if (!dp) return;
  struct dirent *e;
  char p[1024];
  while ((e = readdir(dp))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (depth == 0 && !all && !strncmp(e->d_name, "keep-", 5)) continue;
    snprintf(p, sizeof p, "%s/%s", d, e->d_name);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
      if (depth < 4) clean_dir(p, depth + 1, 1);
      rmdir(p);
    } else {
      unlink(p);
    }
  }
  closedir(dp);
}

static void at_exit(void) {
  if (L && !running) { lua_close(L); L = NULL; }
  if (dir[0]) { clean_dir(dir, 0, 1); rmdir(dir); }
}

/* What every target may use: one thread (the machine is shared, and a
** finding replays the same way); fuzz_touch(v), which reads every element of
** every tensor reachable from v, so a tensor that a reader made with a view
** past its storage is found by AddressSanitizer, not returned; and
** fuzz_try(f, ...), pcall that prints the error under LT_FUZZ_VERBOSE and
** ends the process (a finding) on an error raised by Lua itself inside
** lutorch, "attempt to index a nil value" and the like: an input that was not
** checked, where the project's rule is a message naming the function. Set
** LT_FUZZ_LAX to let those pass. */
static const char prelude[] =
  "torch.set_num_threads(1)\n"
  "local verbose = os.getenv('LT_FUZZ_VERBOSE')\n"
  "local lax = os.getenv('LT_FUZZ_LAX')\n"
  "function fuzz_try(f, ...)\n"
  "  local r = table.pack(pcall(f, ...))\n"
  "  if not r[1] and verbose then io.stderr:write('  error: ', tostring(r[2]), '\\n') end\n"
  "  if not r[1] and not lax and type(r[2]) == 'string' and r[2]:find('^[^ ]+%.lua:%d+: attempt to ') then\n"
  "    io.stderr:write('fuzz finding: an error from Lua itself, not a message naming the function: ', r[2], '\\n')\n"
  "    io.stderr:flush()\n"
  "    os.exit(3)\n"
  "  end\n"
  "  return table.unpack(r, 1, r.n)\n"
  "end\n"
  "function fuzz_touch(v, depth, seen)\n"
  "  depth = depth or 0; seen = seen or {}\n"
  "  if depth > 32 then return end\n"
  "  if torch.is_tensor(v) then\n"
  "    if v:numel() <= 1 << 22 then pcall(v.clone, v) end\n"
  "    return\n"
  "  end\n"
  "  if type(v) ~= 'table' or seen[v] then return end\n"
  "  seen[v] = true\n"
  "  for k, x in next, v do fuzz_touch(k, depth + 1, seen); fuzz_touch(x, depth + 1, seen) end\n"
  "end\n";

static void setup(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/lt-fuzz-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", lt_fuzz_this.name);
  if (!mkdtemp(dir)) die("mkdtemp", strerror(errno));
  snprintf(path, sizeof path, "%s/input%s", dir, lt_fuzz_this.suffix ? lt_fuzz_this.suffix : "");
  /* the Lua libraries from the tree: LT_FUZZ_LIB, else ./lib (make runs from the root) */
  const char *lib = getenv("LT_FUZZ_LIB");
  if (!lib || !*lib) lib = "lib";
  L = luaL_newstate();
  if (!L) die("luaL_newstate", "not enough memory");
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/?.lua;%s/?/init.lua", lib, lib);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
  if (lt_fuzz_this.mode && strcmp(lt_fuzz_this.mode, "pytorch") != 0 &&
      lutorch_set_compat(L, lt_fuzz_this.mode) < 0)
    die("lutorch_set_compat", lutorch_last_error());
  if (lutorch_openlibs(L) < 0) die("lutorch_openlibs", lutorch_last_error());
  lua_gc(L, LUA_GCGEN, 0, 0);
  if (luaL_loadbufferx(L, prelude, strlen(prelude), "fuzz_lua prelude", "t") != LUA_OK ||
      lua_pcall(L, 0, 0, 0) != LUA_OK)
    die("the prelude", lua_tostring(L, -1));
  if (luaL_loadbufferx(L, lt_fuzz_this.chunk, strlen(lt_fuzz_this.chunk), lt_fuzz_this.name, "t") != LUA_OK ||
      lua_pcall(L, 0, 1, 0) != LUA_OK)
    die("the target's chunk", lua_tostring(L, -1));
  if (!lua_isfunction(L, -1)) die("the target's chunk", "does not return a function");
  fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  atexit(at_exit);
}

static void write_input(const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) die(path, strerror(errno));
  if (size && fwrite(data, 1, size, f) != size) die(path, "short write");
  if (fclose(f) != 0) die(path, strerror(errno));
}

/* one input: the target's function in protected mode; its error (a string, or
** anything else a target raises on purpose) is the answer to bad bytes */
static void run_one(const uint8_t *data, size_t size) {
  if (lt_fuzz_this.suffix) write_input(data, size);
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, fn_ref);
  lua_pushlstring(L, (const char *)data, size);
  lua_pushstring(L, path);
  lua_pushstring(L, dir);
  running = 1;
  int rc = lua_pcall(L, 3, 0, 0);
  running = 0;
  if (rc != LUA_OK && getenv("LT_FUZZ_VERBOSE"))
    fprintf(stderr, "%s: %s\n", lt_fuzz_this.name, lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object)");
  lua_settop(L, top);
  /* the inputs' tensors die with their run: collect often, so memory stays
  ** flat and a leak (unreachable once collected) shows in LeakSanitizer */
  if (++runs % 8 == 0) lua_gc(L, LUA_GCCOLLECT, 0);
  clean_dir(dir, 0, 0);
}

#ifndef LT_FUZZ_REPLAY

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc; (void)argv;
  setup();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  run_one(data, size);
  return 0;
}

#else

static unsigned long replayed;

static void replay_file(const char *p) {
  FILE *f = fopen(p, "rb");
  if (!f) die(p, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf) die(p, "not enough memory");
  if (getenv("LT_FUZZ_VERBOSE")) fprintf(stderr, "replay %s\n", p);
  run_one(buf, n);
  free(buf);
  replayed++;
}

static void replay(const char *p) {
  struct stat st;
  if (stat(p, &st) != 0) die(p, strerror(errno));
  if (!S_ISDIR(st.st_mode)) { replay_file(p); return; }
  DIR *dp = opendir(p);
  if (!dp) die(p, strerror(errno));
  struct dirent *e;
  char q[1024];
  while ((e = readdir(dp))) {
    if (e->d_name[0] == '.') continue;
    snprintf(q, sizeof q, "%s/%s", p, e->d_name);
    replay(q);
  }
  closedir(dp);
}

/* replay_NAME FILE_OR_DIR...: every input once; a crash ends the program, so
** the last line is printed only when every input came back */
int main(int argc, char **argv) {
  setup();
  for (int i = 1; i < argc; i++) replay(argv[i]);
  printf("%s: %lu inputs replayed\n", lt_fuzz_this.name, replayed);
  return 0;
}

#endif
