package io.ringstar.transport.aeron.system;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM of a system test whose output goes to a log file under {@code target/system-tests},
 * read back line by line while it runs. {@link #close()} kills it if it still runs.
 */
final class Jvm implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;

    private Jvm(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** Starts {@code mainClass} with this JVM's java and class path and the flags Agrona and ND4J need. */
    static Jvm start(String name, Class<?> mainClass, List<String> args) {
        String java = ProcessHandle.current().info().command()
                .orElse(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java,
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
                "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens", "java.base/java.nio=ALL-UNNAMED",
                "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.bytedeco.javacpp.nopointergc=true", "-cp", System.getProperty("java.class.path"),
                mainClass.getName()));
        command.addAll(args);
        Path log = Paths.get(System.getProperty("basedir", "."), "target", "system-tests", name + ".log");
        try {
            Files.createDirectories(log.getParent());
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            builder.environment().put("OMP_NUM_THREADS", "1");
            return new Jvm(name, builder.start(), log);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + command, e);
        }
    }

    List<String> lines() {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return List.of();
        }
    }

    Optional<String> find(String prefix) {
        return lines().stream().filter(line -> line.startsWith(prefix)).findFirst();
    }

    /** Waits for a line starting with {@code prefix}; fails with the output if none came in time or the JVM ended. */
    String await(String prefix, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            Optional<String> line = find(prefix);
            if (line.isPresent()) {
                return line.get();
            }
            if (!process.isAlive()) {
                line = find(prefix);
                if (line.isPresent()) {
                    return line.get();
                }
                throw new AssertionError(name + " ended (status " + process.exitValue() + ") without a line '" + prefix
                        + "'\n" + transcript());
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(name + " printed no line '" + prefix + "' within " + limit + "\n" + transcript());
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }

    int awaitExit(Duration limit) {
        try {
            if (!process.waitFor(limit.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError(name + " still runs after " + limit + "\n" + transcript());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        return process.exitValue();
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL, no goodbye: the fault the kill test injects. */
    void kill() {
        process.destroyForcibly();
    }

    /** SIGTERM: how an external media driver is stopped. */
    void terminate() {
        process.destroy();
    }

    String transcript() {
        StringBuilder text = new StringBuilder();
        for (String line : lines()) {
            text.append("  [").append(name).append("] ").append(line).append('\n');
        }
        return text.toString();
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
