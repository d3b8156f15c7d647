/*
 * The reference for ringstar's ring: Open MPI's MPI_Allreduce of float32 over the sizes the issue
 * names, timed the way `ringstar bench` times (warm-up, barrier, average of the timed calls), with
 * busbw = size / time * 2(n-1)/n as nccl-tests defines it. The first call's result is checked
 * against its closed form, and wrong elements are counted, so a broken run cannot pass for a fast one.
 * Built and run by compare.sh.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    size_t sizes[] = {1024, 1 << 20, 16 << 20, 64 << 20};
    int status = 0;
    for (int s = 0; s < 4; s++) {
        size_t bytes = sizes[s], count = bytes / sizeof(float);
        float *in = malloc(bytes), *out = malloc(bytes);
        for (size_t i = 0; i < count; i++) {
            in[i] = (float) (rank + i % 7);
        }
        MPI_Allreduce(in, out, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        long wrong = 0;
        for (size_t i = 0; i < count; i++) {
            float expected = (float) (n * (n - 1) / 2 + n * (int) (i % 7));
            wrong += out[i] != expected;
        }
        int iters = bytes <= 4096 ? 5000 : bytes <= (1 << 20) ? 300 : bytes <= (16 << 20) ? 30 : 10;
        for (int w = 0; w < iters / 5 + 1; w++) {
            MPI_Allreduce(in, out, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Allreduce(in, out, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        double t = (MPI_Wtime() - t0) / iters;
        if (rank == 0) {
            printf("mpi %10zu bytes  time %10.1f us  busbw %.3f GB/s  #wrong %ld\n", bytes, t * 1e6,
                    bytes / t / 1e9 * 2.0 * (n - 1) / n, wrong);
        }
        status |= wrong != 0;
        free(in);
        free(out);
    }
    MPI_Finalize();
    return status;
}
