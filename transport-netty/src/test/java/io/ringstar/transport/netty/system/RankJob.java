package io.ringstar.transport.netty.system;

import io.ringstar.testing.ChildProcess;
import io.ringstar.testing.RankMain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@link RankMain} JVMs of one job. {@link #close()} kills every one that still runs, so a
 * test that fails half-way leaves no process behind; a child whose test JVM dies ends by itself
 * when its stdin closes.
 */
final class RankJob implements AutoCloseable {
    /** How long a child JVM may take to start and warm up ND4J; generous for a loaded 2-core machine. */
    static final Duration STARTUP = Duration.ofSeconds(60);

    private final String testName;
    private final List<ChildProcess> ranks = new ArrayList<>();

    RankJob(String testName) {
        this.testName = testName;
    }

    /** Settings of one rank, as {@code key=value} arguments in insertion order. */
    static final class Args {
        private final Map<String, String> values = new LinkedHashMap<>();
        private final Map<String, String> environment = new HashMap<>();
        private final List<String> prefix = new ArrayList<>();

        Args set(String name, Object value) {
            values.put(name, String.valueOf(value));
            return this;
        }

        Args env(String name, String value) {
            environment.put(name, value);
            return this;
        }

        /** Runs the JVM through this command, for example {@code ip netns exec <ns>}. */
        Args prefix(List<String> command) {
            prefix.addAll(command);
            return this;
        }

        Args copy() {
            Args copy = new Args();
            copy.values.putAll(values);
            copy.environment.putAll(environment);
            copy.prefix.addAll(prefix);
            return copy;
        }
    }

    /** Starts one rank; {@code args} must include {@code rank}. */
    ChildProcess start(Args args) {
        List<String> command = new ArrayList<>(args.prefix);
        command.addAll(ChildProcess.javaCommand(RankMain.class));
        command.add("name=rank" + args.values.get("rank"));
        args.values.forEach((name, value) -> command.add(name + "=" + value));
        Map<String, String> environment = new HashMap<>();
        environment.put("OMP_NUM_THREADS", "1");
        environment.putAll(args.environment);
        ChildProcess child = ChildProcess.start("rank " + args.values.get("rank"), command, environment);
        ranks.add(child);
        return child;
    }

    /** Waits until every rank has warmed up, then lets them all form their group at once. */
    void go() {
        awaitReady();
        for (ChildProcess rank : ranks) {
            rank.send("RUN");
        }
    }

    /** Waits until every rank has warmed up and waits for its RUN. */
    void awaitReady() {
        for (ChildProcess rank : ranks) {
            rank.awaitPrefix("READY ", STARTUP);
        }
    }

    ChildProcess rank(int rank) {
        return ranks.get(rank);
    }

    List<ChildProcess> ranks() {
        return ranks;
    }

    /** Every rank's output, for assertion messages. */
    String transcripts() {
        StringBuilder text = new StringBuilder();
        for (ChildProcess rank : ranks) {
            text.append(rank.transcript());
        }
        return text.toString();
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        for (ChildProcess rank : ranks) {
            try {
                rank.kill();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                }
            }
        }
        Path logs = ChildProcess.logDirectory();
        for (int i = 0; i < ranks.size(); i++) {
            ranks.get(i).save(logs.resolve(testName + "-rank" + i + ".log"));
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** A file holding {@code text}, deleted when this JVM exits. */
    static Path tempFile(String prefix, String text) {
        try {
            Path file = Files.createTempFile(prefix, ".txt");
            file.toFile().deleteOnExit();
            Files.writeString(file, text);
            return file;
        } catch (IOException e) {
            throw new IllegalStateException("cannot write a temporary file", e);
        }
    }
}
