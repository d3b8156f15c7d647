package io.ringstar.testing;

import static io.ringstar.testing.RankMain.OUT;

import io.ringstar.AllReduceAggregator;
import io.ringstar.CollectiveException;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.spi.PeerTransport;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One run of a {@link RankMain}: opens a transport through {@link Transports#open}, forms a group and
 * runs a loop of calls on it. Per iteration, {@code reduceGradients} on every algorithm named
 * ({@code ring} = {@link AllReduceAggregator}, {@code ps} = {@link ParameterServer}, both over the one
 * transport), the five tensors of {@link TensorFixtures#callTensors} (FLOAT and DOUBLE in turn), each
 * result checked element by element against its closed form, and every {@code broadcast-every}
 * iterations a checked {@code broadcastParams} too.
 *
 * <p>Keys: {@code transport}, {@code rank}, {@code world-size}, {@code coordinator},
 * {@code timeout-ms} (default 5000), {@code job} (the job id), {@code algorithms} (comma-separated;
 * default {@code ring,ps}), {@code iterations} (default 10), {@code until-stop}, {@code counts}
 * (vector lengths cycled through), {@code report-every}, {@code broadcast-every} (default 0: never),
 * {@code pause-after} (iterations after which to print {@code PAUSED} and wait for {@code RESUME}),
 * {@code then} ({@code exit} or {@code wait}), {@code skew} (this rank calls differently:
 * {@code operation} = broadcastParams where the others reduce, {@code shape} = a vector one element
 * longer, {@code tensors} = one tensor fewer, {@code sequence} = from iteration 1 on, aggregators whose
 * call numbers start again at 0), and {@code option.<name>} for any transport or aggregator option.
 *
 * <p>Lines: {@code FORMED <rank> ms=<t> shm=[<peers>]} once the group formed (the peers it reaches
 * through shared memory); {@code LISTENING <rank> <port>
 * <transport>} if the transport has a {@code listenPort()}, {@code IPC <rank> [<peers>]} if it has a
 * {@code usesIpc(int)}; {@code ITER <rank> <i>}; {@code OK <rank> iterations=<n> elements=<m>}, or on
 * failure {@code FAIL rank=<r> peer=<p> op="<operation>" <exception class> :: <message>}, printed
 * before closing (closing can take a moment, and tests time this line); then {@code CLOSED <rank> ms=<t>}.
 */
final class RankRun {
    /** What the stdin reader tells a running loop. */
    static final class Signals {
        private volatile boolean stopRequested;
        private volatile CountDownLatch resume = new CountDownLatch(1);

        void stop() {
            stopRequested = true;
        }

        void resume() {
            resume.countDown();
        }

        private void reset() {
            stopRequested = false;
            resume = new CountDownLatch(1);
        }
    }

    private final Map<String, String> settings;
    private final Signals signals;
    private String operation = "forming the group";

    private RankRun(Map<String, String> settings, Signals signals) {
        this.settings = settings;
        this.signals = signals;
    }

    /** Runs once with {@code settings}; returns the exit status ({@link RankMain#EXIT_OK} and so on). */
    static int run(Map<String, String> settings, Signals signals) {
        signals.reset();
        return new RankRun(settings, signals).run();
    }

    private int run() {
        int rank = Integer.parseInt(required("rank"));
        long start = System.nanoTime();
        Transport transport = null;
        List<GradientAggregator> aggregators = new ArrayList<>();
        int status;
        try {
            DistributedConfig config = config(rank);
            transport = Transports.open(config);
            String shared = transport instanceof PeerTransport peers
                    ? peers.sharedMemoryPeers().toString().replace(" ", "") : "[]";
            OUT.println("FORMED " + rank + " ms=" + millisSince(start) + " shm=" + shared);
            describe(transport);
            String[] algorithms = settings.getOrDefault("algorithms", "ring,ps").split(",");
            // With skew=sequence a second set, numbered from 0 again, takes over from iteration 1.
            int sets = settings.getOrDefault("skew", "none").equals("sequence") ? 2 : 1;
            for (int set = 0; set < sets; set++) {
                for (String algorithm : algorithms) {
                    Transport lent = Transports.borrowed(transport);
                    aggregators.add(switch (algorithm) {
                        case "ps" -> new ParameterServer(config, lent);
                        case "ring" -> new AllReduceAggregator(config, lent);
                        default -> throw new IllegalArgumentException("algorithm must be ring or ps, was " + algorithm);
                    });
                }
            }
            OUT.println("OK " + rank + " " + loop(config, algorithms, aggregators));
            status = RankMain.EXIT_OK;
        } catch (Throwable e) {
            status = report(rank, e);
        }
        long closing = System.nanoTime();
        for (GradientAggregator aggregator : aggregators) {
            closeQuietly(rank, aggregator);
        }
        if (transport != null) {
            closeQuietly(rank, transport);
        }
        OUT.println("CLOSED " + rank + " ms=" + millisSince(closing));
        return status;
    }

    private DistributedConfig config(int rank) {
        DistributedConfig.Builder builder = DistributedConfig.builder()
                .worldSize(Integer.parseInt(required("world-size")))
                .rank(rank)
                .coordinatorAddr(required("coordinator"))
                .transport(required("transport"))
                .timeout(Duration.ofMillis(Long.parseLong(settings.getOrDefault("timeout-ms", "5000"))))
                .option("jobId", settings.getOrDefault("job", "system"));
        settings.forEach((key, value) -> {
            if (key.startsWith("option.")) {
                builder.option(key.substring("option.".length()), value);
            }
        });
        return builder.build();
    }

    /** What the transport can tell of itself beyond the SPI: Netty its port, Aeron which peers it reaches by IPC. */
    private static void describe(Transport transport) throws ReflectiveOperationException {
        int rank = transport.rank();
        Method listenPort = publicMethod(transport, "listenPort");
        if (listenPort != null) {
            OUT.println("LISTENING " + rank + " " + listenPort.invoke(transport) + " " + transport);
        }
        Method usesIpc = publicMethod(transport, "usesIpc", int.class);
        if (usesIpc != null) {
            List<Integer> ipcPeers = new ArrayList<>();
            for (int peer = 0; peer < transport.worldSize(); peer++) {
                if (peer != rank && (Boolean) usesIpc.invoke(transport, peer)) {
                    ipcPeers.add(peer);
                }
            }
            OUT.println("IPC " + rank + " " + ipcPeers);
        }
    }

    private static Method publicMethod(Object target, String name, Class<?>... parameters) {
        try {
            return target.getClass().getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private String loop(DistributedConfig config, String[] algorithms, List<GradientAggregator> aggregators)
            throws InterruptedException {
        int rank = config.rank();
        int worldSize = config.worldSize();
        int iterations = Integer.parseInt(settings.getOrDefault("iterations", "10"));
        boolean untilStop = Boolean.parseBoolean(settings.getOrDefault("until-stop", "false"));
        int reportEvery = Integer.parseInt(settings.getOrDefault("report-every", "10"));
        int broadcastEvery = Integer.parseInt(settings.getOrDefault("broadcast-every", "0"));
        int pauseAfter = Integer.parseInt(settings.getOrDefault("pause-after", "-1"));
        String skew = settings.getOrDefault("skew", "none");
        int[] counts = Arrays.stream(settings.getOrDefault("counts", "1009,0,65537,7").split(","))
                .mapToInt(text -> Integer.parseInt(text.trim())).toArray();
        long checked = 0;
        int iteration = 0;
        while (true) {
            if (iteration % reportEvery == 0) {
                OUT.println("ITER " + rank + " " + iteration);
            }
            if (iteration == pauseAfter) {
                OUT.println("PAUSED " + rank + " " + iteration);
                signals.resume.await();
            }
            DataType type = iteration % 2 == 0 ? DataType.FLOAT : DataType.DOUBLE;
            int count = counts[iteration % counts.length];
            int first = skew.equals("sequence") && iteration >= 1 ? algorithms.length : 0;
            for (int a = 0; a < algorithms.length; a++) {
                GradientAggregator aggregator = aggregators.get(first + a);
                INDArray[] inputs = TensorFixtures.callTensors(type, rank, count + (skew.equals("shape") ? 1 : 0));
                if (skew.equals("tensors")) {
                    inputs = Arrays.copyOf(inputs, inputs.length - 1);
                }
                String call = algorithms[a] + ", iteration " + iteration;
                if (skew.equals("operation")) {
                    operation = "broadcastParams (" + call + ")";
                    aggregator.broadcastParams(inputs);
                    continue;
                }
                operation = "reduceGradients (" + call + ")";
                INDArray[] averaged = aggregator.reduceGradients(inputs);
                checked += ClosedForm.elements(ClosedForm.check(operation, rank, averaged, inputs, type,
                        (t, i) -> TensorFixtures.average(worldSize, t, i)));
                if (broadcastEvery > 0 && iteration % broadcastEvery == 0) {
                    operation = "broadcastParams (" + call + ")";
                    INDArray[] broadcast = aggregator.broadcastParams(inputs);
                    checked += ClosedForm.elements(ClosedForm.check(operation, rank, broadcast, inputs, type,
                            (t, i) -> TensorFixtures.value(0, t, i)));
                }
            }
            iteration++;
            if (!untilStop) {
                if (iteration >= iterations) {
                    return "iterations=" + iteration + " elements=" + checked;
                }
                continue;
            }
            operation = "broadcastParams (stop flag, iteration " + iteration + ")";
            if (StopVote.decide(aggregators.get(0), rank, signals.stopRequested && iteration >= iterations)) {
                return "iterations=" + iteration + " elements=" + checked;
            }
        }
    }

    /** Prints the one-line error; returns the exit status for its kind. */
    private int report(int rank, Throwable e) {
        int peer = e instanceof CollectiveException collective ? collective.peerRank() : CollectiveException.NO_RANK;
        OUT.println("FAIL rank=" + rank + " peer=" + peer + " op=\"" + operation + "\" "
                + e.getClass().getSimpleName() + " :: " + String.valueOf(e.getMessage()).replace('\n', ' '));
        if (!(e instanceof CollectiveException) && !(e instanceof AssertionError)) {
            e.printStackTrace(OUT);
        }
        return RankMain.statusOf(e);
    }

    private String required(String key) {
        String value = settings.get(key);
        if (value == null) {
            throw new IllegalArgumentException("the run needs " + key + "=<value>; it has " + settings.keySet());
        }
        return value;
    }

    private static void closeQuietly(int rank, AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            OUT.println("CLOSE-FAILED " + rank + " " + String.valueOf(e).replace('\n', ' '));
        }
    }

    private static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
