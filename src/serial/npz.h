/*
** npz.h — NumPy's .npz archives: a zip file of .npy members ("name.npy"),
** stored (np.savez) or deflated (np.savez_compressed). Read and written with
** libzip. No Lua here.
*/
#ifndef LT_SERIAL_NPZ_H
#define LT_SERIAL_NPZ_H

#include <stdbool.h>
#include "core/tensor.h"

/* Every .npy member of the archive, in archive order: names without ".npy"
** (*names[i] and the arrays malloc'd; free with lt_npz_free). Other members
** are skipped. A member whose stated size is more than deflate could produce
** from its compressed bytes is refused before anything is allocated. */
int lt_npz_load(const char *path, int *n, char ***names, lt_tensor ***ts);
void lt_npz_free(int n, char **names, lt_tensor **ts);

/* Write one "name.npy" member per tensor (deflated when compressed). The
** archive is built in a temporary file and renamed over path. */
int lt_npz_save(const char *path, int n, const char *const *names, lt_tensor *const *ts, bool compressed);

#endif
