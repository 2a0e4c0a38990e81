/*
** jmsg.c — the Jupyter wire format: parsing and checking a message's frames,
** signing the parts of one going out, headers, and the UTF-8 and base64
** conversions a message's JSON needs.
**
** The HMAC-SHA256 comes from OpenSSL's libcrypto (Apache-2.0; Debian's
** libssl-dev): a reviewed implementation, and CRYPTO_memcmp compares
** signatures in constant time, so a wrong signature's timing says nothing
** about the right one.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include "jmsg.h"


/* ---- signing -------------------------------------------------------------- */

void lt_jmsg_sign(const lt_jkey *key, const lt_jframe parts[4], char hex[65]) {
  hex[0] = 0;
  if (key->len == 0) return;
  static EVP_MAC *hmac;   /* fetched once: the lookup is the slow part */
  if (!hmac && !(hmac = EVP_MAC_fetch(NULL, "HMAC", NULL))) return;
  EVP_MAC_CTX *h = EVP_MAC_CTX_new(hmac);
  if (!h) return;
  OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0), OSSL_PARAM_construct_end() };
  unsigned char mac[EVP_MAX_MD_SIZE];
  size_t maclen = 0;
  int ok = EVP_MAC_init(h, key->bytes, key->len, params);
  for (int i = 0; i < 4 && ok; i++) ok = EVP_MAC_update(h, parts[i].data, parts[i].len);
  if (ok && EVP_MAC_final(h, mac, &maclen, sizeof mac) == 1 && maclen == 32) {
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < 32; i++) {
      hex[2 * i] = digits[mac[i] >> 4];
      hex[2 * i + 1] = digits[mac[i] & 15];
    }
    hex[64] = 0;
  }
  EVP_MAC_CTX_free(h);
}


/* ---- parsing -------------------------------------------------------------- */

const char *lt_jmsg_strerror(int code) {
  switch (code) {
  case LT_JMSG_OK: return "ok";
  case LT_JMSG_NO_DELIM: return "no <IDS|MSG> delimiter";
  case LT_JMSG_SHORT: return "fewer than five frames after the delimiter";
  case LT_JMSG_UNSIGNED: return "unsigned message (the connection has a key)";
  case LT_JMSG_BAD_SIG: return "wrong signature";
  case LT_JMSG_BAD_JSON: return "a part is not a JSON object";
  case LT_JMSG_NO_TYPE: return "the header has no msg_type";
  }
  return "unknown error";
}

void lt_jmsg_free(lt_jmsg *m) {
  json_decref(m->header);
  json_decref(m->parent);
  json_decref(m->metadata);
  json_decref(m->content);
  memset(m, 0, sizeof *m);
}

static json_t *parse_object(const lt_jframe *f) {
  json_error_t err;
  json_t *j = json_loadb(f->data, f->len, JSON_REJECT_DUPLICATES, &err);
  if (j && !json_is_object(j)) { json_decref(j); j = NULL; }
  return j;
}

int lt_jmsg_parse(const lt_jkey *key, const lt_jframe *frames, size_t n, lt_jmsg *out) {
  static const size_t dlen = sizeof LT_JMSG_DELIM - 1;
  memset(out, 0, sizeof *out);
  size_t d = 0;
  while (d < n && !(frames[d].len == dlen && memcmp(frames[d].data, LT_JMSG_DELIM, dlen) == 0)) d++;
  if (d == n) return LT_JMSG_NO_DELIM;
  if (n - d < 6) return LT_JMSG_SHORT;
  const lt_jframe *sig = &frames[d + 1], *parts = &frames[d + 2];
  if (key->len > 0) {
    if (sig->len == 0) return LT_JMSG_UNSIGNED;
    char want[65];
    lt_jmsg_sign(key, parts, want);
    if (sig->len != 64 || want[0] == 0 || CRYPTO_memcmp(sig->data, want, 64) != 0) return LT_JMSG_BAD_SIG;
  }
  out->header = parse_object(&parts[0]);
  out->parent = parse_object(&parts[1]);
  out->metadata = parse_object(&parts[2]);
  out->content = parse_object(&parts[3]);
  if (!out->header || !out->parent || !out->metadata || !out->content) {
    lt_jmsg_free(out);
    return LT_JMSG_BAD_JSON;
  }
  out->msg_type = json_string_value(json_object_get(out->header, "msg_type"));
  if (!out->msg_type) {
    lt_jmsg_free(out);
    return LT_JMSG_NO_TYPE;
  }
  out->nids = d;
  out->buffers = d + 6;
  return LT_JMSG_OK;
}


