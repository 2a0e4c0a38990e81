/*
** init.c — the library's start: registers the built-in backends (the CPU, the meta device). It is the
** one place that names them; a loadable backend (lutorch_cuda.so) registers
** itself when loaded, through the same lt_backend_register.
*/
#include <pthread.h>
#include "dispatch/dispatch.h"
#include "cpu/cpu.h"
#include "metadev/metadev.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_builtin(void) {
  lt_cpu_init();
  lt_metadev_init();
}

void lt_init(void) {
  pthread_once(&once, init_builtin);
}
