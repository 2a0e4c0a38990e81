/*
** kernels_register.c — the CPU backend registers its generated kernel table
** (build/gen/kernels_cpu.c) at LT_KEY_CPU, exactly once per process.
*/
#include <pthread.h>
#include "kernels_cpu.h"
#include "cpu/register.h"

static pthread_once_t registered = PTHREAD_ONCE_INIT;

static void register_table(void) {
  /* LT_KEY_CPU is a backend key and the table is not NULL: this cannot fail */
  (void)lt_dispatch_register_backend(LT_KEY_CPU, lt_cpu_kernel_table);
}

void lt_cpu_register_kernels(void) { pthread_once(&registered, register_table); }
