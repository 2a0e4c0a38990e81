/*
** error.c — thread-local error message storage.
*/
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include "core/error.h"

static _Thread_local char error_buf[1024];
volatile int lt_interrupt_flag = 0;

int lt_verror(const char *fmt, va_list ap) {
  /* through a copy: callers prefix the pending message, lt_error("%s: %s", op,
  ** lt_error_message()), and vsnprintf must not read the buffer it writes */
  char msg[sizeof error_buf];
  vsnprintf(msg, sizeof msg, fmt, ap);
  memcpy(error_buf, msg, sizeof msg);
  return -1;
}

int lt_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lt_verror(fmt, ap);
  va_end(ap);
  return -1;
}

void *lt_error_null(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lt_verror(fmt, ap);
  va_end(ap);
  return NULL;
}

const char *lt_error_message(void) {
  return error_buf[0] ? error_buf : "unknown error";
}

void lt_error_clear(void) { error_buf[0] = 0; }

int lt_check_interrupt(void) {
  if (lt_interrupt_flag) {
    lt_interrupt_flag = 0;
    return lt_error("interrupted");
  }
  return 0;
}
