package io.ringstar.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.Communicator;
import io.ringstar.InvalidConfigException;
import io.ringstar.ReduceOp;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * {@link SparkRanks} on {@code local[4]}: every task is a rank in this JVM, and the ranks meet over
 * Netty on loopback, as they would across executors.
 */
@Timeout(120)
class SparkRanksTest {
    /** Tensor sizes of each call: empty, one element, primes, and sizes no world size divides. */
    private static final int[] SIZES = {0, 1, 7, 13, 1031};
    private static JavaSparkContext spark;

    @BeforeAll
    static void startSpark() {
        spark = LocalSpark.start("local[4]", "SparkRanksTest");
    }

    @AfterAll
    static void stopSpark() {
        if (spark != null) {
            spark.stop();
        }
    }

    /** Rank r's element i of tensor t: distinct per rank, so a missing or doubled rank shows in the sum. */
    private static float value(int rank, int tensor, int i) {
        return (rank + 1) * 1000f + tensor * 100f + i % 97;
    }

    /** One rank's outcome: its rank, its partition's elements, and the all-reduced tensors. */
    record RankResult(int rank, int worldSize, List<Integer> partition, List<float[]> sums, String jobId)
            implements Serializable {
    }

    private static RankResult allReduce(io.ringstar.DistributedConfig config, Iterator<Integer> partition) {
        List<Integer> elements = new ArrayList<>();
        partition.forEachRemaining(elements::add);
        List<float[]> sums = new ArrayList<>();
        try (Communicator communicator = Communicator.open(config)) {
            INDArray[] tensors = new INDArray[SIZES.length];
            for (int t = 0; t < SIZES.length; t++) {
                float[] values = new float[SIZES[t]];
                for (int i = 0; i < values.length; i++) {
                    values[i] = value(config.rank(), t, i);
                }
                tensors[t] = SIZES[t] == 0 ? Nd4j.create(DataType.FLOAT, 0) : Nd4j.createFromArray(values);
            }
            communicator.allReduce(ReduceOp.SUM, tensors);
            for (INDArray tensor : tensors) {
                sums.add(tensor.length() == 0 ? new float[0] : tensor.toFloatVector());
            }
        }
        return new RankResult(config.rank(), config.worldSize(), elements, sums,
                config.option("jobId").orElse(null));
    }

    @ParameterizedTest(name = "{0} partitions")
    @ValueSource(ints = {1, 2, 3, 4})
    void allReducesExactlyWithResultsInRankOrder(int partitions) {
        List<Integer> data = IntStream.range(0, 10).boxed().toList();
        JavaRDD<Integer> rdd = spark.parallelize(data, partitions);
        List<RankResult> results = SparkRanks.run(rdd, SparkRanksTest::allReduce);

        assertEquals(partitions, results.size());
        List<List<Integer>> expectedPartitions = rdd.glom().collect();
        for (int rank = 0; rank < partitions; rank++) {
            RankResult result = results.get(rank);
            assertEquals(rank, result.rank(), "results come in rank order");
            assertEquals(partitions, result.worldSize());
            assertEquals(expectedPartitions.get(rank), result.partition(), "rank r reads partition r");
            assertEquals(results.get(0).jobId(), result.jobId(), "one job id for every rank");
            for (int t = 0; t < SIZES.length; t++) {
                float[] expected = new float[SIZES[t]];
                for (int i = 0; i < expected.length; i++) {
                    // sum over r of ((r + 1) * 1000 + t * 100 + i % 97)
                    expected[i] = 1000f * partitions * (partitions + 1) / 2 + partitions * (t * 100f + i % 97);
                }
                assertArrayEquals(expected, result.sums().get(t), "rank " + rank + ", tensor " + t);
            }
        }
    }

