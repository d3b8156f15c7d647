package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveMismatchException;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.ParameterServer;
import io.ringstar.PeerFailureException;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.internal.tensor.TensorMemory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The sharded star ({@value ParameterServer#SERVERS_OPTION} = 1 … n): every number of servers gives
 * the same bits as one server, on every rank, for the parameter server's average (out of place) and
 * for the communicator's star all-reduce with every op (in place, where a server other than rank 0
 * must keep its own values until their turn); the broadcast reaches every rank; a server that dies
 * fails every rank naming it; ranks that disagree on the number get a mismatch.
 *
 * <p>Values are random, so that a change in the order of the additions would change bits; tiny
 * chunks make many partitions, so that every rank serves several and sends ahead across its own.
 * Each transport runs this suite through a subclass.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ShardedStarConformanceTest {
    private static final Duration LIMIT = Duration.ofSeconds(60);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
    /** Lengths of one call's tensors: empty, one, a prime, one not divisible by any world size here, a larger one. */
    private static final int[] LENGTHS = {0, 1, 7, 1031, 4_001};
    /** 64 bytes: 16 floats per partition, so the call above makes hundreds of partitions. */
    private static final String TINY_CHUNKS = "64";

    private final ReusedGroup reused = new ReusedGroup(this::createGroup, CALL_TIMEOUT);

    /** A group of {@code worldSize} connected transports, element {@code r} for rank {@code r}. */
    protected abstract List<Transport> createGroup(int worldSize, Duration timeout);

    /** World sizes the sweeps cover. */
    protected int[] worldSizes() {
        return new int[] {3, 4, 5};
    }

    /**
     * Whether the communicator's in-place star runs every op with every element type (15 pairs,
     * each with 1 to 4 servers), or, where each of its hundreds of tiny partitions costs a real
     * message round trip, every op with floats and every type with the sum (7 pairs): each op and
     * each element width still meets every number of servers.
     */
    protected boolean everyOpWithEveryType() {
        return true;
    }

    @AfterAll
    void closeReusedGroup() {
        reused.close();
    }

    private static DistributedConfig config(int worldSize, int rank, int servers, Map<String, String> options) {
        DistributedConfig.Builder builder = DistributedConfig.builder().worldSize(worldSize).rank(rank)
                .timeout(CALL_TIMEOUT).option(ParameterServer.SERVERS_OPTION, Integer.toString(servers))
                .option("chunkBytes", TINY_CHUNKS);
        options.forEach(builder::option);
        return builder.build();
    }

    /** Random values, different for every rank and tensor, the same for every run. */
    private static INDArray[] randomTensors(DataType type, int rank) {
        INDArray[] tensors = new INDArray[LENGTHS.length];
        Random random = new Random(1_000L * rank + 17);
        for (int t = 0; t < tensors.length; t++) {
            double[] values = new double[LENGTHS[t]];
            for (int i = 0; i < values.length; i++) {
                values[i] = (random.nextDouble() - 0.5) * Math.scalb(1.0, random.nextInt(9) - 4);
            }
            tensors[t] = values.length == 0 ? Nd4j.create(type, 0) : Nd4j.create(values, new long[] {values.length},
                    'c').castTo(type);
        }
        return tensors;
    }

    private static byte[][] bits(INDArray[] tensors) {
        byte[][] bits = new byte[tensors.length][];
        for (int t = 0; t < tensors.length; t++) {
            int bytes = Math.toIntExact(tensors[t].length() * tensors[t].dataType().width());
            bits[t] = new byte[bytes];
            if (bytes > 0) {
                ByteBuffer view = TensorMemory.bytes(tensors[t], 0, bytes);
                view.get(0, bits[t]);
            }
        }
        return bits;
    }

    /** Each rank's result bits of {@code call} on every rank's random tensors, over a reused group. */
    private List<byte[][]> run(int worldSize, int servers, Map<String, String> options,
            Function<Rank, INDArray[]> call) {
        List<Transport> transports = reused.of(worldSize);
        boolean clean = false;
        try {
            List<Ranks.Outcome<byte[][]>> outcomes = Ranks.run(worldSize, LIMIT, rank -> {
                DistributedConfig config = config(worldSize, rank, servers, options);
                try (Rank r = new Rank(config, Transports.borrowed(transports.get(rank)))) {
                    INDArray[] results = call.apply(r);
                    byte[][] bits = bits(results);
                    TensorMemory.close(results);
                    return bits;
                }
            });
            List<byte[][]> bits = new ArrayList<>();
            for (Ranks.Outcome<byte[][]> outcome : outcomes) {
                bits.add(outcome.valueOrFail());
            }
            clean = true;
            return bits;
        } finally {
            if (!clean) {
                reused.discard();
            }
        }
    }

    /** One rank's config and transport, with the parameter server or communicator a case makes of them. */
    private static final class Rank implements AutoCloseable {
        final DistributedConfig config;
        final Transport transport;
        AutoCloseable made;

        Rank(DistributedConfig config, Transport transport) {
            this.config = config;
            this.transport = transport;
        }

        ParameterServer parameterServer() {
            ParameterServer server = new ParameterServer(config, transport);
            made = server;
            return server;
        }

        Communicator communicator() {
            Communicator communicator = new Communicator(config, transport);
            made = communicator;
            return communicator;
        }

        int rank() {
            return config.rank();
        }

        @Override
        public void close() throws Exception {
            if (made != null) {
                made.close();
            }
        }
    }

    private static void assertSameBits(List<byte[][]> expected, List<byte[][]> actual, String what) {
        for (int rank = 0; rank < actual.size(); rank++) {
            for (int t = 0; t < LENGTHS.length; t++) {
                assertArrayEquals(expected.get(0)[t], actual.get(rank)[t], what + ": rank " + rank + ", tensor " + t
                        + " (" + LENGTHS[t] + " elements) differs from rank 0 with one server");
            }
        }
    }

    @TestFactory
    List<DynamicTest> theAverageHasTheSameBitsWhateverTheServers() {
        List<DynamicTest> tests = new ArrayList<>();
        for (int worldSize : worldSizes()) {
            for (DataType type : new DataType[] {DataType.FLOAT, DataType.DOUBLE, DataType.HALF, DataType.BFLOAT16}) {
                tests.add(DynamicTest.dynamicTest("n=" + worldSize + " " + type, () -> {
                    Function<Rank, INDArray[]> average = r -> r.parameterServer().reduceGradients(
                            randomTensors(type, r.rank()));
                    List<byte[][]> one = run(worldSize, 1, Map.of(), average);
                    checkAverage(one, worldSize, type);
                    for (int servers = 2; servers <= worldSize; servers++) {
                        assertSameBits(one, run(worldSize, servers, Map.of(), average), servers + " servers");
                    }
                }));
            }
        }
        return tests;
    }

    @TestFactory
    List<DynamicTest> reduceGradientsIntoHasTheAveragesBitsWhateverTheServers() {
        // The smallest world size: the servers' paths are the same for the others.
        int worldSize = worldSizes()[0];
        List<DynamicTest> tests = new ArrayList<>();
        for (DataType type : new DataType[] {DataType.FLOAT, DataType.HALF}) {
            tests.add(DynamicTest.dynamicTest("n=" + worldSize + " " + type, () -> {
                List<byte[][]> one = run(worldSize, 1, Map.of(),
                        r -> r.parameterServer().reduceGradients(randomTensors(type, r.rank())));
                checkAverage(one, worldSize, type);
                for (int servers = 1; servers <= worldSize; servers++) {
                    // Apart, into new arrays; and in place, the inputs being the results.
                    assertSameBits(one, run(worldSize, servers, Map.of(), r -> {
                        INDArray[] inputs = randomTensors(type, r.rank());
                        INDArray[] results = new INDArray[inputs.length];
                        for (int t = 0; t < inputs.length; t++) {
                            results[t] = Nd4j.create(type, inputs[t].shape());
                        }
                        r.parameterServer().reduceGradientsInto(inputs, results);
                        TensorMemory.close(inputs);
                        return results;
                    }), "reduceGradientsInto apart with " + servers + " servers");
                    assertSameBits(one, run(worldSize, servers, Map.of(), r -> {
                        INDArray[] inputs = randomTensors(type, r.rank());
                        r.parameterServer().reduceGradientsInto(inputs, inputs);
                        return inputs;
                    }), "reduceGradientsInto in place with " + servers + " servers");
                }
            }));
        }
        return tests;
    }

    /** Rank 0's result with one server against the float64 average, within the type's rounding. */
    private static void checkAverage(List<byte[][]> results, int worldSize, DataType type) {
        double[][] sum = new double[LENGTHS.length][];
        double[][] magnitude = new double[LENGTHS.length][];
        for (int t = 0; t < LENGTHS.length; t++) {
            sum[t] = new double[LENGTHS[t]];
            magnitude[t] = new double[LENGTHS[t]];
        }
        for (int rank = 0; rank < worldSize; rank++) {
            INDArray[] inputs = randomTensors(type, rank);
            for (int t = 0; t < LENGTHS.length; t++) {
                for (int i = 0; i < LENGTHS[t]; i++) {
                    double x = inputs[t].getDouble(i);
                    sum[t][i] += x;
                    magnitude[t][i] += Math.abs(x);
                }
            }
            TensorMemory.close(inputs);
        }
        double unit = type == DataType.DOUBLE ? 0x1p-53 : type == DataType.FLOAT ? 0x1p-24
                : type == DataType.HALF ? 0x1p-11 : 0x1p-8;
        for (int t = 0; t < LENGTHS.length; t++) {
            if (LENGTHS[t] == 0) {
                assertEquals(0, results.get(0)[t].length);
                continue;
            }
            INDArray result = Nd4j.create(type, LENGTHS[t]);
            TensorMemory.bytes(result, 0, results.get(0)[t].length).put(0, results.get(0)[t]);
            for (int i = 0; i < LENGTHS[t]; i++) {
                double expected = sum[t][i] / worldSize;
                double bound = (worldSize + 1) * unit * magnitude[t][i] / worldSize + Double.MIN_NORMAL;
                assertEquals(expected, result.getDouble(i), bound, type + " tensor " + t + " element " + i);
            }
            result.close();
        }
    }

    @Test
    void theCommunicatorsStarHasTheSameBitsInPlaceWhateverTheServers() {
        int worldSize = 4;
        Map<String, String> star = Map.of(AggregatorOptions.ALL_REDUCE_ALGORITHM.name(), Communicator.ALGORITHM_STAR);
        for (ReduceOp op : ReduceOp.values()) {
            for (DataType type : new DataType[] {DataType.FLOAT, DataType.DOUBLE, DataType.HALF}) {
                if (!everyOpWithEveryType() && type != DataType.FLOAT && op != ReduceOp.SUM) {
                    continue;
                }
                Function<Rank, INDArray[]> allReduce = r -> {
                    INDArray[] tensors = randomTensors(type, r.rank());
                    r.communicator().allReduce(op, tensors);
                    return tensors;
                };
                List<byte[][]> one = run(worldSize, 1, star, allReduce);
                for (int servers = 2; servers <= worldSize; servers++) {
                    assertSameBits(one, run(worldSize, servers, star, allReduce), op + " " + type + " with "
                            + servers + " servers");
                }
            }
        }
    }

    @Test
    void theBroadcastReachesEveryRankWhateverTheServers() {
        int worldSize = 4;
        for (int servers = 1; servers <= worldSize; servers++) {
            List<byte[][]> results = run(worldSize, servers, Map.of(),
                    r -> r.parameterServer().broadcastParams(randomTensors(DataType.FLOAT, r.rank())));
            INDArray[] rootValues = randomTensors(DataType.FLOAT, 0);
            byte[][] expected = bits(rootValues);
            TensorMemory.close(rootValues);
            for (int rank = 0; rank < worldSize; rank++) {
                for (int t = 0; t < LENGTHS.length; t++) {
                    assertArrayEquals(expected[t], results.get(rank)[t], servers + " servers: rank " + rank
                            + ", tensor " + t + " is not rank 0's");
                }
            }
        }
    }

    /**
     * A parameter server per rank over a group of its own, rank r with {@code serversOf(r)} servers;
     * each owns its transport, so closing the servers closes the group.
     */
    private List<ParameterServer> parameterServers(int worldSize, IntUnaryOperator serversOf,
            Map<String, String> options) {
        List<Transport> transports = createGroup(worldSize, CALL_TIMEOUT);
        List<ParameterServer> servers = new ArrayList<>();
        for (int rank = 0; rank < worldSize; rank++) {
            servers.add(new ParameterServer(config(worldSize, rank, serversOf.applyAsInt(rank), options),
                    transports.get(rank)));
        }
        return servers;
    }

    @Test
    void aServerThatDiesFailsEveryOtherRankNamingIt() {
        int worldSize = 4;
        List<ParameterServer> servers = parameterServers(worldSize, rank -> 3, Map.of("chunkBytes", "4096"));
        try {
            List<Ranks.Outcome<Object>> outcomes = Ranks.run(worldSize, LIMIT, rank -> {
                if (rank == 2) {
                    Thread.sleep(300);
                    servers.get(2).close();
                    return null;
                }
                try (INDArray input = Nd4j.rand(DataType.FLOAT, 2_000_000)) {
                    for (int call = 0; call < 1_000; call++) {
                        TensorMemory.close(servers.get(rank).reduceGradients(input));
                    }
                }
                return "every call completed with server rank 2 closed";
            });
            for (int rank : new int[] {0, 1, 3}) {
                Ranks.Outcome<Object> outcome = outcomes.get(rank);
                assertNotNull(outcome.error, "rank " + rank + ": " + outcome.value);
                PeerFailureException e = assertInstanceOf(PeerFailureException.class, outcome.error,
                        "rank " + rank + ": " + outcome.error);
                assertEquals(2, e.peerRank(), e.getMessage());
                assertTrue(outcome.elapsed.compareTo(Duration.ofSeconds(15)) < 0,
                        "rank " + rank + " took " + outcome.elapsed + " against a " + CALL_TIMEOUT + " timeout");
            }
        } finally {
            servers.forEach(ParameterServer::close);
        }
    }

    @Test
    void ranksThatDisagreeOnTheServersFailWithAMismatch() {
        int worldSize = 3;
        List<ParameterServer> servers = parameterServers(worldSize, rank -> rank == 1 ? 2 : 1, Map.of());
        try {
            List<Ranks.Outcome<Object>> outcomes = Ranks.run(worldSize, LIMIT,
                    rank -> servers.get(rank).reduceGradients(randomTensors(DataType.FLOAT, rank)));
            for (Ranks.Outcome<Object> outcome : outcomes) {
                CollectiveMismatchException e = assertInstanceOf(CollectiveMismatchException.class, outcome.error,
                        "rank " + outcome.rank + ": " + outcome.error);
                assertTrue(e.getMessage().contains("servers"), e.getMessage());
                assertTrue(outcome.elapsed.compareTo(Duration.ofSeconds(15)) < 0,
                        "rank " + outcome.rank + " took " + outcome.elapsed);
            }
        } finally {
            servers.forEach(ParameterServer::close);
        }
    }

    @Test
    void moreServersThanRanksIsRefusedNamingTheOption() {
        List<Transport> transports = createGroup(2, CALL_TIMEOUT);
        try {
            InvalidConfigException e = assertThrows(InvalidConfigException.class,
                    () -> new ParameterServer(config(2, 0, 3, Map.of()), transports.get(0)));
            assertTrue(e.getMessage().contains(ParameterServer.SERVERS_OPTION), e.getMessage());
            assertTrue(e.getMessage().contains("world size 2"), e.getMessage());
        } finally {
            transports.forEach(Transport::close);
        }
    }

    @Test
    void theOptionIsListedWithTheOthers() {
        assertTrue(AggregatorOptions.ALL.contains(AggregatorOptions.SERVERS));
        assertEquals(1, AggregatorOptions.SERVERS.value(DistributedConfig.builder().worldSize(1).rank(0).build()));
        assertTrue(Transports.options().contains(AggregatorOptions.SERVERS), "Transports.options() lists it");
    }
}
