package io.ringstar.bench;

import io.ringstar.AllReduceAggregator;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.config.Compression;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.ranks.Algorithm;
import io.ringstar.ranks.RankFailureException;
import io.ringstar.ranks.RankPlacement;
import io.ringstar.ranks.RankThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * One transport's part of a bench run: this process's ranks (all of them as threads, or its one
 * rank), their transports, one aggregator per algorithm (or a communicator) on each, and a control aggregator (a ring
 * with default settings, whatever the flags say) for the small collectives that keep the ranks in
 * agreement: the plan check at start and, with one rank per process, gathering every rank's
 * memory, wrong-element count and call times after each row. Every algorithm borrows the same transports,
 * which this object owns and closes.
 */
final class TransportSweep implements AutoCloseable {
    /**
     * The control gather's row per rank: heap peak, off-heap peak, wrong elements, the calling
     * thread's and the process's {@link ResourceCounters}, then each call's time.
     */
    private static final int HEAP = 0;
    private static final int OFF_HEAP = 1;
    private static final int WRONG = 2;
    private static final int THREAD_USAGE = 3;
    private static final int PROCESS_USAGE = THREAD_USAGE + ResourceCounters.FIELDS;
    private static final int FIRST_CALL = PROCESS_USAGE + ResourceCounters.FIELDS;

    private final BenchSettings settings;
    private final RankPlacement placement;
    private final MemoryMeter memory;
    private final RankThreads threads;
    private final List<Transport> transports;
    private final List<GradientAggregator> control = new ArrayList<>();
    private final Map<Algorithm, List<GradientAggregator>> groups = new EnumMap<>(Algorithm.class);
    /** One per local rank when the communicator is benchmarked, else empty. */
    private final List<Communicator> communicators = new ArrayList<>();

    /**
     * One rank's outcome for one row.
     *
     * @param threadUsage its calling thread's counters over the timed calls
     * @param processUsage the process's over them, read by local rank 0 only ({@code null} on the others)
     */
    private record RankTimes(long wrong, long[] nanosPerCall, ResourceCounters threadUsage,
            ResourceCounters processUsage) {
    }

    private TransportSweep(BenchSettings settings, RankPlacement placement, MemoryMeter memory,
            RankThreads threads, List<Transport> transports) {
        this.settings = settings;
        this.placement = placement;
        this.memory = memory;
        this.threads = threads;
        this.transports = transports;
    }

    /**
     * Opens this process's ranks of {@code placement}: blocks until the whole group has formed, at
     * most the placement's timeout plus 30 s.
     *
     * @param memory watched around each row; the caller keeps ownership
     * @throws RankFailureException if a rank cannot join; nothing is left open then
     */
    static TransportSweep open(BenchSettings settings, RankPlacement placement, MemoryMeter memory) {
        RankThreads threads = new RankThreads(placement);
        List<Transport> transports;
        try {
            transports = threads.openTransports(placement);
        } catch (RuntimeException e) {
            threads.close();
            throw e;
        }
        TransportSweep sweep = new TransportSweep(settings, placement, memory, threads, transports);
        try {
            for (int local = 0; local < transports.size(); local++) {
                sweep.control.add(new AllReduceAggregator(sweep.aggregatorConfig(local, false),
                        Transports.borrowed(transports.get(local))));
            }
            for (Algorithm algorithm : settings.algorithms()) {
                if (algorithm == Algorithm.COMM) {
                    for (int local = 0; local < transports.size(); local++) {
                        sweep.communicators.add(new Communicator(sweep.aggregatorConfig(local, true),
                                Transports.borrowed(transports.get(local))));
                    }
                    continue;
                }
                List<GradientAggregator> aggregators = new ArrayList<>();
                sweep.groups.put(algorithm, aggregators);
                for (int local = 0; local < transports.size(); local++) {
                    // The algorithms take turns on the same transports, so none of them may close them.
                    aggregators.add(algorithm.create(sweep.aggregatorConfig(local, true),
                            Transports.borrowed(transports.get(local))));
                }
            }
            return sweep;
        } catch (RuntimeException e) {
            sweep.close();
            throw e;
        }
    }