    @Test
    void aRankThatThrowsFailsTheJobWithItsCauseAndTheNextJobRuns() {
        JavaRDD<Integer> rdd = spark.parallelize(List.of(0, 1, 2), 3);
        long start = System.nanoTime();
        SparkRankException failure = assertThrows(SparkRankException.class, () -> SparkRanks.run(rdd,
                Map.of("timeout", "100s"), (config, partition) -> {
                    try (Communicator communicator = Communicator.open(config)) {
                        if (config.rank() == 1) {
                            throw new IllegalStateException("rank 1 gives up");
                        }
                        // Ranks 0 and 2 wait in an all-reduce that rank 1 never joins.
                        communicator.allReduce(ReduceOp.SUM, Nd4j.ones(DataType.FLOAT, 5));
                        return "unreachable";
                    }
                }));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertEquals(1, failure.rank(), failure.toString());
        assertTrue(failure.getMessage().contains("rank 1 of 3"), failure.getMessage());
        Throwable cause = failure.getCause();
        assertTrue(cause instanceof IllegalStateException && "rank 1 gives up".equals(cause.getMessage()),
                "the rank's own exception is the cause: " + cause);
        assertTrue(took.compareTo(Duration.ofSeconds(30)) < 0, "failed within seconds, not the 100 s timeout: " + took);

        // The failed job's tasks (and their transports) end, and the same context runs the next job.
        List<RankResult> next = SparkRanks.run(spark.parallelize(List.of(7, 8, 9), 3), SparkRanksTest::allReduce);
        assertEquals(3, next.size());
        assertEquals(6000f + 3 * 100f, next.get(2).sums().get(1)[0]);
        assertNoRingstarThreadsWithin(Duration.ofSeconds(10));
    }

    /** Every thread a transport started (their names begin with "ringstar") ends once the jobs have. */
    private static void assertNoRingstarThreadsWithin(Duration patience) {
        long deadline = System.nanoTime() + patience.toNanos();
        List<String> left;
        do {
            left = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                    .filter(name -> name.startsWith("ringstar")).toList();
            if (left.isEmpty()) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        } while (System.nanoTime() < deadline);
        throw new AssertionError("threads left behind by the jobs: " + left);
    }

    /** The coordinator addresses rank 0 published, by job: the tasks run in this JVM on local[4]. */
    private static final Map<String, String> PUBLISHED = new java.util.concurrent.ConcurrentHashMap<>();

    @Test
    void transportsATaskLeftOpenAreClosedAsItEndsAndRankZerosPortIsFreed() throws Exception {
        JavaRDD<Integer> rdd = spark.parallelize(List.of(0, 1, 2), 3);
        long start = System.nanoTime();
        // Rank 2 throws with its transport open (no try-with-resources): only its task's end closes it.
        SparkRankException failure = assertThrows(SparkRankException.class, () -> SparkRanks.run(rdd,
                Map.of("timeout", "100s"), (config, partition) -> {
                    Communicator communicator = Communicator.open(config);
                    if (config.rank() == 2) {
                        throw new IllegalStateException("rank 2 leaves its transport open");
                    }
                    communicator.allReduce(ReduceOp.SUM, Nd4j.ones(DataType.FLOAT, 5));
                    return "unreachable";
                }));
        assertEquals(2, failure.rank(), failure.toString());
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(30).toNanos(), "peers failed promptly");
        assertNoRingstarThreadsWithin(Duration.ofSeconds(10));

