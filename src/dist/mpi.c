/*
** mpi.c — the MPI backend: CPU buffers through OpenMPI's own collectives.
**
** Collectives are MPI's blocking ones (the tuned algorithms a plain
** MPI_Allreduce uses), run on the communication thread; MPI is initialised
** with MPI_THREAD_MULTIPLE because point-to-point ops, the watchdog's abort and
** finalisation come from other threads. Communicators return errors instead of
** aborting, so a transport failure becomes a message naming the collective.
**
** float16 and bfloat16 have no MPI type: they travel as 16-bit words and are
** reduced by user-defined ops that compute in float. bool reduces as bytes:
** sum and max are a logical or, product and min a logical and. avg is a sum
** scaled by 1/size afterwards (floating types only).
*/
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dist.h"

static const struct { const char *name; size_t size; } dtypes[LT_DIST_NUM_DTYPES] = {
  {"float64", 8}, {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"int64", 8}, {"int32", 4},
  {"int16", 2}, {"int8", 1}, {"uint8", 1}, {"bool", 1},
};
size_t lt_dist_dtype_size(lt_dist_dtype dt) { return dtypes[dt].size; }
const char *lt_dist_dtype_name(lt_dist_dtype dt) { return dtypes[dt].name; }

static const char *redop_names[] = {"sum", "avg", "max", "min", "product"};
const char *lt_dist_redop_name(lt_dist_redop op) { return redop_names[op]; }
int lt_dist_redop_from_name(const char *s) {
  for (int i = 0; i < 5; i++) if (strcmp(s, redop_names[i]) == 0) return i;
  if (strcmp(s, "prod") == 0) return LT_DIST_PROD;
  return -1;
}

/* ---- 16-bit floats ---- */
static float h2f(uint16_t h) {
  uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
  if (e == 0) {
    if (m == 0) u = s;
    else {                                    /* subnormal: normalise */
      e = 113;
      while (!(m & 0x400)) { m <<= 1; e--; }
      u = s | (e << 23) | ((m & 0x3ff) << 13);
    }
  } else if (e == 31) u = s | 0x7f800000u | (m << 13);
  else u = s | ((e + 112) << 23) | (m << 13);
  union { uint32_t u; float f; } v; v.u = u; return v.f;
}

static uint16_t f2h(float f) {
  union { uint32_t u; float f; } v; v.f = f;
  uint32_t u = v.u, s = (u >> 16) & 0x8000;
  int32_t e = (int32_t)((u >> 23) & 0xff) - 127 + 15;
  uint32_t m = u & 0x7fffff;
  if (((u >> 23) & 0xff) == 0xff) return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
  if (e >= 31) return (uint16_t)(s | 0x7c00);
  if (e <= 0) {
    if (e < -10) return (uint16_t)s;
    m |= 0x800000;
    uint32_t shift = (uint32_t)(14 - e), half = 1u << (shift - 1);
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return (uint16_t)(s | r);
  }
  uint32_t r = ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;   /* may carry into the exponent: right */
  return (uint16_t)(s | r);
}

static float b2f(uint16_t b) { union { uint32_t u; float f; } v; v.u = (uint32_t)b << 16; return v.f; }
static uint16_t f2b(float f) {
  union { uint32_t u; float f; } v; v.f = f;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x40);
  return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}

#define HALF_OP(NAME, TOF, FROMF, EXPR)                                            \
  static void NAME(void *in, void *inout, int *len, MPI_Datatype *dt) {           \
    (void)dt;                                                                      \
    const uint16_t *a = in; uint16_t *b = inout;                                   \
    for (int i = 0; i < *len; i++) { float x = TOF(a[i]), y = TOF(b[i]); b[i] = FROMF(EXPR); } \
  }
HALF_OP(h_sum, h2f, f2h, x + y)
HALF_OP(h_prod, h2f, f2h, x * y)
HALF_OP(h_max, h2f, f2h, (x > y || x != x) ? x : y)
HALF_OP(h_min, h2f, f2h, (x < y || x != x) ? x : y)
HALF_OP(b_sum, b2f, f2b, x + y)
HALF_OP(b_prod, b2f, f2b, x * y)
HALF_OP(b_max, b2f, f2b, (x > y || x != x) ? x : y)
HALF_OP(b_min, b2f, f2b, (x < y || x != x) ? x : y)

