/*
** kernel.h — `lutorch --kernel -f CONNECTION_FILE`: a Jupyter kernel (the
** messaging protocol 5.3 over ZeroMQ) running cells in one Lua state with the
** REPL's meanings (src/repl/repl.c).
**   kernel.c        the connection, the sockets, the loop, sending, the heartbeat,
**                   --install-kernel
**   kernel_shell.c  the requests: execute, complete, inspect, is_complete, info...
**   kernel_io.c     stdout/stderr as stream messages, display_data, input_request
**   jmsg.c          the wire format and its signatures (no ZeroMQ, no Lua)
*/
#ifndef LT_KERNEL_H
#define LT_KERNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <jansson.h>
#include <lua.h>
#include "jmsg.h"

typedef struct lt_kernel {
  void *ctx;
  void *shell, *control, *stdin_sock, *iopub, *hb;
  lt_jkey key;
  char session[37];
  lua_State *L;
  int log_fd;                   /* the kernel's own messages: the original stderr */
  pthread_mutex_t iopub_lock;   /* iopub is written by the main and the stream thread; */
  json_t *parent;               /* the header of the request being handled (NULL: none),
                                ** swapped under iopub_lock */
  lt_jframe *ids;               /* its routing identities (copies), for input_request */
  size_t nids;
  bool allow_stdin;             /* the execute_request being run allows input_request */
  int execution_count;
  bool quit;                    /* a shutdown_request was answered */
} lt_kernel;

/* ---- kernel.c ---- */
/* Runs the kernel until a shutdown_request; the program's exit status. */
int lt_kernel_main(lua_State *L, const char *connection_file);
/* --install-kernel: writes the kernelspec (kernel.json) for exe; 0 when done. */
int lt_kernel_install(const char *exe, bool user, const char *prefix);
/* Sends a message with the given content (stolen) on sock to ids, as a reply
** to the current request (k->parent); iopub's topic is the msg_type. */
int lt_kernel_send(lt_kernel *k, void *sock, const lt_jframe *ids, size_t nids, const char *msg_type, json_t *content);
/* a line on the kernel's log (the original stderr) */
void lt_kernel_log(lt_kernel *k, const char *fmt, ...);
/* Receives one message from sock (waiting up to timeout_ms; -1: for ever) into
** *m, its frames' copies into *frames; 1 when one came, 0 on time out or a
** rejected message (logged), -1 on an error (errno: EINTR after a signal). */
int lt_kernel_recv(lt_kernel *k, void *sock, int timeout_ms, lt_jmsg *m, lt_jframe **frames, size_t *nframes);
void lt_kernel_free_frames(lt_jframe *frames, size_t n);

/* ---- kernel_shell.c ---- */
/* Answers one request from a shell or control socket. */
void lt_kernel_handle(lt_kernel *k, void *sock, lt_jmsg *m, const lt_jframe *frames);

/* ---- kernel_io.c ---- */
/* stdout and stderr become pipes read by a thread that sends stream messages */
int lt_kernel_io_start(lt_kernel *k);
void lt_kernel_io_stop(lt_kernel *k);
/* Waits until everything written to stdout/stderr so far has been sent. */
void lt_kernel_io_sync(lt_kernel *k);
/* The MIME bundle (a table: MIME type -> string or table) at idx as the JSON
** of a data field: binary types in base64; NULL with a message in err when it
** is not a bundle. */
json_t *lt_kernel_bundle(lua_State *L, int idx, char *err, size_t errlen);
/* torch._repl.kernel_install's table: display (the display hook) and input (io.read) */
void lt_kernel_io_push_api(lt_kernel *k, lua_State *L);

#endif
