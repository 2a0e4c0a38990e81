/*
** ltensor.h — tensors as Lua values: the userdata, its metatable, and the
** helpers every binding uses to take tensors from and give them to Lua.
*/
#ifndef LT_LTENSOR_H
#define LT_LTENSOR_H

#include <lua.h>
#include <lauxlib.h>
#include "core/tensor.h"

#define LT_TENSOR_MAGIC 0x4c54454eu   /* "LTEN" */

typedef struct lt_ud {
  uint32_t magic;
  lt_tensor *t;          /* NULL once freed by __close or :free() */
} lt_ud;

/* push t as a new Lua value; takes ownership of the reference. t NULL: raise the error slot. */
void lt_vm_push_tensor(lua_State *L, lt_tensor *t);
/* the tensor at idx (borrowed), or NULL when the value is not a live tensor */
lt_tensor *lt_vm_totensor(lua_State *L, int idx);
/* the userdata at idx if it is a tensor value (live or freed), else NULL */
lt_ud *lt_vm_toud(lua_State *L, int idx);
/* like totensor, but raise "op: argument 'name' must be a tensor" */
lt_tensor *lt_vm_checktensor(lua_State *L, int idx, const char *op, const char *name);
/* raise the error slot's message, prefixed with "op: " unless it already names op */
int lt_vm_raise(lua_State *L, const char *op);

/* the tensor metatable's method table is at this registry key */
void lt_vm_open_tensor(lua_State *L);     /* builds the metatable; leaves nothing on the stack */
/* add C functions as tensor methods */
void lt_vm_add_methods(lua_State *L, const luaL_Reg *fns);

/* tell the collector about storage bytes (called after tensors are made) */
void lt_vm_gc_account(lua_State *L);

/* dtype / device values (torch.float32, torch.device("cpu")) */
void lt_vm_push_dtype(lua_State *L, lt_dtype dt);
int lt_vm_todtype(lua_State *L, int idx);       /* -1 if idx is not a dtype value or name */
void lt_vm_push_device(lua_State *L, lt_device d);
int lt_vm_todevice(lua_State *L, int idx, lt_device *out);   /* 0 or -1 */
/* 0 when d's backend is loaded (lutorch_cuda.so is loaded here the first
** time) and has the device; else -1 with the error slot saying so in a user's
** words ("no CUDA device is present: libcuda.so.1 not found (no NVIDIA
** driver)", or that the index does not exist) */
int lt_vm_device_usable(lt_device d);

/* Backend modules loaded on first use (lbackend_load.c): lutorch_cuda.so for
** LT_DEV_CUDA, looked for once per process. lt_vm_backend_load: 0 when the
** type's backend is registered (now or before), -1 when not. The reason when
** not (a static sentence: "libcuda.so.1 not found (no NVIDIA driver)"), NULL
** when it is; a symbol of the loaded module, NULL when none. */
int lt_vm_backend_load(int device_type);
const char *lt_vm_backend_unavailable(int device_type);
void *lt_vm_backend_symbol(int device_type, const char *name);

int lt_vm_l_device(lua_State *L);               /* torch.device(s) */
/* torch.cuda's generator functions (lrng.c): manual_seed, seed, get_rng_state, ... */
extern const luaL_Reg lt_vm_cuda_rng_functions[];
void lt_vm_push_methods(lua_State *L);         /* the tensor method table */
void lt_vm_push_tensor_mt(lua_State *L);       /* the tensor metatable */

/* hooks filled by other binding files */
extern int (*lt_vm_index_hook)(lua_State *L);      /* x[k] for non-string k */
extern int (*lt_vm_newindex_hook)(lua_State *L);   /* x[k] = v for non-string k */
extern int (*lt_vm_tostring_hook)(lua_State *L);   /* tostring(x) */

#endif
