/* allreduce-bare.c: the bare MPI_Allreduce loop benchd-allreduce is compared
 * with (bench/allreduce-overhead.sh): same buffer, same warmup and iterations,
 * no checks, no logging.  Prints the slowest rank's time per iteration in us. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
        MPI_Init(&argc, &argv);
        size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 64u << 20;
        int iters = argc > 2 ? atoi(argv[2]) : 20, warmup = argc > 3 ? atoi(argv[3]) : 5, rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        size_t count = bytes / sizeof(float);
        float *send = malloc(bytes), *recv = malloc(bytes);
        for (size_t i = 0; i < count; i++)
                send[i] = (float)(rank + 1);
        for (int i = 0; i < warmup; i++)
                MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
                MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / iters, tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
                printf("%.2f\n", tmax * 1e6);
        free(send);
        free(recv);
        MPI_Finalize();
        return 0;
}
