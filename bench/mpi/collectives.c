/*
 * Open MPI's side of ringstar's benchmark: the MPI collectives that do the work of ringstar's
 * three operations, timed the way `ringstar bench` times them and written in the columns of its
 * CSV (`ringstar bench --output x.csv`), so one script can put the two side by side.
 *
 *   algorithm mpi,              op reduce:    MPI_Allreduce(SUM), then every rank divides by n
 *                                             (ringstar's ring: the average on every rank)
 *   algorithm mpi-reduce-bcast, op reduce:    MPI_Reduce(SUM) to rank 0, rank 0 divides by n,
 *                                             MPI_Bcast of the average (the star's reduceGradients)
 *   algorithm mpi,              op broadcast: MPI_Bcast from rank 0 (the star's broadcastParams)
 *
 * and with --ops comm or all, those of the Communicator's that these do not cover already (its
 * allreduce is MPI_Allreduce above, its broadcast MPI_Bcast):
 *
 *   algorithm mpi-reduce,       op reduce:    MPI_Reduce(SUM) to rank 0, rank 0 divides by n
 *                                             (the communicator's reduce to rank 0 with AVG)
 *   algorithm mpi,              op allgather: MPI_Allgather of size/n bytes per rank; the size is
 *                                             the gathered result, as nccl-tests counts it
 *   algorithm mpi,              op reducescatter: MPI_Reduce_scatter_block(SUM) of size bytes,
 *                                             size/n per rank, each divided by n (reduceScatter AVG)
 *
 * All-gather and reduce-scatter round the size down to a whole number of elements per rank (and
 * skip a size with none), as `ringstar bench --algorithm comm` does, so the rows meet.
 * For every size (powers of two from --min-bytes to --max-bytes) and type, each operation is
 * first called once and its result checked against a closed form (wrong elements are summed over
 * the ranks into the column `wrong`); then come the warm-up calls, one barrier, and the timed
 * calls. Each timed call is timed on its own on every rank; a call's time is the largest over the
 * ranks, and p50/p99 are taken over those. busbw = size / p50 * bus_factor, with bus_factor
 * 2(n-1)/n for the all-reduce and Reduce + Bcast, (n-1)/n for all-gather and reduce-scatter, 1 for
 * broadcast and reduce (nccl-tests' definitions). Heap and off-heap peaks are a
 * JVM's notion and are left empty.
 *
 * Input values: rank r holds r + (i mod 1021) / 1024 at element i. Every partial sum needs fewer
 * than 24 significant bits, so float and double sums are exact in any order, the average
 * (n-1)/2 + (i mod 1021)/1024 is exactly representable, and a correctly rounded division of the
 * exact sum by n gives it exactly: results are compared with ==.
 *
 * Usage: mpirun -np N collectives [--min-bytes B] [--max-bytes B] [--type float|double|both]
 *            [--iters N] [--warmup N] [--transport LABEL] [--output FILE.csv]
 *            [--ops aggregators|comm|all]   (default aggregators: the first three above)
 * Sizes take the suffixes K, M, G (x1024). Exit status: 0 all right, 1 a wrong element, 2 usage.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PERIOD 1021
#define STEP (1.0 / 1024)
/* Automatic iteration counts, as `ringstar bench` chooses them: about 256 MiB per rank and row. */
#define AUTO_BYTES_PER_ROW (256L << 20)
#define AUTO_MIN_ITERS 5
#define AUTO_MAX_ITERS 200
#define AUTO_WARMUP_BYTES (32L << 20)
#define AUTO_MAX_WARMUP 2000

enum op { ALLREDUCE, REDUCE_BCAST, BCAST, ROOT_REDUCE, ALLGATHER, REDUCE_SCATTER, OPS };

struct settings {
    long min_bytes, max_bytes;
    int iters, warmup; /* -1: automatic */
    int types;         /* bit 0 float, bit 1 double */
    int ops;           /* bit 0 the aggregators' three, bit 1 the communicator's three more */
    const char *transport, *output;
};