        // Rank 0 throws before it opens anything: the endpoint bound for it is released with its task.
        String job = "rank 0 gives up before opening";
        assertThrows(SparkRankException.class, () -> SparkRanks.run(rdd, Map.of("timeout", "30s"),
                (config, partition) -> {
                    if (config.rank() == 0) {
                        PUBLISHED.put(job, config.coordinatorAddr());
                        throw new IllegalStateException(job);
                    }
                    return 0;
                }));
        String address = PUBLISHED.get(job);
        int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
        assertTrue(port > 0, address);
        try (java.net.ServerSocket again = new java.net.ServerSocket()) {
            again.setReuseAddress(true);
            again.bind(new java.net.InetSocketAddress("127.0.0.1", port));
        }
    }

    @Test
    void theCallersJobGroupIsLeftAlone() {
        spark.setJobGroup("the caller's group", "the caller's description", false);
        try {
            SparkRanks.run(spark.parallelize(List.of(1, 2), 2), (config, partition) -> config.rank());
            assertEquals("the caller's group", spark.getLocalProperty("spark.jobGroup.id"));
            assertEquals("the caller's description", spark.getLocalProperty("spark.job.description"));
        } finally {
            spark.clearJobGroup();
        }
    }

    @Test
    void twoJobsHaveTheirOwnJobIds() {
        JavaRDD<Integer> rdd = spark.parallelize(List.of(1, 2), 2);
        String first = SparkRanks.run(rdd, SparkRanksTest::allReduce).get(0).jobId();
        String second = SparkRanks.run(rdd, SparkRanksTest::allReduce).get(0).jobId();
        assertNotEquals(first, second);
        assertTrue(first.startsWith(spark.sc().applicationId()), first);
    }

    @Test
    void aTaskSeesTheSecretOfTheJobButNoLogDoes() {
        List<String> seen = SparkRanks.run(spark.parallelize(List.of(1, 2), 2),
                (config, partition) -> config.option("secret").orElse("none") + "|" + config);
        String secret = seen.get(0).split("\\|")[0];
        assertEquals(64, secret.length(), "a 32-byte secret drawn on the driver: " + secret);
        assertEquals(secret, seen.get(1).split("\\|")[0], "the same for every rank");
        assertTrue(!seen.get(0).split("\\|")[1].contains(secret), "the configuration's text hides it");
    }

    @Test
    void theStageAttemptOfAFirstRunIsZero() {
        assertEquals(List.of(0, 0), SparkRanks.run(spark.parallelize(List.of(1, 2), 2),
                (config, partition) -> SparkRanks.stageAttempt()));
        assertThrows(IllegalStateException.class, SparkRanks::stageAttempt);
    }

    @Test
    void morePartitionsThanTaskSlotsAreRefusedAtOnce() {
        long start = System.nanoTime();
        InvalidConfigException refused = assertThrows(InvalidConfigException.class,
                () -> SparkRanks.run(spark.parallelize(List.of(1, 2, 3, 4, 5), 5), (config, partition) -> 0));
        assertTrue(refused.getMessage().contains("4 task slots") && refused.getMessage().contains("at most 4"),
                refused.getMessage());
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(5).toNanos(), "refused at once");
    }

    @Test
    void anRddWithoutPartitionsIsRefused() {
        InvalidConfigException refused = assertThrows(InvalidConfigException.class,
                () -> SparkRanks.run(spark.<Integer>emptyRDD(), (config, partition) -> 0));
        assertTrue(refused.getMessage().contains("no partitions"), refused.getMessage());
    }

    @Test
    void badOptionsAreRefusedOnTheDriver() {
        JavaRDD<Integer> rdd = spark.parallelize(List.of(1), 1);
        InvalidConfigException unknown = assertThrows(InvalidConfigException.class,
                () -> SparkRanks.run(rdd, Map.of("chunkByts", "1M"), (config, partition) -> 0));
        assertTrue(unknown.getMessage().contains("chunkByts"), unknown.getMessage());
        InvalidConfigException transport = assertThrows(InvalidConfigException.class,
                () -> SparkRanks.run(rdd, Map.of("transport", "carrier-pigeon"), (config, partition) -> 0));
        assertTrue(transport.getMessage().contains("carrier-pigeon"), transport.getMessage());
        assertThrows(InvalidConfigException.class,
                () -> SparkRanks.run(rdd, Map.of("timeout", "soon"), (config, partition) -> 0));
        // A network option for the in-process transport is refused, not silently dropped.
        InvalidConfigException jobId = assertThrows(InvalidConfigException.class,
                () -> SparkRanks.run(rdd, Map.of("transport", "inproc", "jobId", "mine"), (config, partition) -> 0));
        assertTrue(jobId.getMessage().contains("jobId"), jobId.getMessage());
    }

    @Test
    void theInProcessTransportFormsAGroupToo() {
        List<RankResult> results = SparkRanks.run(spark.parallelize(List.of(1, 2, 3), 3),
                Map.of("transport", "inproc", "timeout", "30s"), SparkRanksTest::allReduce);
        assertEquals(6000f + 3 * (200f + 3f), results.get(1).sums().get(2)[3]);
    }
}
