package io.ringstar.transport.aeron.system;

import io.ringstar.AllReduceAggregator;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.PeerFailureException;
import io.ringstar.Transports;
import io.ringstar.testing.ClosedForm;
import io.ringstar.testing.TensorFixtures;
import io.ringstar.transport.aeron.AeronTransport;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One rank of a system test, as a JVM of its own: opens the Aeron transport through
 * {@link Transports#open}, runs each algorithm named for a number of calls, and checks every
 * result against its closed form with {@link ClosedForm} (count, shape, type and every element).
 * Arguments are {@code --name value} pairs: {@code rank}, {@code world-size}, {@code coordinators}
 * (one per algorithm), {@code algorithms} ({@code ring}, {@code ps}), {@code iterations},
 * {@code counts}, {@code timeout-ms}, and any {@code --option.<name> <value>} passed on as a
 * transport option.
 *
 * <p>Prints {@code IPC <rank> <peers over IPC>} once the group formed, {@code ITER <rank> <alg> <i>}
 * every few calls, {@code OK <rank> <alg> iterations=<n> elements=<m>} per algorithm, then
 * {@code DONE <rank>}; on failure {@code FAIL <rank> <exception class> peer=<p> :: <message>}
 * (printed before the group is closed; {@code CLOSE-FAILED <rank> <alg> <exception>} if closing then
 * fails too) and an exit status per kind of failure. Ends by itself when its stdin closes (the test JVM died).
 */
public final class AeronRankProcess {
    static final int EXIT_OK = 0;
    static final int EXIT_OTHER = 1;
    static final int EXIT_WRONG_RESULT = 2;
    static final int EXIT_PEER_FAILURE = 3;
    static final int EXIT_TIMEOUT = 4;
    static final int EXIT_ORPHANED = 9;

    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    private AeronRankProcess() {
    }

    public static void main(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            args.put(argv[i].substring(2), argv[i + 1]);
        }
        int rank = Integer.parseInt(args.get("rank"));
        watchStdin();
        int code;
        try {
            String[] algorithms = args.get("algorithms").split(",");
            String[] coordinators = args.get("coordinators").split(",");
            for (int i = 0; i < algorithms.length; i++) {
                run(args, rank, algorithms[i], coordinators[i]);
            }
            OUT.println("DONE " + rank);
            code = EXIT_OK;
        } catch (Throwable e) {
            code = report(rank, e);
        }
        OUT.flush();
        // halt, not exit: the transports are closed by now, and ND4J's shutdown hooks only add time.
        Runtime.getRuntime().halt(code);
    }

    /** Prints the FAIL line for {@code e}; returns the exit status for its kind. */
    private static int report(int rank, Throwable e) {
        int peer = e instanceof CollectiveException ? ((CollectiveException) e).peerRank() : -1;
        OUT.println("FAIL " + rank + " " + e.getClass().getSimpleName() + " peer=" + peer + " :: "
                + String.valueOf(e.getMessage()).replace('\n', ' '));
        // A wrong result is an AssertionError: ClosedForm.check fails with JUnit's AssertionFailedError.
        return e instanceof PeerFailureException ? EXIT_PEER_FAILURE
                : e instanceof CollectiveTimeoutException ? EXIT_TIMEOUT
                : e instanceof AssertionError ? EXIT_WRONG_RESULT : EXIT_OTHER;
    }

    private static void run(Map<String, String> args, int rank, String algorithm, String coordinator) {
        int worldSize = Integer.parseInt(args.get("world-size"));
        DistributedConfig.Builder builder = DistributedConfig.builder()
                .worldSize(worldSize).rank(rank).coordinatorAddr(coordinator).transport(AeronTransport.NAME)
                .timeout(Duration.ofMillis(Long.parseLong(args.get("timeout-ms"))))
                .option(AeronTransport.JOB_ID_OPTION, args.getOrDefault("job", "system") + "-" + algorithm);
        args.forEach((name, value) -> {
            if (name.startsWith("option.")) {
                builder.option(name.substring("option.".length()), value);
            }
        });
        DistributedConfig config = builder.build();
        AeronTransport transport = (AeronTransport) Transports.open(config);
        GradientAggregator aggregator = algorithm.equals("ring") ? new AllReduceAggregator(config, transport)
                : new ParameterServer(config, transport);
        try {
            List<Integer> ipcPeers = new ArrayList<>();
            for (int peer = 0; peer < worldSize; peer++) {
                if (peer != rank && transport.usesIpc(peer)) {
                    ipcPeers.add(peer);
                }
            }
            OUT.println("IPC " + rank + " " + ipcPeers);
            int iterations = Integer.parseInt(args.get("iterations"));
            String[] counts = args.get("counts").split(",");
            long checked = 0;
            for (int iteration = 0; iteration < iterations; iteration++) {
                if (iteration % 20 == 0) {
                    OUT.println("ITER " + rank + " " + algorithm + " " + iteration);
                }
                int count = Integer.parseInt(counts[iteration % counts.length]);
                DataType type = iteration % 2 == 0 ? DataType.FLOAT : DataType.DOUBLE;
                INDArray[] inputs = TensorFixtures.callTensors(type, rank, count);
                INDArray[] averaged = aggregator.reduceGradients(inputs);
                checked += ClosedForm.elements(ClosedForm.check("reduceGradients #" + iteration, rank, averaged,
                        inputs, type, (t, i) -> TensorFixtures.average(worldSize, t, i)));
                if (iteration % 5 == 0) {
                    INDArray[] broadcast = aggregator.broadcastParams(inputs);
                    checked += ClosedForm.elements(ClosedForm.check("broadcastParams #" + iteration, rank, broadcast,
                            inputs, type, (t, i) -> TensorFixtures.value(0, t, i)));
                }
            }
            OUT.println("OK " + rank + " " + algorithm + " iterations=" + iterations + " elements=" + checked);
        } catch (Throwable e) {
            // Report before closing, as Netty's RankProcess does: a close that throws must not replace
            // the failure, and the kill test times the FAIL line, which closing would only delay.
            int code = report(rank, e);
            try {
                close(aggregator, transport);
            } catch (RuntimeException closeFailure) {
                OUT.println("CLOSE-FAILED " + rank + " " + algorithm + " "
                        + String.valueOf(closeFailure).replace('\n', ' '));
            }
            OUT.flush();
            Runtime.getRuntime().halt(code);
        }
        close(aggregator, transport);
    }

    private static void close(GradientAggregator aggregator, AeronTransport transport) {
        try {
            aggregator.close();
        } finally {
            transport.close();
        }
    }

    /** Ends this JVM when its stdin closes: the test that started it has gone. */
    private static void watchStdin() {
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is sent; only the end matters
                }
            } catch (IOException e) {
                // the pipe broke: the parent is gone as well
            }
            Runtime.getRuntime().halt(EXIT_ORPHANED);
        }, "stdin-watch");
        watcher.setDaemon(true);
        watcher.start();
    }
}
