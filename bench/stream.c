/* stream.c - STREAM-like memory bandwidth (copy, scale, add, triad) in double,
 * plus float32 c=a+b (the tensor elementwise case) with normal and non-temporal
 * stores, and a working-set sweep of float32 add to locate the cache cliffs.
 * Build: gcc -O3 -march=native -fopenmp stream.c -o stream
 * Run:   OMP_NUM_THREADS=1 ./stream ; OMP_NUM_THREADS=2 ./stream
 *        ./stream N   (N = doubles per array, default 2^27 = 1 GiB per array)
 *        ./stream N nosweep   (skip the working-set sweep; lutorch's bench/run.sh uses this)
 * Bytes are counted STREAM-style: bytes the program reads + writes (copy 16 B/elem,
 * triad/add 24 B/elem); write-allocate traffic is not counted.
 * Prints median / max over REPS repetitions (first touch excluded). */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 11
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static int cmpd(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static void report(const char*name,double bytes,double*t,int n){
  qsort(t,n,sizeof*t,cmpd);
  printf("%-26s GB/s median %7.1f  max %7.1f  (time median %.4f s)\n",name,bytes/t[n/2]/1e9,bytes/t[0]/1e9,t[n/2]);
}

static void fadd_plain(float*restrict c,const float*restrict a,const float*restrict b,long n){
  #pragma omp parallel for schedule(static)
  for(long i=0;i<n;i++) c[i]=a[i]+b[i];
}
static void fadd_nt(float*restrict c,const float*restrict a,const float*restrict b,long n){
  /* n multiple of 16, 64-byte aligned arrays */
  #pragma omp parallel for schedule(static)
  for(long i=0;i<n;i+=16){
#ifdef __AVX512F__
    _mm512_stream_ps(c+i,_mm512_add_ps(_mm512_load_ps(a+i),_mm512_load_ps(b+i)));
#else
    _mm256_stream_ps(c+i,_mm256_add_ps(_mm256_load_ps(a+i),_mm256_load_ps(b+i)));
    _mm256_stream_ps(c+i+8,_mm256_add_ps(_mm256_load_ps(a+i+8),_mm256_load_ps(b+i+8)));
#endif
  }
  _mm_sfence();
}

int main(int argc,char**argv){
  long n = argc>1 ? atol(argv[1]) : (1L<<27);
  printf("threads %d, doubles per array %ld (%.0f MiB per array, %.0f MiB for 3 arrays)\n",
         omp_get_max_threads(),n,n*8/1048576.0,3*n*8/1048576.0);
  double *a=aligned_alloc(64,n*8),*b=aligned_alloc(64,n*8),*c=aligned_alloc(64,n*8);
  #pragma omp parallel for schedule(static)
  for(long i=0;i<n;i++){a[i]=1.0;b[i]=2.0;c[i]=0.0;}
  double t[REPS], s=3.0;
  /* warm-up: on a VM the first passes over freshly faulted memory run slow */
  for(int r=0;r<8;r++){
    #pragma omp parallel for schedule(static)
    for(long i=0;i<n;i++) c[i]=a[i]+b[i];
  }
  for(int r=0;r<REPS;r++){double t0=now();
    #pragma omp parallel for schedule(static)
    for(long i=0;i<n;i++) c[i]=a[i];
    t[r]=now()-t0;} report("copy   c=a (f64)",16.0*n,t,REPS);
  for(int r=0;r<REPS;r++){double t0=now();
    #pragma omp parallel for schedule(static)
    for(long i=0;i<n;i++) b[i]=s*c[i];
    t[r]=now()-t0;} report("scale  b=s*c (f64)",16.0*n,t,REPS);
  for(int r=0;r<REPS;r++){double t0=now();
    #pragma omp parallel for schedule(static)
    for(long i=0;i<n;i++) c[i]=a[i]+b[i];
    t[r]=now()-t0;} report("add    c=a+b (f64)",24.0*n,t,REPS);
  for(int r=0;r<REPS;r++){double t0=now();
    #pragma omp parallel for schedule(static)
    for(long i=0;i<n;i++) a[i]=b[i]+s*c[i];
    t[r]=now()-t0;} report("triad  a=b+s*c (f64)",24.0*n,t,REPS);
  /* float32 c=a+b on the same buffers: 2n floats per array */
  long nf=2*n; float*fa=(float*)a,*fb=(float*)b,*fc=(float*)c;
  #pragma omp parallel for schedule(static)
  for(long i=0;i<nf;i++){fa[i]=1.f;fb[i]=2.f;fc[i]=0.f;}
  for(int r=0;r<REPS;r++){double t0=now(); fadd_plain(fc,fa,fb,nf); t[r]=now()-t0;}
  report("f32 add c=a+b",12.0*nf,t,REPS);
  for(int r=0;r<REPS;r++){double t0=now(); fadd_nt(fc,fa,fb,nf); t[r]=now()-t0;}
  report("f32 add c=a+b (NT stores)",12.0*nf,t,REPS);
  if(fc[nf-1]!=3.f){printf("check failed\n");return 1;}
  if(argc>2 && strcmp(argv[2],"nosweep")==0) return 0;
  /* working-set sweep: f32 add, total footprint = 3 arrays */
  printf("sweep: f32 add c=a+b, footprint = 3 arrays\n");
  for(long m=1L<<12; m<=nf; m*=4){
    int reps = (int)((1L<<28)/m); if(reps<3) reps=3; if(reps>20000) reps=20000;
    double tt[REPS];
    for(int r=0;r<REPS;r++){
      fadd_plain(fc,fa,fb,m);
      double t0=now(); for(int k=0;k<reps;k++) fadd_plain(fc,fa,fb,m); tt[r]=(now()-t0)/reps;
    }
    char name[64]; snprintf(name,sizeof name,"  footprint %8.2f MiB",3.0*m*4/1048576);
    report(name,12.0*m,tt,REPS);
  }
  return 0;
}