static MPI_Op half_ops[2][5];    /* [f16, bf16][redop] */
static bool initialized_here, finalized;

static MPI_Datatype mpi_type(lt_dist_dtype dt) {
  switch (dt) {
  case LT_DIST_F64: return MPI_DOUBLE;
  case LT_DIST_F32: return MPI_FLOAT;
  case LT_DIST_F16: case LT_DIST_BF16: return MPI_UINT16_T;
  case LT_DIST_I64: return MPI_INT64_T;
  case LT_DIST_I32: return MPI_INT32_T;
  case LT_DIST_I16: return MPI_INT16_T;
  case LT_DIST_I8: return MPI_INT8_T;
  case LT_DIST_U8: case LT_DIST_BOOL: return MPI_UINT8_T;
  default: return MPI_DATATYPE_NULL;
  }
}

static MPI_Op mpi_op(lt_dist_redop op, lt_dist_dtype dt) {
  if (dt == LT_DIST_F16 || dt == LT_DIST_BF16)
    return half_ops[dt == LT_DIST_BF16][op == LT_DIST_AVG ? LT_DIST_SUM : op];
  if (dt == LT_DIST_BOOL) return (op == LT_DIST_SUM || op == LT_DIST_MAX) ? MPI_MAX : MPI_MIN;
  switch (op) {
  case LT_DIST_SUM: case LT_DIST_AVG: return MPI_SUM;
  case LT_DIST_MAX: return MPI_MAX;
  case LT_DIST_MIN: return MPI_MIN;
  default: return MPI_PROD;
  }
}

static void scale(lt_dist_buf *b, double s) {
  int64_t n = b->count;
  switch (b->dtype) {
  case LT_DIST_F64: { double *p = b->data; for (int64_t i = 0; i < n; i++) p[i] *= s; break; }
  case LT_DIST_F32: { float *p = b->data, f = (float)s; for (int64_t i = 0; i < n; i++) p[i] *= f; break; }
  case LT_DIST_F16: { uint16_t *p = b->data; for (int64_t i = 0; i < n; i++) p[i] = f2h(h2f(p[i]) * (float)s); break; }
  case LT_DIST_BF16: { uint16_t *p = b->data; for (int64_t i = 0; i < n; i++) p[i] = f2b(b2f(p[i]) * (float)s); break; }
  default: break;
  }
}

static int check(lt_dist_work *w, int rc) {
  if (rc == MPI_SUCCESS) return 0;
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, s, &len);
  snprintf(w->err, sizeof w->err, "MPI error: %s", s);
  return -1;
}

/* MPI counts are int: a bigger buffer goes in pieces (all_reduce, broadcast, reduce) */
#define CHUNK ((int64_t)1 << 30)

static int too_big(lt_dist_work *w, int64_t n) {
  if (n <= INT32_MAX) return 0;
  snprintf(w->err, sizeof w->err, "%lld elements is more than MPI can move in one %s", (long long)n,
           lt_dist_kind_name(w->kind));
  return -1;
}