    private DistributedConfig aggregatorConfig(int local, boolean withFlags) {
        DistributedConfig.Builder config = DistributedConfig.builder()
                .worldSize(placement.config().worldSize())
                .rank(placement.groupRank(local))
                .timeout(placement.config().timeout());
        // Options from the flags and environment (--checksum, say) reach the aggregators too; the
        // control ring's, which carry times and counts that its averages must give back exactly,
        // without the compression.
        (withFlags ? placement.config().options() : controlOptions(placement.config().options()))
                .forEach(config::option);
        if (withFlags && settings.chunkBytes() != BenchSettings.AUTO) {
            config.option(AggregatorOptions.CHUNK_BYTES_OPTION, Integer.toString(settings.chunkBytes()));
        }
        return config.build();
    }

    /** The job's options for the control ring: all of them but the compression, which is none. */
    static Map<String, String> controlOptions(Map<String, String> options) {
        Map<String, String> control = new LinkedHashMap<>(options);
        control.put(AggregatorOptions.COMPRESSION_OPTION, Compression.NONE.toString());
        return control;
    }

    String transport() {
        return placement.config().transport();
    }

    /** See {@link PlanAgreement#check}: every rank must run the same sweep as rank 0. */
    void agreeOnPlan() {
        PlanAgreement.check(settings, placement, threads, control);
    }

    /** Every local rank's input for one size: its {@link ClosedFormPattern} values; the caller closes them. */
    List<INDArray> inputs(ElementType type, int count) {
        return threads.run(local -> ClosedFormPattern.create(type, placement.groupRank(local), count),
                Duration.ofMinutes(5));
    }

    /** Untimed calls of {@code count} elements on every rank, so that the JIT compiles the path first. */
    void warmUp(ElementType type, Algorithm algorithm, Operation operation, int count, int calls) {
        int inputCount = Math.toIntExact(Math.max(1, operation.inputElements(count, placement.config().worldSize())));
        List<INDArray> inputs = inputs(type, operation.communicator() ? inputCount : count);
        try {
            List<GradientAggregator> aggregators = groups.get(algorithm);
            threads.run(local -> {
                try (INDArray result = resultFor(operation, inputs.get(local))) {
                    for (int i = 0; i < calls; i++) {
                        call(algorithm == Algorithm.COMM ? null : aggregators.get(local), local, operation,
                                inputs.get(local), result);
                    }
                }
                return null;
            // Only a guard against a call that breaks its own timeout: a few timeouts, plus 10 ms a call.
            }, settings.timeout().multipliedBy(3).plus(Duration.ofMillis(10L * calls)));
        } finally {
            inputs.forEach(INDArray::close);
        }
    }

    /**
     * The array an aggregator's {@code operation} writes its result into, made once per row and rank
     * as a training loop would ({@link Operation#REDUCE_INTO}); {@code null} for the others. The
     * caller closes it ({@code try} with resources accepts the {@code null}).
     */
    private static INDArray resultFor(Operation operation, INDArray input) {
        return operation.needsResult() ? TensorMemory.newDetached(ElementType.of(input.dataType()), input.shape())
                : null;
    }

    /** One untimed or timed call on local rank {@code local}, freeing what it returns unless it is {@code result}. */
    private void call(GradientAggregator aggregator, int local, Operation operation, INDArray input,
            INDArray result) {
        if (operation.communicator()) {
            INDArray returned = operation.call(communicators.get(local), input);
            if (operation.allocates()) {
                returned.close();
            }
        } else {
            INDArray[] returned = operation.call(aggregator, input, result);
            if (operation.allocates()) {
                TensorMemory.close(returned);
            }
        }
    }

    /**
     * A communicator row of about {@code size} bytes: each rank's input is made fresh from
     * {@link ClosedFormPattern} (the in-place calls change it), the first call is checked, and the
     * rest of the row runs as {@link #measure}'s. Returns {@code null}, on every rank alike, when
     * the size holds less than one element per rank.
     */
    BenchRow measureCommunicator(ElementType type, long size, Operation operation) {
        int worldSize = placement.config().worldSize();
        long inputCount = operation.inputElements(size / type.bytes(), worldSize);
        if (inputCount == 0 || (operation == Operation.REDUCE_SCATTER && inputCount < worldSize)) {
            return null;
        }
        long rowBytes = operation.rowElements(inputCount, worldSize) * type.bytes();
        List<INDArray> inputs = inputs(type, Math.toIntExact(inputCount));
        try {
            return measure(type, rowBytes, inputs, Algorithm.COMM, operation, inputCount);
        } finally {
            inputs.forEach(INDArray::close);
        }
    }

