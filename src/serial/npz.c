/*
** npz.c — .npz archives through libzip; each member goes through npy.c.
*/
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include "serial/npz.h"
#include "serial/npy.h"

/* deflate never expands more than 1032:1; anything claiming more is a bomb */
#define DEFLATE_MAX_RATIO 1032u

void lt_npz_free(int n, char **names, lt_tensor **ts) {
  for (int i = 0; i < n; i++) {
    if (names) free(names[i]);
    if (ts) lt_tensor_release(ts[i]);
  }
  free(names);
  free(ts);
}

static int zip_fail(const char *path, int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  int r = lt_error("'%s' is not a readable .npz (zip) archive: %s", path, zip_error_strerror(&e));
  zip_error_fini(&e);
  return r;
}

/* read exactly n bytes of an open member */
static int member_read(zip_file_t *zf, void *dst, uint64_t n, const char *what) {
  uint64_t got = 0;
  while (got < n) {
    zip_int64_t r = zip_fread(zf, (char *)dst + got, n - got);
    if (r < 0) return lt_error("%s is corrupt: %s", what, zip_file_strerror(zf));
    if (r == 0) return lt_error("%s is truncated (%llu of %llu bytes)", what, (unsigned long long)got, (unsigned long long)n);
    got += (uint64_t)r;
  }
  return 0;
}

static lt_tensor *read_member(zip_t *za, zip_uint64_t idx, const zip_stat_t *st, const char *what) {
  if ((st->valid & (ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE)) != (ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE))
    return (lt_tensor *)lt_error_null("%s has no recorded size", what);
  uint64_t bound;
  if (lt_io_mul_ok(st->comp_size, DEFLATE_MAX_RATIO, &bound) < 0 || lt_io_add_ok(bound, 4096, &bound) < 0) bound = UINT64_MAX;
  if (st->size > bound)
    return (lt_tensor *)lt_error_null("%s claims %llu bytes from %llu compressed bytes, more than deflate can produce", what,
                                      (unsigned long long)st->size, (unsigned long long)st->comp_size);
  zip_file_t *zf = zip_fopen_index(za, idx, 0);
  if (!zf) return (lt_tensor *)lt_error_null("%s cannot be opened: %s", what, zip_strerror(za));
  lt_tensor *raw = NULL, *r = NULL;
  unsigned char pre[LT_NPY_PREAMBLE_MAX];
  char *hdr = NULL;
  size_t pl, hl;
  size_t take = st->size < LT_NPY_PREAMBLE_MIN ? (size_t)st->size : LT_NPY_PREAMBLE_MIN;
  if (member_read(zf, pre, take, what) < 0) goto done;
  if (take < LT_NPY_PREAMBLE_MIN) {
    if (take < 6 || memcmp(pre, "\x93NUMPY", 6) != 0) lt_error("%s is not a .npy file (bad magic)", what);
    else lt_error("%s is truncated (the preamble needs 10 bytes, %zu left)", what, take);
    goto done;
  }
  if (pre[6] >= 2 && pre[6] <= 3 && memcmp(pre, "\x93NUMPY", 6) == 0) {
    if (st->size < LT_NPY_PREAMBLE_MAX) { lt_error("%s is truncated (the preamble needs 12 bytes)", what); goto done; }
    if (member_read(zf, pre + LT_NPY_PREAMBLE_MIN, 2, what) < 0) goto done;
    take = LT_NPY_PREAMBLE_MAX;
  }
  if (lt_npy_preamble(pre, take, &pl, &hl, what) < 0) goto done;
  if (hl > st->size - pl) {
    lt_error("%s is truncated (the header needs %zu bytes, %llu left)", what, hl, (unsigned long long)(st->size - pl));
    goto done;
  }
  if (!(hdr = (char *)malloc(hl))) { lt_error("out of memory reading %s", what); goto done; }
  lt_npy_info info;
  if (member_read(zf, hdr, hl, what) < 0 || lt_npy_parse_header(hdr, hl, &info, what) < 0) goto done;
  uint64_t left = st->size - pl - hl;
  if (info.data_bytes > left) {
    lt_error("%s is truncated (the data needs %llu bytes, %llu left)", what, (unsigned long long)info.data_bytes,
             (unsigned long long)left);
    goto done;
  }
  if (!(raw = lt_npy_new_raw(&info))) goto done;
  if (member_read(zf, lt_tensor_data(raw), info.data_bytes, what) < 0) goto done;
  r = lt_npy_finish(raw, &info, what);
  raw = NULL;
done:
  free(hdr);
  lt_tensor_release(raw);
  zip_fclose(zf);
  return r;
}