/* ---- headers -------------------------------------------------------------- */

void lt_jmsg_uuid(char out[37]) {
  unsigned char b[16];
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t r = getrandom(b + got, sizeof b - got, 0);
    if (r <= 0) {   /* no entropy source: the time and a counter still make ids distinct */
      static unsigned counter;
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      unsigned long long v = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 30) ^ ++counter;
      for (size_t i = got; i < sizeof b; i++) { b[i] = (unsigned char)v; v = v * 6364136223846793005ULL + 1442695040888963407ULL; }
      break;
    }
    got += (size_t)r;
  }
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);   /* version 4 */
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);   /* the RFC 4122 variant */
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

json_t *lt_jmsg_header(const char *session, const char *msg_type) {
  char id[37], date[40];
  lt_jmsg_uuid(id);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  size_t k = strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(date + k, sizeof date - k, ".%06ldZ", ts.tv_nsec / 1000);
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "msg_id", id, "session", session, "username", "lutorch",
                   "date", date, "msg_type", msg_type, "version", LT_JMSG_PROTOCOL);
}


/* ---- UTF-8 and base64 ----------------------------------------------------- */

/* the length of the valid UTF-8 sequence at s (1 to 4), 0 when invalid, -1
** when valid so far but cut short by the end */
static int utf8_seq(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  int len;
  unsigned min;
  if (c < 0x80) return 1;
  else if (c >= 0xc2 && c < 0xe0) { len = 2; min = 0x80; }
  else if (c >= 0xe0 && c < 0xf0) { len = 3; min = 0x800; }
  else if (c >= 0xf0 && c < 0xf5) { len = 4; min = 0x10000; }
  else return 0;
  unsigned cp = c & (0x3f >> (len - 1));
  for (int i = 1; i < len; i++) {
    if ((size_t)i >= n) return -1;
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) return 0;
  return len;
}

size_t lt_jmsg_utf8_whole(const char *s, size_t n) {
  /* only the last three bytes can start a cut sequence */
  size_t start = n > 3 ? n - 3 : 0;
  for (size_t i = start; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0xc0 && utf8_seq((const unsigned char *)s + i, n - i) < 0) return i;
  }
  return n;
}

json_t *lt_jmsg_string(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t bad = 0;
  for (size_t i = 0; i < n;) {
    int l = utf8_seq(u + i, n - i);
    if (l <= 0) { bad++; i++; } else i += (size_t)l;
  }
  if (bad == 0) return json_stringn(s, n);
  char *buf = malloc(n + 2 * bad);   /* each bad byte becomes three (EF BF BD) */
  if (!buf) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    int l = utf8_seq(u + i, n - i);
    if (l <= 0) { memcpy(buf + o, "\xef\xbf\xbd", 3); o += 3; i++; }
    else { memcpy(buf + o, s + i, (size_t)l); o += (size_t)l; i += (size_t)l; }
  }
  json_t *j = json_stringn(buf, o);
  free(buf);
  return j;
}

json_t *lt_jmsg_base64(const void *data, size_t n) {
  if (n > (size_t)1 << 30) return NULL;   /* EVP_EncodeBlock counts in int */
  size_t cap = 4 * ((n + 2) / 3) + 1;
  unsigned char *buf = malloc(cap);
  if (!buf) return NULL;
  int len = EVP_EncodeBlock(buf, data, (int)n);
  json_t *j = len >= 0 ? json_stringn((const char *)buf, (size_t)len) : NULL;
  free(buf);
  return j;
}
