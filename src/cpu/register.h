/*
** register.h — puts the CPU backend's kernels into the dispatcher.
** Until lt_init() does it, whatever starts the library calls this first: the
** torch module's luaopen, the embedding API, the C tests.
*/
#ifndef LT_CPU_REGISTER_H
#define LT_CPU_REGISTER_H

/* lt_cpu_kernel_table at LT_KEY_CPU; the first call does it, later calls (from any
** thread) return once it is done */
void lt_cpu_register_kernels(void);

#endif
