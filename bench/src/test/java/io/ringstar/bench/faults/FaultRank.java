package io.ringstar.bench.faults;

import io.ringstar.AllReduceAggregator;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.testing.ClosedForm;
import io.ringstar.testing.StopVote;
import io.ringstar.testing.TensorFixtures;
import io.ringstar.testing.Watchdog;
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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One rank of the fault suite, in a JVM of its own ({@link FaultJob} starts it). It warms up ND4J,
 * prints {@code READY <name> pid=<pid>} and then obeys lines on stdin:
 * <ul>
 *   <li>{@code RUN key=value ...} opens a transport (Netty or Aeron, through
 *       {@link Transports#open}), forms a group and runs a loop of calls on it: per iteration
 *       {@code reduceGradients} of every algorithm named ({@code ring} = {@link AllReduceAggregator},
 *       {@code ps} = {@link ParameterServer}, both over the one transport), five tensors of mixed
 *       shapes per call, each result checked element by element against its closed form;</li>
 *   <li>{@code STOP} ends a loop started with {@code until-stop=true} (rank 0 decides and tells the
 *       others with a broadcast, so every rank makes the same calls);</li>
 *   <li>{@code RESUME} lets a loop paused by {@code pause-after} go on;</li>
 *   <li>{@code EXIT} ends the JVM with the status of the last run.</li>
 * </ul>
 * Keys of {@code RUN}: {@code transport}, {@code rank}, {@code world-size}, {@code coordinator},
 * {@code timeout-ms}, {@code job}, {@code algorithms} (comma-separated), {@code iterations},
 * {@code until-stop}, {@code counts} (vector lengths cycled through, comma-separated),
 * {@code report-every}, {@code pause-after} (iterations after which to print {@code PAUSED} and
 * wait for {@code RESUME}), {@code then} ({@code exit}, the default, or {@code wait} for the next
 * command), {@code skew} (this rank calls differently: {@code operation} = broadcastParams where
 * the others reduce, {@code shape} = a vector one element longer, {@code tensors} = one tensor
 * fewer, {@code sequence} = from iteration 1 on, aggregators whose call numbers start again at 0,
 * so its well-formed messages carry sequence numbers one behind), and {@code option.<name>} for any transport option.
 *
 * <p>Lines it prints: {@code FORMED <rank> ms=<t>} once the group formed, {@code ITER <rank> <i>},
 * {@code OK <rank> iterations=<n> elements=<m>}, or on failure the one-line error
 * {@code FAIL rank=<r> peer=<p> op="<operation>" <exception class> :: <message>}, then
 * {@code CLOSED <rank> ms=<t>}. Exit status: {@value #EXIT_OK} ok, {@value #EXIT_OTHER} other,
 * {@value #EXIT_WRONG_RESULT} a wrong element, {@value #EXIT_PEER_FAILURE} peer failure,
 * {@value #EXIT_TIMEOUT} timeout, {@value #EXIT_REFUSED} refused by the handshake,
 * {@value #EXIT_MISMATCH} mismatch, {@value #EXIT_ORPHANED} stdin closed (the test JVM is gone),
 * {@value #EXIT_WATCHDOG} still running after {@code --max-seconds} (default 120).
 */
public final class FaultRank {
    static final int EXIT_OK = 0;
    static final int EXIT_OTHER = 1;
    static final int EXIT_WRONG_RESULT = 2;
    static final int EXIT_PEER_FAILURE = 3;
    static final int EXIT_TIMEOUT = 4;
    static final int EXIT_REFUSED = 5;
    static final int EXIT_MISMATCH = 6;
    static final int EXIT_ORPHANED = 9;
    static final int EXIT_WATCHDOG = 10;

    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    private final BlockingQueue<String> commands = new LinkedBlockingQueue<>();
    private volatile boolean stopRequested;
    private volatile CountDownLatch resume = new CountDownLatch(1);
    private String operation = "forming the group";

    private FaultRank() {
    }

    public static void main(String[] argv) throws InterruptedException {
        String name = argv.length > 0 ? argv[0] : "rank";
        int maxSeconds = argv.length > 1 ? Integer.parseInt(argv[1]) : 120;
        FaultRank rank = new FaultRank();
        Watchdog.start(name, maxSeconds, OUT, EXIT_WATCHDOG);
        rank.watchStdin();
        // ND4J's first use costs seconds; pay it before the test starts any clock.
        TensorFixtures.callTensors(DataType.FLOAT, 0, 3)[0].addi(1);
        OUT.println("READY " + name + " pid=" + ProcessHandle.current().pid());
        int status = EXIT_OK;
        while (true) {
            String command = rank.commands.take();
            if (command.equals("EXIT")) {
                Runtime.getRuntime().halt(status);
            }
            if (!command.startsWith("RUN ")) {
                OUT.println("IGNORED " + command);
                continue;
            }
            Map<String, String> settings = parse(command.substring(4));
            status = rank.run(settings);
            if (!settings.getOrDefault("then", "exit").equals("wait")) {
                OUT.flush();
                // halt, not exit: the transport is closed, and ND4J's shutdown hooks only add time.
                Runtime.getRuntime().halt(status);
            }
            OUT.println("IDLE " + name + " status=" + status);
        }
    }

    private static Map<String, String> parse(String text) {
        Map<String, String> settings = new HashMap<>();
        for (String pair : text.trim().split("\\s+")) {
            int equals = pair.indexOf('=');
            if (equals <= 0) {
                throw new IllegalArgumentException("expected key=value, got '" + pair + "' in " + text);
            }
            settings.put(pair.substring(0, equals), pair.substring(equals + 1));
        }
        return settings;
    }

    private int run(Map<String, String> settings) {
        int rank = Integer.parseInt(settings.get("rank"));
        stopRequested = false;
        resume = new CountDownLatch(1);
        operation = "forming the group";
        long start = System.nanoTime();
        Transport transport = null;
        List<GradientAggregator> aggregators = new ArrayList<>();
        int status;
        try {
            DistributedConfig config = config(settings, rank);
            transport = Transports.open(config);
            OUT.println("FORMED " + rank + " ms=" + millisSince(start));
            String[] algorithms = settings.getOrDefault("algorithms", "ring,ps").split(",");
            // With skew=sequence a second set, numbered from 0 again, takes over from iteration 1.
            int sets = settings.getOrDefault("skew", "none").equals("sequence") ? 2 : 1;
            for (int set = 0; set < sets; set++) {
                for (String algorithm : algorithms) {
                    Transport lent = Transports.borrowed(transport);
                    aggregators.add(algorithm.equals("ps") ? new ParameterServer(config, lent)
                            : new AllReduceAggregator(config, lent));
                }
            }
            OUT.println("OK " + rank + " " + loop(settings, config, algorithms, aggregators));
            status = EXIT_OK;
        } catch (Throwable e) {
            // Reported before closing: closing can take a moment, and the test times this line.
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

    private static DistributedConfig config(Map<String, String> settings, int rank) {
        DistributedConfig.Builder builder = DistributedConfig.builder()
                .worldSize(Integer.parseInt(settings.get("world-size")))
                .rank(rank)
                .coordinatorAddr(settings.get("coordinator"))
                .transport(settings.get("transport"))
                .timeout(Duration.ofMillis(Long.parseLong(settings.getOrDefault("timeout-ms", "5000"))))
                .option("jobId", settings.getOrDefault("job", "faults"));
        settings.forEach((key, value) -> {
            if (key.startsWith("option.")) {
                builder.option(key.substring("option.".length()), value);
            }
        });
        return builder.build();
    }

    private String loop(Map<String, String> settings, DistributedConfig config, String[] algorithms,
            List<GradientAggregator> aggregators) throws InterruptedException {
        int rank = config.rank();
        int worldSize = config.worldSize();
        int iterations = Integer.parseInt(settings.getOrDefault("iterations", "10"));
        boolean untilStop = Boolean.parseBoolean(settings.getOrDefault("until-stop", "false"));
        int reportEvery = Integer.parseInt(settings.getOrDefault("report-every", "10"));
        int pauseAfter = Integer.parseInt(settings.getOrDefault("pause-after", "-1"));
        String skew = settings.getOrDefault("skew", "none");
        int[] counts = Arrays.stream(settings.getOrDefault("counts", "1009,0,65537,7").split(","))
                .mapToInt(Integer::parseInt).toArray();
        long checked = 0;
        int iteration = 0;
        while (true) {
            if (iteration % reportEvery == 0) {
                OUT.println("ITER " + rank + " " + iteration);
            }
            if (iteration == pauseAfter) {
                OUT.println("PAUSED " + rank + " " + iteration);
                resume.await();
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
            }
            iteration++;
            if (!untilStop) {
                if (iteration >= iterations) {
                    return "iterations=" + iteration + " elements=" + checked;
                }
                continue;
            }
            operation = "broadcastParams (stop flag, iteration " + iteration + ")";
            if (StopVote.decide(aggregators.get(0), rank, stopRequested && iteration >= iterations)) {
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
        String kind = e.getClass().getSimpleName();
        return e instanceof AssertionError ? EXIT_WRONG_RESULT
                : e instanceof PeerFailureException ? EXIT_PEER_FAILURE
                : e instanceof CollectiveTimeoutException ? EXIT_TIMEOUT
                : e instanceof CollectiveMismatchException ? EXIT_MISMATCH
                : kind.contains("Handshake") || kind.contains("Refused") ? EXIT_REFUSED
                : EXIT_OTHER;
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

    /** Commands go to the main thread; STOP and RESUME act at once; end of input ends this JVM. */
    private void watchStdin() {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    switch (line.trim()) {
                        case "STOP" -> stopRequested = true;
                        case "RESUME" -> resume.countDown();
                        default -> commands.add(line.trim());
                    }
                }
            } catch (IOException e) {
                // treated as the end of input
            }
            OUT.println("ORPHANED: stdin closed");
            Runtime.getRuntime().halt(EXIT_ORPHANED);
        }, "stdin-watch");
        reader.setDaemon(true);
        reader.start();
    }
}