static int run(lt_dist_work *w) {
  MPI_Comm c = *(MPI_Comm *)w->pg->comm;
  lt_dist_buf *o = &w->out, *in = &w->in;
  MPI_Datatype t = mpi_type(o->data ? o->dtype : in->dtype);
  size_t es = lt_dist_dtype_size(o->data ? o->dtype : in->dtype);
  int size = w->pg->size, rank = w->pg->rank;
  switch (w->kind) {
  case LT_DIST_ALLREDUCE:
  case LT_DIST_REDUCE: {
    MPI_Op op = mpi_op(w->op, o->dtype);
    for (int64_t off = 0; off < o->count || (off == 0 && o->count == 0); off += CHUNK) {
      int n = (int)(o->count - off < CHUNK ? o->count - off : CHUNK);
      char *p = (char *)o->data + off * (int64_t)es;
      int rc;
      if (w->kind == LT_DIST_ALLREDUCE) rc = MPI_Allreduce(MPI_IN_PLACE, p, n, t, op, c);
      else if (rank == w->root) rc = MPI_Reduce(MPI_IN_PLACE, p, n, t, op, w->root, c);
      else rc = MPI_Reduce(p, NULL, n, t, op, w->root, c);
      if (check(w, rc) < 0) return -1;
      if (o->count == 0) break;
    }
    if (w->op == LT_DIST_AVG && (w->kind == LT_DIST_ALLREDUCE || rank == w->root)) scale(o, 1.0 / size);
    return 0;
  }
  case LT_DIST_BROADCAST:
    for (int64_t off = 0; off < o->count; off += CHUNK) {
      int n = (int)(o->count - off < CHUNK ? o->count - off : CHUNK);
      if (check(w, MPI_Bcast((char *)o->data + off * (int64_t)es, n, t, w->root, c)) < 0) return -1;
    }
    return 0;
  case LT_DIST_ALLGATHER:
    if (too_big(w, in->count)) return -1;
    return check(w, MPI_Allgather(in->data, (int)in->count, t, o->data, (int)in->count, t, c));
  case LT_DIST_GATHER:
    if (too_big(w, in->count)) return -1;
    return check(w, MPI_Gather(in->data, (int)in->count, t, rank == w->root ? o->data : NULL,
                               (int)in->count, t, w->root, c));
  case LT_DIST_SCATTER:
    if (too_big(w, o->count)) return -1;
    return check(w, MPI_Scatter(rank == w->root ? in->data : NULL, (int)o->count, t, o->data,
                                (int)o->count, t, w->root, c));
  case LT_DIST_REDUCE_SCATTER: {
    if (too_big(w, in->count)) return -1;
    int rc = MPI_Reduce_scatter(in->data, o->data, w->counts, t, mpi_op(w->op, o->dtype), c);
    if (check(w, rc) < 0) return -1;
    if (w->op == LT_DIST_AVG) scale(o, 1.0 / size);
    return 0;
  }
  case LT_DIST_ALLTOALL: {
    if (too_big(w, in->count) || too_big(w, o->count)) return -1;
    int *sd = malloc(2 * sizeof(int) * (size_t)size);
    if (!sd) { snprintf(w->err, sizeof w->err, "out of memory"); return -1; }
    int *rd = sd + size, s = 0, r = 0;
    for (int i = 0; i < size; i++) { sd[i] = s; s += w->counts[i]; rd[i] = r; r += w->rcounts[i]; }
    int rc = MPI_Alltoallv(in->data, w->counts, sd, t, o->data, w->rcounts, rd, t, c);
    free(sd);
    return check(w, rc);
  }
  case LT_DIST_BARRIER:
    return check(w, MPI_Barrier(c));
  case LT_DIST_NEW_GROUP: {
    /* every rank of the parent takes part (MPI_Comm_split), members get a communicator */
    int color = MPI_UNDEFINED, key = 0;
    for (int i = 0; i < w->new_nranks; i++)
      if (w->new_ranks[i] == w->pg->world_ranks[rank]) { color = 0; key = i; }
    MPI_Comm nc;
    if (check(w, MPI_Comm_split(c, color, key, &nc)) < 0) return -1;
    if (nc == MPI_COMM_NULL) return 0;
    MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN);
    lt_dist_pg *pg = calloc(1, sizeof *pg);
    MPI_Comm *pc = malloc(sizeof *pc);
    int *wr = malloc(sizeof(int) * (size_t)w->new_nranks);
    if (!pg || !pc || !wr) { free(pg); free(pc); free(wr); snprintf(w->err, sizeof w->err, "out of memory"); return -1; }
    *pc = nc;
    pg->backend = &lt_dist_mpi_backend;
    pg->device = -1;
    pg->comm = pc;
    MPI_Comm_rank(nc, &pg->rank);
    MPI_Comm_size(nc, &pg->size);
    memcpy(wr, w->new_ranks, sizeof(int) * (size_t)w->new_nranks);
    pg->world_ranks = wr;
    w->new_pg = pg;
    return 0;
  }
  default:
    snprintf(w->err, sizeof w->err, "not a collective");
    return -1;
  }
}

