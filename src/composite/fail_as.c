/*
** fail_as.c — lt_composite_fail_as (composite.h): an inner op's error, named after the
** composite that called it, so the message names the function the user called.
*/
#include <stdio.h>
#include <string.h>
#include "composite/composite.h"
#include "core/error.h"

void *lt_composite_fail_as(const char *op) {
  const char *m = lt_error_message();
  size_t n = strlen(op);
  if (!(strncmp(m, op, n) == 0 && m[n] == ':')) {
    char buf[768];
    snprintf(buf, sizeof buf, "%s", m);
    lt_error("%s: %s", op, buf);
  }
  return NULL;
}
