/*
** elementwise.c — elementwise ops written with other ops: the method form of
** where (x:where(cond, y)).
*/
#include "lt_ops.h"

lt_tensor *lt_where_m_impl(lt_tensor *self, lt_tensor *condition, lt_tensor *other) {
  return lt_where(condition, self, other);
}
