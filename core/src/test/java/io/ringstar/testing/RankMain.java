package io.ringstar.testing;

import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PeerFailureException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.nd4j.linalg.api.buffer.DataType;

/**
 * The one child-rank main of the system tests and the fault suite: a rank of a job in a JVM of its
 * own, over any transport on the class path. Its arguments are {@code key=value} pairs: {@code name}
 * (for its lines; default {@code rank}), {@code max-seconds} (its watchdog; default 150) and any
 * key of a run (below), which every {@code RUN} starts from. It warms up ND4J, prints
 * {@code READY <name> pid=<pid>} and obeys lines on stdin:
 * <ul>
 *   <li>{@code RUN [key=value ...]} runs once with the arguments' settings overridden by the line's
 *       ({@link RankRun} lists the keys: transport, rank, world size, what to call and how often);</li>
 *   <li>{@code STOP} ends a loop started with {@code until-stop=true} (rank 0 decides and tells the
 *       others with a broadcast, so every rank makes the same calls);</li>
 *   <li>{@code RESUME} lets a loop paused by {@code pause-after} go on;</li>
 *   <li>{@code EXIT} ends the JVM with the status of the last run.</li>
 * </ul>
 * After a run it exits with the run's status, or with {@code then=wait} prints
 * {@code IDLE <name> status=<s>} and waits for the next command. Exit status: {@value #EXIT_OK} ok,
 * {@value #EXIT_OTHER} other, {@value #EXIT_WRONG_RESULT} a wrong element, {@value #EXIT_PEER_FAILURE}
 * peer failure, {@value #EXIT_TIMEOUT} timeout, {@value #EXIT_REFUSED} refused by the handshake,
 * {@value #EXIT_MISMATCH} mismatch, {@value #EXIT_ORPHANED} stdin closed (the test JVM is gone),
 * {@value #EXIT_WATCHDOG} still running after {@code max-seconds}.
 */
public final class RankMain {
    public static final int EXIT_OK = 0;
    public static final int EXIT_OTHER = 1;
    public static final int EXIT_WRONG_RESULT = 2;
    public static final int EXIT_PEER_FAILURE = 3;
    public static final int EXIT_TIMEOUT = 4;
    public static final int EXIT_REFUSED = 5;
    public static final int EXIT_MISMATCH = 6;
    public static final int EXIT_ORPHANED = 9;
    public static final int EXIT_WATCHDOG = 10;

    static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    private final BlockingQueue<String> commands = new LinkedBlockingQueue<>();
    private final RankRun.Signals signals = new RankRun.Signals();

    private RankMain() {
    }

    /** Starts a rank; see the class comment for the arguments. */
    public static void main(String[] argv) throws InterruptedException {
        Map<String, String> arguments = parse(String.join(" ", argv));
        String name = arguments.getOrDefault("name", "rank");
        int maxSeconds = Integer.parseInt(arguments.getOrDefault("max-seconds", "150"));
        RankMain main = new RankMain();
        Watchdog.start(name, maxSeconds, OUT, EXIT_WATCHDOG);
        main.watchStdin();
        // ND4J's first use costs seconds; pay it before the test starts any clock.
        TensorFixtures.callTensors(DataType.FLOAT, 0, 3)[0].addi(1);
        OUT.println("READY " + name + " pid=" + ProcessHandle.current().pid());
        int status = EXIT_OK;
        while (true) {
            String command = main.commands.take();
            if (command.equals("EXIT")) {
                Runtime.getRuntime().halt(status);
            }
            if (!command.equals("RUN") && !command.startsWith("RUN ")) {
                OUT.println("IGNORED " + command);
                continue;
            }
            Map<String, String> settings = new LinkedHashMap<>(arguments);
            settings.putAll(parse(command.substring(3)));
            status = RankRun.run(settings, main.signals);
            if (!settings.getOrDefault("then", "exit").equals("wait")) {
                OUT.flush();
                // halt, not exit: the transport is closed, and ND4J's shutdown hooks only add time.
                Runtime.getRuntime().halt(status);
            }
            OUT.println("IDLE " + name + " status=" + status);
        }
    }

    /**
     * The elements a rank checks in a run of {@code iterations} over {@code algorithms} algorithms with
     * these vector {@code counts} and no skew: what its OK line must report.
     */
    public static long expectedElements(int[] counts, int iterations, int algorithms, int broadcastEvery) {
        long total = 0;
        for (int iteration = 0; iteration < iterations; iteration++) {
            // callTensors: the vector, a 2x3, a scalar, a column of 5 and an empty 0x3.
            long perCall = counts[iteration % counts.length] + 6 + 1 + 5;
            int calls = broadcastEvery > 0 && iteration % broadcastEvery == 0 ? 2 : 1;
            total += perCall * calls * algorithms;
        }
        return total;
    }

    /** {@code key=value} pairs separated by blanks, in order. */
    static Map<String, String> parse(String text) {
        Map<String, String> settings = new LinkedHashMap<>();
        if (text.isBlank()) {
            return settings;
        }
        for (String pair : text.trim().split("\\s+")) {
            int equals = pair.indexOf('=');
            if (equals <= 0) {
                throw new IllegalArgumentException("expected key=value, got '" + pair + "' in " + text);
            }
            settings.put(pair.substring(0, equals), pair.substring(equals + 1));
        }
        return settings;
    }

    /** The exit status for a run that ended with {@code e}. */
    static int statusOf(Throwable e) {
        String kind = e.getClass().getSimpleName();
        return e instanceof AssertionError ? EXIT_WRONG_RESULT
                : e instanceof PeerFailureException ? EXIT_PEER_FAILURE
                : e instanceof CollectiveTimeoutException ? EXIT_TIMEOUT
                : e instanceof CollectiveMismatchException ? EXIT_MISMATCH
                : kind.contains("Handshake") || kind.contains("Refused") ? EXIT_REFUSED
                : EXIT_OTHER;
    }

    /** Commands go to the main thread; STOP and RESUME act at once; end of input ends this JVM. */
    private void watchStdin() {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    switch (line.trim()) {
                        case "STOP" -> signals.stop();
                        case "RESUME" -> signals.resume();
                        default -> commands.add(line.trim());
                    }
                }
            } catch (IOException e) {
                OUT.println("stdin failed: " + e);
            }
            OUT.println("ORPHANED: stdin closed");
            Runtime.getRuntime().halt(EXIT_ORPHANED);
        }, "stdin-watch");
        reader.setDaemon(true);
        reader.start();
    }
}