static int start_p2p(lt_dist_work *w) {
  MPI_Comm c = *(MPI_Comm *)w->pg->comm;
  lt_dist_buf *b = &w->out;
  if (too_big(w, b->count)) return -1;
  MPI_Request *r = malloc(sizeof *r);
  if (!r) { snprintf(w->err, sizeof w->err, "out of memory"); return -1; }
  int rc = w->kind == LT_DIST_SEND
    ? MPI_Isend(b->data, (int)b->count, mpi_type(b->dtype), w->root, w->tag, c, r)
    : MPI_Irecv(b->data, (int)b->count, mpi_type(b->dtype), w->root < 0 ? MPI_ANY_SOURCE : w->root,
                w->tag, c, r);
  if (check(w, rc) < 0) { free(r); return -1; }
  w->backend_req = r;
  return 0;
}

static int test_p2p(lt_dist_work *w) {
  MPI_Request *r = w->backend_req;
  if (!r) return -1;
  int done = 0;
  MPI_Status st;
  if (check(w, MPI_Test(r, &done, &st)) < 0) { free(r); w->backend_req = NULL; return -1; }
  if (!done) return 0;
  if (w->kind == LT_DIST_RECV) {
    int n = 0;
    MPI_Get_count(&st, mpi_type(w->out.dtype), &n);
    if (n != w->out.count) {
      snprintf(w->err, sizeof w->err, "the message has %d elements, the tensor %lld", n, (long long)w->out.count);
      free(r); w->backend_req = NULL;
      return -1;
    }
    w->source = st.MPI_SOURCE;
  }
  free(r);
  w->backend_req = NULL;
  return 1;
}

static void free_group(lt_dist_pg *pg) {
  MPI_Comm *c = pg->comm;
  if (c && *c != MPI_COMM_WORLD && *c != MPI_COMM_NULL && !finalized) MPI_Comm_free(c);
  free(c);
}

static void mpi_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code ? code : 1); }

const lt_dist_backend lt_dist_mpi_backend = {"mpi", run, start_p2p, test_p2p, free_group, mpi_abort};

bool lt_dist_mpi_initialized(void) {
  int flag = 0, fin = 0;
  MPI_Initialized(&flag);
  MPI_Finalized(&fin);
  return flag && !fin;
}

lt_dist_pg *lt_dist_mpi_init(char *err, size_t errlen) {
  int flag = 0, provided = 0;
  MPI_Initialized(&flag);
  if (!flag) {
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      snprintf(err, errlen, "MPI_Init_thread failed");
      return NULL;
    }
    initialized_here = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    snprintf(err, errlen, "this MPI library gives thread level %d; lutorch needs MPI_THREAD_MULTIPLE", provided);
    return NULL;
  }
  static MPI_User_function *const fns[2][5] = {
    {h_sum, h_sum, h_max, h_min, h_prod}, {b_sum, b_sum, b_max, b_min, b_prod}
  };
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 5; k++)
      if (half_ops[i][k] == 0 || half_ops[i][k] == MPI_OP_NULL)
        MPI_Op_create(fns[i][k], 1, &half_ops[i][k]);
  MPI_Comm *c = malloc(sizeof *c);
  lt_dist_pg *pg = calloc(1, sizeof *pg);
  if (!c || !pg) { free(c); free(pg); snprintf(err, errlen, "out of memory"); return NULL; }
  /* our own copy of the world: the user's MPI code (if any) keeps MPI_COMM_WORLD to itself */
  MPI_Comm_dup(MPI_COMM_WORLD, c);
  MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
  pg->backend = &lt_dist_mpi_backend;
  pg->device = -1;
  pg->comm = c;
  MPI_Comm_rank(*c, &pg->rank);
  MPI_Comm_size(*c, &pg->size);
  pg->world_ranks = malloc(sizeof(int) * (size_t)pg->size);
  if (!pg->world_ranks) { free(c); free(pg); snprintf(err, errlen, "out of memory"); return NULL; }
  for (int i = 0; i < pg->size; i++) pg->world_ranks[i] = i;
  return pg;
}

int lt_dist_mpi_finalize(void) {
  if (!lt_dist_mpi_initialized()) return 0;
  finalized = true;
  if (!initialized_here) return 0;
  return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

void lt_dist_pg_free(lt_dist_pg *pg) {
  if (!pg) return;
  if (pg->backend && pg->backend->free_group) pg->backend->free_group(pg);
  free(pg->world_ranks);
  free(pg);
}
