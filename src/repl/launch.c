/*
** launch.c — `lutorch --nproc N train.lua`: a local convenience over mpirun.
**
** mpirun stays the launcher (it is what runs across hosts, and what
** torch.distributed's MPI backend rendezvouses through); this only spells its
** flags for the common local case: root in containers needs
** --allow-run-as-root, and more ranks than cores needs --oversubscribe (which
** also makes idle ranks yield instead of spinning).
*/
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "launch.h"

static int usable_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? (int)c : 1;
}

char **lt_launch_argv(int nproc, int argc, char **argv, int script_index, char *err, int errlen) {
  if (nproc < 1) { snprintf(err, (size_t)errlen, "--nproc needs a positive number of processes"); return NULL; }
  if (script_index <= 0 || script_index >= argc) {
    snprintf(err, (size_t)errlen, "--nproc needs a script to run (lutorch --nproc N script.lua [args])");
    return NULL;
  }
  static char exe[4096], np[16];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) { snprintf(exe, sizeof exe, "%s", argv[0]); n = (ssize_t)strlen(exe); }
  exe[n] = 0;
  snprintf(np, sizeof np, "%d", nproc);
  char **out = calloc((size_t)argc + 12, sizeof(char *));
  if (!out) { snprintf(err, (size_t)errlen, "out of memory"); return NULL; }
  int k = 0;
  const char *mpirun = getenv("LUTORCH_MPIRUN");
  out[k++] = (char *)(mpirun && *mpirun ? mpirun : "mpirun");
  if (geteuid() == 0) out[k++] = "--allow-run-as-root";
  if (nproc > usable_cores()) out[k++] = "--oversubscribe";
  out[k++] = "-np";
  out[k++] = np;
  out[k++] = exe;
  /* the program's own options stay (except --nproc N), then the script and its arguments */
  for (int i = 1; i < argc; i++) {
    if (i < script_index && strcmp(argv[i], "--nproc") == 0) { i++; continue; }
    if (i < script_index && strncmp(argv[i], "--nproc=", 8) == 0) continue;
    out[k++] = argv[i];
  }
  out[k] = NULL;
  return out;
}

int lt_launch_nproc(int nproc, int argc, char **argv, int script_index) {
  char err[256];
  char **av = lt_launch_argv(nproc, argc, argv, script_index, err, sizeof err);
  if (!av) { fprintf(stderr, "lutorch: %s\n", err); return -1; }
  fflush(stdout);
  execvp(av[0], av);
  fprintf(stderr, "lutorch: --nproc: cannot run %s: %s%s\n", av[0], strerror(errno),
          errno == ENOENT ? " (install OpenMPI: Debian's openmpi-bin, or set LUTORCH_MPIRUN)" : "");
  free(av);
  return -1;
}
