/*
** test_jmsg.c — the Jupyter wire format (src/repl/jmsg.c) without a socket:
** HMAC-SHA256 against RFC 4231's test vectors, a signed message parsed back,
** every rejection (no delimiter, too short, unsigned, wrong signature, a bad
** part, no msg_type), frames with a zero byte and stray bytes, the UTF-8
** repairs of stream text and base64.
*/
#include <string.h>
#include <stdlib.h>
#include "ctest.h"
#include "repl/jmsg.h"

static lt_jkey key_of(const char *s) {
  lt_jkey k = { (unsigned char *)s, strlen(s) };
  return k;
}

static lt_jframe fr(const char *s) {
  lt_jframe f = { s, strlen(s) };
  return f;
}

TEST(hmac_rfc4231) {
  /* RFC 4231 test case 2: key "Jefe"; the data split over the four parts */
  lt_jkey k = key_of("Jefe");
  lt_jframe parts[4] = { fr("what do ya"), fr(" want "), fr("for "), fr("nothing?") };
  char hex[65];
  lt_jmsg_sign(&k, parts, hex);
  CHECK(strcmp(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843") == 0);
  /* test case 1: 20 bytes of 0x0b, "Hi There" */
  char key1[21];
  memset(key1, 0x0b, 20);
  key1[20] = 0;
  k = key_of(key1);
  lt_jframe p1[4] = { fr("Hi "), fr("There"), fr(""), fr("") };
  lt_jmsg_sign(&k, p1, hex);
  CHECK(strcmp(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7") == 0);
  /* an empty key: no signature */
  lt_jkey none = { NULL, 0 };
  lt_jmsg_sign(&none, p1, hex);
  CHECK(hex[0] == 0);
}

/* a signed message: ident, delimiter, signature, four parts, a buffer */
static size_t build(const lt_jkey *k, const char *header, lt_jframe out[8], char sig[65]) {
  out[0] = fr("client-identity");
  out[1] = fr(LT_JMSG_DELIM);
  out[3] = fr(header);
  out[4] = fr("{}");
  out[5] = fr("{}");
  out[6] = fr("{\"code\":\"1 + 1\"}");
  lt_jmsg_sign(k, &out[3], sig);
  out[2] = fr(sig);
  out[7] = fr("raw buffer");
  return 8;
}

TEST(parse_signed) {
  lt_jkey k = key_of("a-secret-key");
  lt_jframe f[8];
  char sig[65];
  size_t n = build(&k, "{\"msg_id\":\"1\",\"msg_type\":\"execute_request\"}", f, sig);
  lt_jmsg m;
  CHECK_EQ_INT(lt_jmsg_parse(&k, f, n, &m), LT_JMSG_OK);
  CHECK_EQ_INT(m.nids, 1);
  CHECK_EQ_INT(m.buffers, 7);
  CHECK(m.msg_type && strcmp(m.msg_type, "execute_request") == 0);
  CHECK(strcmp(json_string_value(json_object_get(m.content, "code")), "1 + 1") == 0);
  lt_jmsg_free(&m);
  CHECK(m.header == NULL && m.content == NULL);
}

TEST(parse_rejects) {
  lt_jkey k = key_of("a-secret-key");
  lt_jframe f[8];
  char sig[65];
  lt_jmsg m;
  size_t n = build(&k, "{\"msg_type\":\"kernel_info_request\"}", f, sig);
  /* a signature under another key */
  lt_jkey other = key_of("another-key");
  CHECK_EQ_INT(lt_jmsg_parse(&other, f, n, &m), LT_JMSG_BAD_SIG);
  CHECK(m.header == NULL);
  /* a changed part */
  f[6] = fr("{\"code\":\"os.exit()\"}");
  CHECK_EQ_INT(lt_jmsg_parse(&k, f, n, &m), LT_JMSG_BAD_SIG);
  f[6] = fr("{\"code\":\"1 + 1\"}");
  /* unsigned, a short signature, upper-case hex */
  f[2] = fr("");
  CHECK_EQ_INT(lt_jmsg_parse(&k, f, n, &m), LT_JMSG_UNSIGNED);
  f[2] = fr("5bdc");
  CHECK_EQ_INT(lt_jmsg_parse(&k, f, n, &m), LT_JMSG_BAD_SIG);
  char upper[65];
  for (int i = 0; i < 65; i++) upper[i] = (char)(sig[i] >= 'a' && sig[i] <= 'f' ? sig[i] - 32 : sig[i]);
  f[2] = fr(upper);
  CHECK_EQ_INT(lt_jmsg_parse(&k, f, n, &m), LT_JMSG_BAD_SIG);
  f[2] = fr(sig);
  CHECK_EQ_INT(lt_jmsg_parse(&k, f, n, &m), LT_JMSG_OK);
  lt_jmsg_free(&m);
  /* no delimiter; too few frames after it */
  CHECK_EQ_INT(lt_jmsg_parse(&k, f + 2, n - 2, &m), LT_JMSG_NO_DELIM);
  CHECK_EQ_INT(lt_jmsg_parse(&k, f, 5, &m), LT_JMSG_SHORT);
  CHECK_EQ_INT(lt_jmsg_parse(&k, f, 0, &m), LT_JMSG_NO_DELIM);
  /* properly signed but not JSON objects, or no msg_type */
  lt_jkey none = { NULL, 0 };
  const char *bad[] = { "[1, 2]", "{\"a\":", "", "\"text\"", "{\"a\":1,\"a\":2}" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    build(&none, bad[i], f, sig);
    CHECK_EQ_INT(lt_jmsg_parse(&none, f, n, &m), LT_JMSG_BAD_JSON);
  }
  build(&none, "{\"msg_type\":3}", f, sig);
  CHECK_EQ_INT(lt_jmsg_parse(&none, f, n, &m), LT_JMSG_NO_TYPE);
  /* a zero byte inside a part: not valid JSON text */
  static const char zero[] = "{\"msg_type\":\"x\"}\0junk";
  build(&none, "{}", f, sig);
  f[3].data = zero;
  f[3].len = sizeof zero - 1;
  CHECK_EQ_INT(lt_jmsg_parse(&none, f, n, &m), LT_JMSG_BAD_JSON);
  for (int c = LT_JMSG_OK; c <= LT_JMSG_NO_TYPE; c++) CHECK(strlen(lt_jmsg_strerror(c)) > 0);
}

TEST(headers) {
  char a[37], b[37];
  lt_jmsg_uuid(a);
  lt_jmsg_uuid(b);
  CHECK_EQ_INT(strlen(a), 36);
  CHECK(strcmp(a, b) != 0);
  CHECK(a[14] == '4' && a[8] == '-' && a[23] == '-');
  json_t *h = lt_jmsg_header("sess", "status");
  CHECK(strcmp(json_string_value(json_object_get(h, "msg_type")), "status") == 0);
  CHECK(strcmp(json_string_value(json_object_get(h, "version")), "5.3") == 0);
  const char *date = json_string_value(json_object_get(h, "date"));
  CHECK(date && strlen(date) == 27 && date[10] == 'T' && date[26] == 'Z');
  json_decref(h);
}

TEST(utf8) {
  /* "é" is C3 A9, "€" E2 82 AC: a cut sequence waits for the next read */
  CHECK_EQ_INT(lt_jmsg_utf8_whole("ab\xc3", 3), 2);
  CHECK_EQ_INT(lt_jmsg_utf8_whole("ab\xc3\xa9", 4), 4);
  CHECK_EQ_INT(lt_jmsg_utf8_whole("a\xe2\x82", 3), 1);
  CHECK_EQ_INT(lt_jmsg_utf8_whole("a\xe2\x82\xac", 4), 4);
  CHECK_EQ_INT(lt_jmsg_utf8_whole("a\xff", 2), 2);   /* invalid, not cut: kept for repair */
  CHECK_EQ_INT(lt_jmsg_utf8_whole("", 0), 0);
  json_t *s = lt_jmsg_string("caf\xc3\xa9 \xff\xc0\xaf!", 10);
  CHECK(s && strcmp(json_string_value(s), "caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!") == 0);
  json_decref(s);
  s = lt_jmsg_string("\xed\xa0\x80", 3);   /* a UTF-16 surrogate: not UTF-8 */
  CHECK(s && strcmp(json_string_value(s), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd") == 0);
  json_decref(s);
  s = lt_jmsg_string("plain", 5);
  CHECK(s && strcmp(json_string_value(s), "plain") == 0);
  json_decref(s);
}

TEST(base64) {
  json_t *b = lt_jmsg_base64("\x89PNG\r\n", 6);
  CHECK(b && strcmp(json_string_value(b), "iVBORw0K") == 0);
  json_decref(b);
  b = lt_jmsg_base64("ab", 2);
  CHECK(b && strcmp(json_string_value(b), "YWI=") == 0);
  json_decref(b);
  b = lt_jmsg_base64("", 0);
  CHECK(b && strcmp(json_string_value(b), "") == 0);
  json_decref(b);
}

int main(void) {
  RUN(hmac_rfc4231);
  RUN(parse_signed);
  RUN(parse_rejects);
  RUN(headers);
  RUN(utf8);
  RUN(base64);
  return ctest_summary();
}
