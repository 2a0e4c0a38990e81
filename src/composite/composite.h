/*
** composite.h — what the composite files share: passing an inner op's error on under
** the name of the op the user called.
*/
#ifndef LT_COMPOSITE_H
#define LT_COMPOSITE_H

/* Prefixes the error slot's message with "op: " unless it already starts so; returns
** NULL, for `return r ? r : lt_composite_fail_as(op);`. */
void *lt_composite_fail_as(const char *op);

#endif
