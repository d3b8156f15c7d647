package io.ringstar.transport.netty.system;

import io.ringstar.AllReduceAggregator;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.PeerFailureException;
import io.ringstar.testing.StopVote;
import io.ringstar.testing.TensorFixtures;
import io.ringstar.testing.Watchdog;
import io.ringstar.transport.netty.HandshakeException;
import io.ringstar.transport.netty.NettyTransport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One rank of a multi-process system test, in a JVM of its own ({@link RankJob} starts it). It
 * opens a {@link NettyTransport}, runs an aggregator over several tensors per call and checks every
 * element of every result against the closed form of {@link TensorFixtures}, bit for bit.
 *
 * <p>Arguments are {@code --name value} pairs: {@code rank}, {@code world-size},
 * {@code coordinators} (one {@code host:port} per algorithm, comma-separated),
 * {@code algorithms} ({@code ring} and/or {@code ps}, run one after the other, each in a group of
 * its own), {@code iterations}, {@code counts} (vector lengths, comma-separated), {@code timeout-ms},
 * and optionally {@code job}, {@code secret}, {@code secret-file}, {@code bind}, {@code chunk-bytes},
 * {@code until-stop} ({@code true}: after {@code iterations}, go on until rank 0 reads {@code STOP}),
 * {@code report-every} and {@code max-seconds}.
 *
 * <p>Lines on stdout, each flushed at once: {@code READY <rank>} once warmed up (then it waits for
 * {@code GO} on stdin, so that every rank forms its group at the same moment, however long each
 * JVM took to start); {@code LISTENING <rank> <port> <algorithm> <transport>} once the group has
 * formed; {@code ITER <rank> <algorithm> <i>} now and then; {@code OK <rank> <algorithm>
 * iterations=<n> elements=<m>}; {@code CLOSED <rank> <algorithm> ms=<t>}; {@code DONE <rank>}; or,
 * on failure, {@code FAIL <rank> <exception class> peer=<p> callMs=<t> :: <message>}.
 *
 * <p>Exit codes: {@value #EXIT_OK} ok, {@value #EXIT_OTHER} any other failure,
 * {@value #EXIT_WRONG_RESULT} a wrong element, {@value #EXIT_PEER_FAILURE}
 * {@link PeerFailureException}, {@value #EXIT_TIMEOUT} {@link CollectiveTimeoutException},
 * {@value #EXIT_HANDSHAKE} {@link HandshakeException}, {@value #EXIT_MISMATCH}
 * {@link CollectiveMismatchException}, {@value #EXIT_ORPHANED} stdin closed (the test JVM is gone),
 * {@value #EXIT_WATCHDOG} still running after {@code max-seconds}.
 */
public final class RankProcess {
    static final int EXIT_OK = 0;
    static final int EXIT_OTHER = 1;
    static final int EXIT_WRONG_RESULT = 2;
    static final int EXIT_PEER_FAILURE = 3;
    static final int EXIT_TIMEOUT = 4;
    static final int EXIT_HANDSHAKE = 5;
    static final int EXIT_MISMATCH = 6;
    static final int EXIT_ORPHANED = 9;
    static final int EXIT_WATCHDOG = 10;
    static final int EXIT_USAGE = 64;

    /** Inputs cycle through this many variants, so a stale result from the last call would be caught. */
    private static final int VARIANTS = 8;

    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    private final Map<String, String> args;
    private final int rank;
    private final int worldSize;
    private final int[] counts;
    /** Inputs by variant, then tensor; and the expected averages, same indices. */
    private final INDArray[][] inputs = new INDArray[VARIANTS][];
    private final double[][][] expectedAverages = new double[VARIANTS][][];
    private final CountDownLatch go = new CountDownLatch(1);
    private volatile boolean stopRequested;
    private long callStart = System.nanoTime();

    private RankProcess(Map<String, String> args) {
        this.args = args;
        this.rank = Integer.parseInt(required("rank"));
        this.worldSize = Integer.parseInt(required("world-size"));
        this.counts = Arrays.stream(args.getOrDefault("counts", "0,1,1009,1001").split(","))
                .mapToInt(text -> Integer.parseInt(text.trim())).toArray();
    }

    public static void main(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                OUT.println("USAGE expected --name value pairs, got " + Arrays.toString(argv));
                Runtime.getRuntime().halt(EXIT_USAGE);
            }
            args.put(argv[i].substring(2), argv[i + 1]);
        }
        RankProcess process = new RankProcess(args);
        int code = process.run();
        OUT.flush();
        // halt, not exit: every transport is closed by now, and ND4J's shutdown hooks only add time.
        Runtime.getRuntime().halt(code);
    }

    private int run() {
        watchStdin();
        Watchdog.start("rank " + rank, Integer.parseInt(args.getOrDefault("max-seconds", "150")), OUT, EXIT_WATCHDOG);
        try {
            prepareTensors();
            OUT.println("READY " + rank);
            if (!go.await(120, TimeUnit.SECONDS)) {
                OUT.println("FAIL " + rank + " NoGo peer=-1 callMs=0 :: no GO on stdin within 120 s");
                return EXIT_OTHER;
            }
            String[] algorithms = required("algorithms").split(",");
            String[] coordinators = required("coordinators").split(",");
            if (algorithms.length != coordinators.length) {
                throw new IllegalArgumentException("one coordinator per algorithm: " + Arrays.toString(algorithms)
                        + " vs " + Arrays.toString(coordinators));
            }
            for (int i = 0; i < algorithms.length; i++) {
                runGroup(algorithms[i].trim(), coordinators[i].trim());
            }
            OUT.println("DONE " + rank);
            return EXIT_OK;
        } catch (Throwable e) {
            return report(e);
        }
    }

    private void runGroup(String algorithm, String coordinator) {
        DistributedConfig.Builder builder = DistributedConfig.builder()
                .worldSize(worldSize).rank(rank).coordinatorAddr(coordinator).transport(NettyTransport.NAME)
                .timeout(Duration.ofMillis(Long.parseLong(required("timeout-ms"))))
                .option(NettyTransport.JOB_ID_OPTION, args.getOrDefault("job", "system") + "-" + algorithm);
        copyOption(builder, "secret", NettyTransport.SECRET_OPTION);
        copyOption(builder, "secret-file", NettyTransport.SECRET_FILE_OPTION);
        copyOption(builder, "bind", NettyTransport.BIND_OPTION);
        copyOption(builder, "chunk-bytes", AllReduceAggregator.CHUNK_BYTES_OPTION);
        DistributedConfig config = builder.build();

        callStart = System.nanoTime();
        NettyTransport transport = new NettyTransport(config);
        GradientAggregator aggregator = null;
        try {
            OUT.println("LISTENING " + rank + " " + transport.listenPort() + " " + algorithm + " " + transport);
            aggregator = switch (algorithm) {
                case "ring" -> new AllReduceAggregator(config, transport);
                case "ps" -> new ParameterServer(config, transport);
                default -> throw new IllegalArgumentException("algorithm must be ring or ps, was " + algorithm);
            };
            String counted = loop(algorithm, aggregator);
            OUT.println("OK " + rank + " " + algorithm + " " + counted);
        } catch (Throwable e) {
            // Report before closing: closing may take a moment, and the test times the report.
            int code = report(e);
            close(aggregator, transport, algorithm);
            OUT.flush();
            Runtime.getRuntime().halt(code);
        }
        close(aggregator, transport, algorithm);
    }

    /** Runs the calls; returns "iterations=<n> elements=<m>" for the OK line. */
    private String loop(String algorithm, GradientAggregator aggregator) {
        int iterations = Integer.parseInt(required("iterations"));
        boolean untilStop = Boolean.parseBoolean(args.getOrDefault("until-stop", "false"));
        int reportEvery = Integer.parseInt(args.getOrDefault("report-every", "100"));
        long checked = 0;

        callStart = System.nanoTime();
        INDArray[] broadcast = aggregator.broadcastParams(inputs[0]);
        for (int t = 0; t < broadcast.length; t++) {
            int id = tensorId(0, t);
            checked += check("broadcastParams", 0, t, broadcast[t], inputs[0][t], i -> TensorFixtures.value(0, id, i));
        }

        int iteration = 0;
        while (true) {
            if (iteration % reportEvery == 0) {
                OUT.println("ITER " + rank + " " + algorithm + " " + iteration);
            }
            int variant = iteration % VARIANTS;
            callStart = System.nanoTime();
            INDArray[] averaged = aggregator.reduceGradients(inputs[variant]);
            for (int t = 0; t < averaged.length; t++) {
                double[] expected = expectedAverages[variant][t];
                checked += check("reduceGradients #" + iteration, variant, t, averaged[t], inputs[variant][t],
                        i -> expected[(int) i]);
            }
            iteration++;
            if (!untilStop) {
                if (iteration >= iterations) {
                    return "iterations=" + iteration + " elements=" + checked;
                }
                continue;
            }
            callStart = System.nanoTime();
            if (StopVote.decide(aggregator, rank, stopRequested && iteration >= iterations)) {
                return "iterations=" + iteration + " elements=" + checked;
            }
        }
    }

    @FunctionalInterface
    private interface Expected {
        double at(long index);
    }

    /** Checks one result against its closed form, element by element; returns the element count. */
    private long check(String call, int variant, int t, INDArray result, INDArray input, Expected expected) {
        String what = call + " on rank " + rank + ", variant " + variant + ", tensor " + t;
        if (result.dataType() != input.dataType() || !Arrays.equals(result.shape(), input.shape())) {
            throw new WrongResult(what + ": " + result.dataType() + Arrays.toString(result.shape()) + " where "
                    + input.dataType() + Arrays.toString(input.shape()) + " was due");
        }
        double[] actual = TensorFixtures.values(result);
        for (int i = 0; i < actual.length; i++) {
            double want = input.dataType() == DataType.FLOAT ? (float) expected.at(i) : expected.at(i);
            if (Double.doubleToRawLongBits(actual[i]) != Double.doubleToRawLongBits(want)) {
                throw new WrongResult(what + ": element " + i + " is " + actual[i] + ", expected " + want);
            }
        }
        return actual.length;
    }

    /**
     * Per variant: one vector per count (FLOAT and DOUBLE alternating, so every call mixes both
     * types), then a scalar and a 3x7 matrix in 'f' order.
     */
    private void prepareTensors() {
        for (int variant = 0; variant < VARIANTS; variant++) {
            List<INDArray> tensors = new ArrayList<>();
            for (int t = 0; t < counts.length; t++) {
                tensors.add(TensorFixtures.filled(typeOf(t), rank, tensorId(variant, t), counts[t]));
            }
            int scalar = counts.length;
            tensors.add(TensorFixtures.filled(typeOf(scalar), rank, tensorId(variant, scalar)));
            int matrix = counts.length + 1;
            tensors.add(TensorFixtures.filled(typeOf(matrix), rank, tensorId(variant, matrix), 3, 7).dup('f'));
            inputs[variant] = tensors.toArray(new INDArray[0]);
            expectedAverages[variant] = new double[tensors.size()][];
            for (int t = 0; t < tensors.size(); t++) {
                double[] expected = new double[(int) tensors.get(t).length()];
                for (int i = 0; i < expected.length; i++) {
                    expected[i] = TensorFixtures.average(worldSize, tensorId(variant, t), i);
                }
                expectedAverages[variant][t] = expected;
            }
        }
    }

    private static DataType typeOf(int t) {
        return t % 2 == 0 ? DataType.FLOAT : DataType.DOUBLE;
    }

    /** Distinct per variant and tensor; small enough that every value and sum stays exact in float. */
    private static int tensorId(int variant, int t) {
        return variant * 16 + t;
    }

    private void close(GradientAggregator aggregator, NettyTransport transport, String algorithm) {
        long start = System.nanoTime();
        try {
            if (aggregator != null) {
                aggregator.close();
            } else {
                transport.close();
            }
        } catch (RuntimeException e) {
            OUT.println("CLOSE-FAILED " + rank + " " + algorithm + " " + oneLine(e.toString()));
        }
        OUT.println("CLOSED " + rank + " " + algorithm + " ms=" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }

    private int report(Throwable e) {
        long callMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - callStart);
        int peer = e instanceof CollectiveException collective ? collective.peerRank() : CollectiveException.NO_RANK;
        OUT.println("FAIL " + rank + " " + e.getClass().getSimpleName() + " peer=" + peer + " callMs=" + callMs
                + " :: " + oneLine(String.valueOf(e.getMessage())));
        if (!(e instanceof CollectiveException) && !(e instanceof WrongResult) && !(e instanceof AssertionError)) {
            e.printStackTrace(OUT);
        }
        if (e instanceof WrongResult || e instanceof AssertionError) {
            return EXIT_WRONG_RESULT;
        }
        if (e instanceof PeerFailureException) {
            return EXIT_PEER_FAILURE;
        }
        if (e instanceof CollectiveTimeoutException) {
            return EXIT_TIMEOUT;
        }
        if (e instanceof HandshakeException) {
            return EXIT_HANDSHAKE;
        }
        if (e instanceof CollectiveMismatchException) {
            return EXIT_MISMATCH;
        }
        return EXIT_OTHER;
    }

    /** GO starts the group, STOP ends an until-stop loop, and end of input means the test JVM is gone. */
    private void watchStdin() {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    switch (line.trim()) {
                        case "GO" -> go.countDown();
                        case "STOP" -> stopRequested = true;
                        default -> OUT.println("IGNORED " + rank + " " + line);
                    }
                }
            } catch (IOException e) {
                // treated as the end of input
            }
            OUT.println("ORPHANED " + rank + ": stdin closed");
            Runtime.getRuntime().halt(EXIT_ORPHANED);
        }, "stdin-watch");
        reader.setDaemon(true);
        reader.start();
    }

    private String required(String name) {
        String value = args.get(name);
        if (value == null) {
            OUT.println("USAGE missing --" + name);
            Runtime.getRuntime().halt(EXIT_USAGE);
        }
        return value;
    }

    private void copyOption(DistributedConfig.Builder builder, String arg, String option) {
        String value = args.get(arg);
        if (value != null) {
            builder.option(option, value);
        }
    }

    private static String oneLine(String text) {
        return text.replace('\n', ' ').replace('\r', ' ');
    }

    /** A result that differs from its closed form. */
    static final class WrongResult extends RuntimeException {
        WrongResult(String message) {
            super(message);
        }
    }
}
