/*
** dist_allreduce.c — OpenMPI's own MPI_Allreduce (float32 sum, in place) on the buffer
** sizes bench/dist.sh gives torch.distributed.all_reduce: the reference for its bandwidth.
**   mpirun -np 2 dist_allreduce ELEMS ITERS [ELEMS ITERS ...]
** prints "mpi ELEMS seconds_per_op" lines on rank 0.
*/
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int a = 1; a + 1 < argc; a += 2) {
    long n = atol(argv[a]);
    int iters = atoi(argv[a + 1]);
    float *buf = malloc(sizeof(float) * (size_t)n);
    for (long i = 0; i < n; i++) buf[i] = 1.0f;
    MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);   /* warm up */
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int k = 0; k < iters; k++) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    t = MPI_Wtime() - t;
    if (rank == 0) printf("mpi %ld %.9f\n", n, t / iters);
    free(buf);
  }
  MPI_Finalize();
  return 0;
}