static int rank, world;

static void usage(const char *message) {
    if (rank == 0) {
        fprintf(stderr, "collectives: %s\n", message);
    }
    MPI_Finalize();
    exit(2);
}

static long parse_size(const char *text) {
    char *end;
    long value = strtol(text, &end, 10);
    long unit = *end == 'K' ? 1L << 10 : *end == 'M' ? 1L << 20 : *end == 'G' ? 1L << 30 : 1;
    if (unit > 1) {
        end++;
    }
    if (*end != '\0' || value <= 0 || value > (1L << 30) / unit) {
        usage("a size must be a positive number of bytes up to 1G, with an optional K, M or G");
    }
    return value * unit;
}

static int parse_count(const char *text) {
    char *end;
    long value = strtol(text, &end, 10);
    if (*end != '\0' || value < 0 || value > 1000000000) {
        usage("a count must be a number from 0 to 10^9");
    }
    return (int) value;
}

static struct settings parse(int argc, char **argv) {
    struct settings s = {4, 64L << 20, -1, -1, 1, 1, "mpi", NULL};
    for (int a = 1; a < argc; a++) {
        if (a + 1 >= argc) {
            usage("every flag takes a value");
        }
        const char *flag = argv[a], *value = argv[++a];
        if (!strcmp(flag, "--min-bytes")) {
            s.min_bytes = parse_size(value);
        } else if (!strcmp(flag, "--max-bytes")) {
            s.max_bytes = parse_size(value);
        } else if (!strcmp(flag, "--iters")) {
            s.iters = parse_count(value);
            if (s.iters == 0) {
                usage("--iters must be at least 1");
            }
        } else if (!strcmp(flag, "--warmup")) {
            s.warmup = parse_count(value);
        } else if (!strcmp(flag, "--type")) {
            s.types = !strcmp(value, "float") ? 1 : !strcmp(value, "double") ? 2 : !strcmp(value, "both") ? 3 : 0;
            if (!s.types) {
                usage("--type is float, double or both");
            }
        } else if (!strcmp(flag, "--ops")) {
            s.ops = !strcmp(value, "aggregators") ? 1 : !strcmp(value, "comm") ? 2 : !strcmp(value, "all") ? 3 : 0;
            if (!s.ops) {
                usage("--ops is aggregators, comm or all");
            }
        } else if (!strcmp(flag, "--transport")) {
            s.transport = value;
        } else if (!strcmp(flag, "--output")) {
            s.output = value;
        } else {
            usage("unknown flag; see the comment at the top of collectives.c");
        }
    }
    if (s.min_bytes > s.max_bytes) {
        usage("--min-bytes is larger than --max-bytes");
    }
    return s;
}

static int iters_for(const struct settings *s, long bytes) {
    if (s->iters > 0) {
        return s->iters;
    }
    long by_volume = AUTO_BYTES_PER_ROW / bytes;
    return (int) (by_volume < AUTO_MIN_ITERS ? AUTO_MIN_ITERS : by_volume > AUTO_MAX_ITERS ? AUTO_MAX_ITERS : by_volume);
}

/* The same rule as ringstar's bench: about AUTO_WARMUP_BYTES, at most AUTO_MAX_WARMUP calls, or a
 * fifth of the timed calls if that is more (the calls settle each size's buffers and caches). */
static int warmup_for(const struct settings *s, long bytes) {
    if (s->warmup >= 0) {
        return s->warmup;
    }
    int fifth = iters_for(s, bytes) / 5;
    long by_volume = AUTO_WARMUP_BYTES / bytes;
    if (by_volume > AUTO_MAX_WARMUP) {
        by_volume = AUTO_MAX_WARMUP;
    }
    if (fifth < 1) {
        fifth = 1;
    }
    return by_volume > fifth ? (int) by_volume : fifth;
}

static double value(int r, long i) {
    return r + (i % PERIOD) * STEP;
}

static double average(long i) {
    return (world - 1) / 2.0 + (i % PERIOD) * STEP;
}