    /**
     * One row: every rank checks one call, makes the warm-up calls, meets the others at the
     * transport's barrier and times each of its calls, with the kernel's counters of its thread and
     * process ({@link ResourceCounters}) read just before and after them; the memory meter watches
     * throughout.
     */
    BenchRow measure(ElementType type, long size, List<INDArray> inputs, Algorithm algorithm, Operation operation) {
        return measure(type, size, inputs, algorithm, operation, size / type.bytes());
    }

    private BenchRow measure(ElementType type, long size, List<INDArray> inputs, Algorithm algorithm,
            Operation operation, long inputCount) {
        int iters = settings.itersFor(size);
        int warmup = settings.warmupFor(size);
        int worldSize = placement.config().worldSize();
        List<GradientAggregator> aggregators = groups.get(algorithm);
        // Each call ends within the timeout by contract; this only guards against a bug in that.
        Duration limit = settings.timeout().multipliedBy(iters + warmup + 3L);
        memory.start();
        List<RankTimes> ranks = threads.run(local -> {
            GradientAggregator aggregator = aggregators == null ? null : aggregators.get(local);
            INDArray input = inputs.get(local);
            try (INDArray result = resultFor(operation, input)) {
                return measureRank(aggregator, local, type, operation, input, result, inputCount, warmup, iters);
            }
        }, limit);
        MemoryMeter.Peaks peaks = memory.stop();
        return row(type, size, algorithm, operation, iters, worldSize, ranks, peaks);
    }

    /** One rank's part of a row: the checked call, the warm-up, the barriers and the timed calls. */
    private RankTimes measureRank(GradientAggregator aggregator, int local, ElementType type, Operation operation,
            INDArray input, INDArray result, long inputCount, int warmup, int iters) {
        long wrong = checkedCall(aggregator, local, type, operation, input, result, inputCount);
        for (int i = 0; i < warmup; i++) {
            call(aggregator, local, operation, input, result);
        }
        transports.get(local).barrier();
        // The process's counters are read by one rank per process, between two barriers: the
        // first keeps the others' wait for the slowest warm-up out of its figures, the second
        // keeps the reading (two files per thread of the JVM) out of the first call's time. The
        // thread's own are read last before the calls and first after them; never inside.
        ResourceCounters processBefore = local == 0 ? ResourceCounters.ofProcess() : null;
        transports.get(local).barrier();
        ResourceCounters threadBefore = ResourceCounters.ofCurrentThread();
        // Timed here, not read from collectiveStatistics(): a row's time per call is the slowest rank's
        // for each call in turn (below), which per-rank percentiles since the opening cannot give.
        long[] nanos = new long[iters];
        long before = System.nanoTime();
        for (int i = 0; i < iters; i++) {
            call(aggregator, local, operation, input, result);
            long after = System.nanoTime();
            nanos[i] = after - before;
            before = after;
        }
        ResourceCounters threadUsage = ResourceCounters.ofCurrentThread().since(threadBefore);
        ResourceCounters processUsage = local == 0 ? ResourceCounters.ofProcess().since(processBefore) : null;
        return new RankTimes(wrong, nanos, threadUsage, processUsage);
    }

