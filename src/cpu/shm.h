/*
** shm.h — tensors over anonymous shared memory (memfd), for DataLoader workers.
** A worker builds a batch in such a tensor and passes the memfd to the parent
** over a Unix socket; the parent maps the same pages: no copy crosses the
** process boundary. A memfd has no name, so nothing is left in /dev/shm when
** both processes are gone.
*/
#ifndef LT_SHM_H
#define LT_SHM_H

#include "core/tensor.h"

/* a new contiguous tensor whose storage is a fresh memfd mapped MAP_SHARED */
lt_tensor *lt_shm_tensor_new(lt_dtype dt, int ndim, const int64_t *sizes);
/* the memfd behind a storage made here, or -1 for any other storage (borrowed) */
int lt_shm_storage_fd(const lt_storage *s);
/* true for any storage made here, owning its fd or only mapping one */
bool lt_shm_storage_is_shared(const lt_storage *s);
/* a storage over `nbytes` of fd from byte `offset` (a multiple of the page size);
** the storage keeps its own mapping, so the caller may close fd afterwards */
lt_storage *lt_shm_storage_map(int fd, size_t nbytes, int64_t offset);
/* Storages made here are numbered in order of creation (a fork copies the
** counter): serial of s (0 for any other storage), and the next number */
uint64_t lt_shm_storage_serial(const lt_storage *s);
uint64_t lt_shm_next_serial(void);
/* a new anonymous memfd of nbytes (close-on-exec), or -1 with the error slot set */
int lt_shm_create(size_t nbytes);

#endif