/* Element i of this rank's result of `op`, with `part` elements per rank for the gather and the scatter. */
static double expected(enum op op, long i, long part) {
    switch (op) {
    case BCAST:
        return value(0, i);
    case ALLGATHER:
        return value((int) (i / part), i % part);
    case REDUCE_SCATTER:
        return average(rank * part + i);
    default:
        return average(i);
    }
}

/* Elements of each rank's input for a row of `count` elements, and of its result. */
static long input_count(enum op op, long count) {
    return op == ALLGATHER ? count / world : op == REDUCE_SCATTER ? count / world * world : count;
}

static long result_count(enum op op, long input) {
    return op == ALLGATHER ? input * world : op == REDUCE_SCATTER ? input / world : input;
}

static void fill(void *buffer, int is_double, long count, int r) {
    for (long i = 0; i < count; i++) {
        if (is_double) {
            ((double *) buffer)[i] = value(r, i);
        } else {
            ((float *) buffer)[i] = (float) value(r, i);
        }
    }
}

static void divide(void *buffer, int is_double, long count) {
    for (long i = 0; i < count; i++) {
        if (is_double) {
            ((double *) buffer)[i] /= world;
        } else {
            ((float *) buffer)[i] /= (float) world;
        }
    }
}

/* One call of `op` on `count` input elements: `in` is this rank's input (never changed), `out`
 * receives the result. */
static void call(enum op op, const void *in, void *out, int is_double, long count, size_t bytes) {
    MPI_Datatype type = is_double ? MPI_DOUBLE : MPI_FLOAT;
    switch (op) {
    case ALLREDUCE:
        MPI_Allreduce(in, out, (int) count, type, MPI_SUM, MPI_COMM_WORLD);
        divide(out, is_double, count);
        break;
    case REDUCE_BCAST:
        MPI_Reduce(in, out, (int) count, type, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            divide(out, is_double, count);
        }
        MPI_Bcast(out, (int) count, type, 0, MPI_COMM_WORLD);
        break;
    case BCAST:
        /* The root sends its input; the others receive into their result buffer. */
        if (rank == 0) {
            memcpy(out, in, bytes);
        }
        MPI_Bcast(out, (int) count, type, 0, MPI_COMM_WORLD);
        break;
    case ROOT_REDUCE:
        MPI_Reduce(in, out, (int) count, type, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            divide(out, is_double, count);
        }
        break;
    case ALLGATHER:
        MPI_Allgather(in, (int) count, type, out, (int) count, type, MPI_COMM_WORLD);
        break;
    case REDUCE_SCATTER:
        MPI_Reduce_scatter_block(in, out, (int) (count / world), type, MPI_SUM, MPI_COMM_WORLD);
        divide(out, is_double, count / world);
        break;
    case OPS:
        break;
    }
}

/* Wrong elements of this rank's result of `op` on `input` elements per rank (the reduce's result
 * is only rank 0's). */
