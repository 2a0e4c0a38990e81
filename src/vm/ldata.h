/*
** ldata.h — the C half of lib/data: torch._data. ldata.c holds processes,
** sockets and the batch wire format; ldata_readers.c the file readers.
*/
#ifndef LT_LDATA_H
#define LT_LDATA_H

#include <lua.h>

/* add the reader functions (read_idx, read_csv, read_npy, write_npy) to the table on top */
void lt_vm_data_readers(lua_State *L);

#endif