int lt_npz_load(const char *path, int *n_out, char ***names_out, lt_tensor ***ts_out) {
  int err = 0;
  *n_out = 0; *names_out = NULL; *ts_out = NULL;
  /* libzip's own open error for a missing file reads oddly; say it plainly */
  if (access(path, R_OK) != 0) return lt_error("cannot open '%s': %s", path, strerror(errno));
  zip_t *za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (!za) return zip_fail(path, err);
  zip_int64_t ne = zip_get_num_entries(za, 0);
  char **names = (char **)calloc(ne > 0 ? (size_t)ne : 1, sizeof(char *));
  lt_tensor **ts = (lt_tensor **)calloc(ne > 0 ? (size_t)ne : 1, sizeof(lt_tensor *));
  int n = 0, rc = 0;
  if (!names || !ts) { rc = lt_error("out of memory reading '%s'", path); goto done; }
  for (zip_int64_t i = 0; i < ne; i++) {
    zip_stat_t st;
    if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) < 0 || !(st.valid & ZIP_STAT_NAME)) {
      rc = lt_error("'%s' has an unreadable member %lld: %s", path, (long long)i, zip_strerror(za));
      goto done;
    }
    size_t len = strlen(st.name);
    if (len < 4 || strcmp(st.name + len - 4, ".npy") != 0) continue;
    char what[768];
    snprintf(what, sizeof what, "'%s' member '%s'", path, st.name);
    for (int k = 0; k < n; k++)
      if (strlen(names[k]) == len - 4 && memcmp(names[k], st.name, len - 4) == 0) {
        rc = lt_error("'%s' has two members named '%s'", path, st.name);
        goto done;
      }
    if (!(names[n] = strndup(st.name, len - 4))) { rc = lt_error("out of memory reading '%s'", path); goto done; }
    if (!(ts[n] = read_member(za, (zip_uint64_t)i, &st, what))) { free(names[n]); rc = -1; goto done; }
    n++;
  }
done:
  zip_discard(za);
  if (rc < 0) { lt_npz_free(n, names, ts); return -1; }
  *n_out = n; *names_out = names; *ts_out = ts;
  return 0;
}

static void fsync_path(const char *p, int flags) {
  int fd = open(p, flags | O_CLOEXEC);
  if (fd >= 0) { fsync(fd); close(fd); }
}

int lt_npz_save(const char *path, int n, const char *const *names, lt_tensor *const *ts, bool compressed) {
  static unsigned counter;
  size_t pl = strlen(path) + 64;
  char *tmp = (char *)malloc(pl);
  lt_tensor **held = (lt_tensor **)calloc(n ? (size_t)n : 1, sizeof(lt_tensor *));
  char *hdrs = (char *)malloc((n ? (size_t)n : 1) * (LT_NPY_HEADER_CAP + 128));
  zip_t *za = NULL;
  int rc = -1, err = 0;
  if (!tmp || !held || !hdrs) { lt_error("out of memory writing '%s'", path); goto done; }
  snprintf(tmp, pl, "%s.tmp.%ld.%u.npz", path, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
  za = zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!za) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    lt_error("cannot create '%s': %s", path, zip_error_strerror(&e));
    zip_error_fini(&e);
    goto done;
  }
  for (int i = 0; i < n; i++) {
    char what[512];
    snprintf(what, sizeof what, "tensor '%s'", names[i]);
    char *hdr = hdrs + (size_t)i * (LT_NPY_HEADER_CAP + 128);
    size_t hl;
    if (!(held[i] = lt_npy_prepare(ts[i], hdr, &hl, what))) goto fail;
    zip_buffer_fragment_t frag[2] = {{(zip_uint8_t *)hdr, hl},
                                     {(zip_uint8_t *)lt_tensor_data(held[i]), lt_npy_data_bytes(held[i])}};
    zip_source_t *src = zip_source_buffer_fragment(za, frag, frag[1].length ? 2 : 1, 0);
    if (!src) { lt_error("cannot add '%s' to '%s': %s", names[i], path, zip_strerror(za)); goto fail; }
    size_t nl = strlen(names[i]);
    char *member = (char *)malloc(nl + 5);
    if (!member) { zip_source_free(src); lt_error("out of memory writing '%s'", path); goto fail; }
    memcpy(member, names[i], nl);
    memcpy(member + nl, ".npy", 5);
    zip_int64_t idx = zip_file_add(za, member, src, ZIP_FL_ENC_UTF_8);
    free(member);
    if (idx < 0) {
      zip_source_free(src);
      lt_error("cannot add '%s' to '%s': %s", names[i], path, zip_strerror(za));
      goto fail;
    }
    if (zip_set_file_compression(za, (zip_uint64_t)idx, compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) < 0) {
      lt_error("cannot set compression in '%s': %s", path, zip_strerror(za));
      goto fail;
    }
  }
  if (zip_close(za) < 0) {
    lt_error("writing '%s' failed: %s", path, zip_strerror(za));
    goto fail;
  }
  za = NULL;
  if (n == 0) {
    /* libzip writes nothing for an empty archive: numpy's is the 22-byte end record */
    static const unsigned char eocd[22] = {'P', 'K', 5, 6};
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(eocd, 1, sizeof eocd, f) != sizeof eocd) { if (f) fclose(f); lt_error("cannot write '%s'", path); goto fail; }
    if (fclose(f) != 0) { lt_error("cannot write '%s'", path); goto fail; }
  }
  /* libzip renamed its own temporary over tmp; make tmp durable, then swap it in */
  fsync_path(tmp, O_RDONLY);
  if (rename(tmp, path) < 0) { lt_error("cannot rename over '%s': %s", path, strerror(errno)); goto fail; }
  {
    char *d = strdup(path);
    if (d) { fsync_path(dirname(d), O_RDONLY | O_DIRECTORY); free(d); }
  }
  rc = 0;
  goto done;
fail:
  if (za) { zip_discard(za); za = NULL; }
  unlink(tmp);
done:
  if (held) for (int i = 0; i < n; i++) lt_tensor_release(held[i]);
  free(held);
  free(hdrs);
  free(tmp);
  return rc;
}