    /** The row from every local rank's outcome, with one rank per process after gathering every rank's. */
    private BenchRow row(ElementType type, long size, Algorithm algorithm, Operation operation, int iters,
            int worldSize, List<RankTimes> ranks, MemoryMeter.Peaks peaks) {
        // A call's time is the slowest rank's: over the threads of this JVM, or, with one rank per
        // process, over every rank's times gathered at the end of the row.
        long[] perCall = new long[iters];
        for (RankTimes rank : ranks) {
            for (int i = 0; i < iters; i++) {
                perCall[i] = Math.max(perCall[i], rank.nanosPerCall()[i]);
            }
        }
        long wrong = ranks.stream().mapToLong(RankTimes::wrong).sum();
        List<Long> heap = List.of(peaks.heapBytes());
        List<Long> offHeap = List.of(peaks.offHeapBytes());
        List<ResourceCounters> threadUsage = ranks.stream().map(RankTimes::threadUsage).toList();
        List<ResourceCounters> processUsage = List.of(ranks.get(0).processUsage());
        if (placement.oneRankPerProcess()) {
            long[] mine = new long[FIRST_CALL + iters];
            mine[HEAP] = peaks.heapBytes();
            mine[OFF_HEAP] = peaks.offHeapBytes();
            mine[WRONG] = wrong;
            threadUsage.get(0).toArray(mine, THREAD_USAGE);
            processUsage.get(0).toArray(mine, PROCESS_USAGE);
            System.arraycopy(perCall, 0, mine, FIRST_CALL, iters);
            long[][] gathered = gather(mine);
            heap = column(gathered, HEAP);
            offHeap = column(gathered, OFF_HEAP);
            wrong = column(gathered, WRONG).stream().mapToLong(Long::longValue).sum();
            threadUsage = Arrays.stream(gathered).map(rank -> ResourceCounters.fromArray(rank, THREAD_USAGE)).toList();
            processUsage = Arrays.stream(gathered).map(rank -> ResourceCounters.fromArray(rank, PROCESS_USAGE))
                    .toList();
            for (long[] rank : gathered) {
                for (int i = 0; i < iters; i++) {
                    perCall[i] = Math.max(perCall[i], rank[FIRST_CALL + i]);
                }
            }
        }
        return new BenchRow(transport(), type, algorithm, settings.algorithmLabel(algorithm), operation, size,
                size / type.bytes(), iters,
                BenchRow.percentile(perCall, 50), BenchRow.percentile(perCall, 99),
                operation.busBandwidthFactor(worldSize), wrong, heap, offHeap, threadUsage, processUsage);
    }

    /** The first call of a row on local rank {@code local}, and how many elements of its result are wrong. */
    private long checkedCall(GradientAggregator aggregator, int local, ElementType type, Operation operation,
            INDArray input, INDArray result, long inputCount) {
        int worldSize = placement.config().worldSize();
        if (!operation.communicator()) {
            INDArray[] checked = operation.call(aggregator, input, result);
            long wrong = ClosedFormPattern.countWrong(checked[0], type, operation, worldSize,
                    settings.compression());
            if (operation.allocates()) {
                TensorMemory.close(checked);
            }
            return wrong;
        }
        INDArray returned = operation.call(communicators.get(local), input);
        long wrong = ClosedFormPattern.countWrong(returned, type, operation, worldSize, placement.groupRank(local),
                inputCount, settings.compression());
        if (operation.allocates()) {
            returned.close();
        }
        return wrong;
    }

    /**
     * Every rank's {@code values} at every rank, with one rank per process: each rank writes its
     * values into its own slots of a zeroed vector, the control ring averages the vectors, and
     * multiplying by the world size gives back each value. The sum has one non-zero term per slot
     * and a double holds whole numbers exactly below 2^53, so rounding recovers them exactly.
     */
    private long[][] gather(long[] values) {
        int worldSize = placement.config().worldSize();
        int rank = placement.groupRank(0);
        double[] slots = threads.run(local -> {
            INDArray mine = Nd4j.zeros(DataType.DOUBLE, (long) worldSize * values.length);
            for (int j = 0; j < values.length; j++) {
                mine.putScalar((long) rank * values.length + j, (double) values[j]);
            }
            INDArray[] average = control.get(local).reduceGradients(mine);
            mine.close();
            double[] result = average[0].toDoubleVector();
            TensorMemory.close(average);
            return result;
        }, settings.timeout().plusSeconds(30)).get(0);
        long[][] gathered = new long[worldSize][values.length];
        for (int r = 0; r < worldSize; r++) {
            for (int j = 0; j < values.length; j++) {
                gathered[r][j] = Math.round(slots[r * values.length + j] * worldSize);
            }
        }
        return gathered;
    }

    private static List<Long> column(long[][] table, int column) {
        return Arrays.stream(table).map(row -> row[column]).toList();
    }

    /** Off-heap bytes each algorithm's aggregators hold between calls, per local rank. */
    Map<Algorithm, List<Long>> bufferBytes() {
        Map<Algorithm, List<Long>> bytes = new EnumMap<>(Algorithm.class);
        groups.forEach((algorithm, aggregators) -> bytes.put(algorithm,
                aggregators.stream().map(Algorithm::bufferBytes).toList()));
        return bytes;
    }

    @Override
    public void close() {
        groups.values().forEach(aggregators -> aggregators.forEach(GradientAggregator::close));
        communicators.forEach(Communicator::close);
        control.forEach(GradientAggregator::close);
        transports.forEach(Transport::close);
        threads.close();
    }
}
