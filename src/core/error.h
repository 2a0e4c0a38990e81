/*
** error.h — the thread-local error slot. The C core never longjmps: a failing
** function stores a message here and returns NULL or a negative code; only
** src/vm turns the message into a Lua error.
*/
#ifndef LT_ERROR_H
#define LT_ERROR_H

#include <stdarg.h>

/* Store a formatted message; always returns -1 so `return lt_error(...)` reads well. */
int lt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int lt_verror(const char *fmt, va_list ap);
/* Same, but returns NULL for functions that return pointers. */
void *lt_error_null(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

const char *lt_error_message(void);   /* borrowed; valid until the next lt_error on this thread */
void lt_error_clear(void);

/* Set by a SIGINT handler; long kernels poll it between chunks and fail with "interrupted". */
extern volatile int lt_interrupt_flag;
int lt_check_interrupt(void);          /* -1 with "interrupted" set when the flag was raised */

#endif
