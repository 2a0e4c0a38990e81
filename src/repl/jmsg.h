/*
** jmsg.h — the Jupyter messaging protocol's wire format (version 5.3): a
** message is a list of frames
**     ident... "<IDS|MSG>" signature header parent_header metadata content buffer...
** where the signature is the HMAC-SHA256, in lowercase hex, of the next four
** frames under the connection file's key. Nothing here touches ZeroMQ or Lua:
** the parser takes frames as bytes, so a fuzzer can call it directly.
*/
#ifndef LT_JMSG_H
#define LT_JMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define LT_JMSG_DELIM "<IDS|MSG>"
#define LT_JMSG_PROTOCOL "5.3"

typedef struct lt_jframe { const void *data; size_t len; } lt_jframe;

/* the signing key; len 0: messages are neither signed nor checked (the
** protocol's meaning of an empty key) */
typedef struct lt_jkey { unsigned char *bytes; size_t len; } lt_jkey;

typedef struct lt_jmsg {
  size_t nids;        /* frames[0 .. nids) are the routing identities */
  size_t buffers;     /* the index of the first binary buffer (== n when none) */
  json_t *header, *parent, *metadata, *content;   /* owned; objects */
  const char *msg_type;                           /* header's, borrowed from it */
} lt_jmsg;

enum {
  LT_JMSG_OK = 0,
  LT_JMSG_NO_DELIM,     /* no "<IDS|MSG>" frame */
  LT_JMSG_SHORT,        /* fewer than five frames after it */
  LT_JMSG_UNSIGNED,     /* a key is set and the signature is empty */
  LT_JMSG_BAD_SIG,      /* the signature does not match */
  LT_JMSG_BAD_JSON,     /* a part is not a JSON object */
  LT_JMSG_NO_TYPE       /* the header has no msg_type string */
};

/* Parses frames[0 .. n) into *out (whose JSON parts the caller frees with
** lt_jmsg_free) and checks its signature against key. Returns LT_JMSG_OK or an
** error code, with *out left empty. */
int lt_jmsg_parse(const lt_jkey *key, const lt_jframe *frames, size_t n, lt_jmsg *out);
void lt_jmsg_free(lt_jmsg *m);
const char *lt_jmsg_strerror(int code);

/* The signature of the four parts (header, parent, metadata, content) as 64
** lowercase hex digits and a NUL; the empty string when the key is empty. */
void lt_jmsg_sign(const lt_jkey *key, const lt_jframe parts[4], char hex[65]);

/* A new header: a random msg_id, the session, the time now, msg_type, 5.3. */
json_t *lt_jmsg_header(const char *session, const char *msg_type);
/* A random UUID (version 4) as 36 characters and a NUL. */
void lt_jmsg_uuid(char out[37]);

/* The longest prefix of s[0 .. n) that does not end inside a UTF-8 sequence
** (a stream chunk keeps the rest for the next read). */
size_t lt_jmsg_utf8_whole(const char *s, size_t n);
/* s[0 .. n) as a JSON string, invalid UTF-8 bytes (and NULs) replaced by U+FFFD. */
json_t *lt_jmsg_string(const char *s, size_t n);
/* bytes as base64 (the notebook's form for binary MIME data); NULL when out of memory */
json_t *lt_jmsg_base64(const void *data, size_t n);

#endif