static long count_wrong(enum op op, const void *out, int is_double, long input) {
    long wrong = 0, count = result_count(op, input), part = op == REDUCE_SCATTER ? input / world : input;
    if (op == ROOT_REDUCE && rank != 0) {
        return 0;
    }
    for (long i = 0; i < count; i++) {
        double want = expected(op, i, part);
        wrong += is_double ? ((const double *) out)[i] != want : ((const float *) out)[i] != (float) want;
    }
    return wrong;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* The p-th percentile (nearest rank) of `sorted`, which holds n values in ascending order. */
static double percentile(const double *sorted, int n, double p) {
    int at = (int) (p / 100.0 * n + 0.999999) - 1;
    return sorted[at < 0 ? 0 : at >= n ? n - 1 : at];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    struct settings s = parse(argc, argv);
    FILE *csv = NULL;
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    if (rank == 0) {
        csv = s.output ? fopen(s.output, "w") : stdout;
        if (!csv) {
            perror(s.output);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fprintf(csv, "date,world_size,placement,transport,type,algorithm,op,size_bytes,count,iters,time_p50_us,"
                "time_p99_us,algbw_gbps,busbw_gbps,bus_factor,wrong,heap_peak_bytes,offheap_peak_bytes\n");
    }
    const char *algorithms[] = {"mpi", "mpi-reduce-bcast", "mpi", "mpi-reduce", "mpi", "mpi"};
    const char *op_names[] = {"reduce", "reduce", "broadcast", "reduce", "allgather", "reducescatter"};
    long total_wrong = 0;
    for (int is_double = 0; is_double < 2; is_double++) {
        if (!(s.types & (1 << is_double))) {
            continue;
        }
        size_t element = is_double ? sizeof(double) : sizeof(float);
        for (long bytes = 1; bytes <= s.max_bytes; bytes <<= 1) {
            if (bytes < s.min_bytes || bytes < (long) element) {
                continue;
            }
            long size_count = bytes / (long) element;
            void *in = malloc(bytes), *out = malloc(bytes);
            /* Room for the most timed calls a row of this size can have (all-gather's rows are smaller). */
            int most = s.iters > 0 ? s.iters : AUTO_MAX_ITERS;
            double *times = malloc(sizeof(double) * most), *slowest = malloc(sizeof(double) * most);
            if (!in || !out || !times || !slowest) {
                fprintf(stderr, "collectives: rank %d: out of memory at %ld bytes\n", rank, bytes);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            fill(in, is_double, size_count, rank);
            for (enum op op = ALLREDUCE; op < OPS; op++) {
                long count = input_count(op, size_count);
                /* The row's size: the gathered result of all-gather, the input otherwise. */
                long row_bytes = (op == ALLGATHER ? count * world : count) * (long) element;
                if (!(s.ops & (op <= BCAST ? 1 : 2)) || count == 0 || (op == REDUCE_SCATTER && count < world)) {
                    continue;
                }
                int iters = iters_for(&s, row_bytes), warmup = warmup_for(&s, row_bytes);
                memset(out, 0, bytes);
                call(op, in, out, is_double, count, bytes);
                long wrong = count_wrong(op, out, is_double, count), wrong_sum = 0;
                MPI_Reduce(&wrong, &wrong_sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
                for (int w = 0; w < warmup; w++) {
                    call(op, in, out, is_double, count, bytes);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                for (int i = 0; i < iters; i++) {
                    double start = MPI_Wtime();
                    call(op, in, out, is_double, count, bytes);
                    times[i] = MPI_Wtime() - start;
                }
                MPI_Reduce(times, slowest, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                if (rank == 0) {
                    qsort(slowest, iters, sizeof(double), compare_doubles);
                    double p50 = percentile(slowest, iters, 50), p99 = percentile(slowest, iters, 99);
                    double factor = op == BCAST || op == ROOT_REDUCE ? 1.0
                                    : op == ALLGATHER || op == REDUCE_SCATTER ? (double) (world - 1) / world
                                    : 2.0 * (world - 1) / world;
                    double algbw = row_bytes / p50 / 1e9;
                    fprintf(csv, "%s,%d,processes,%s,%s,%s,%s,%ld,%ld,%d,%.3f,%.3f,%.6g,%.6g,%.6f,%ld,,\n", date, world,
                            s.transport, is_double ? "double" : "float", algorithms[op], op_names[op], row_bytes,
                            row_bytes / (long) element, iters, p50 * 1e6, p99 * 1e6, algbw, algbw * factor, factor,
                            wrong_sum);
                    fflush(csv);
                    total_wrong += wrong_sum;
                }
            }
            free(in);
            free(out);
            free(times);
            free(slowest);
        }
    }
    if (rank == 0 && s.output) {
        fclose(csv);
    }
    if (rank == 0 && total_wrong > 0) {
        fprintf(stderr, "collectives: FAILED: %ld wrong elements (see the column wrong)\n", total_wrong);
    }
    MPI_Bcast(&total_wrong, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return total_wrong > 0;
}
