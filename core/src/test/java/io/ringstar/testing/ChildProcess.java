package io.ringstar.testing;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One child process of a system test: its output lines (stdout and stderr merged) with the moment
 * each arrived, its stdin, and a forced end that also works on a stopped process. Shared by the
 * Netty and Aeron system tests; {@link #javaCommand} builds the command of a child JVM.
 */
public final class ChildProcess {
    /** A line of output and when this JVM read it ({@link System#nanoTime()}). */
    public record Line(long nanos, String text) {
    }

    private final String name;
    private final Process process;
    private final Writer stdin;
    private final List<Line> lines = new ArrayList<>();
    private final Thread reader;
    private boolean ended;

    private ChildProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.reader = new Thread(this::readOutput, "output-of-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    public static ChildProcess start(String name, List<String> command, Map<String, String> environment) {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        try {
            return new ChildProcess(name, builder.start());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + command, e);
        }
    }

    public String name() {
        return name;
    }

    private void readOutput() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String text;
            while ((text = in.readLine()) != null) {
                synchronized (lines) {
                    lines.add(new Line(System.nanoTime(), text));
                    lines.notifyAll();
                }
            }
        } catch (IOException e) {
            // The process was killed; what was read so far is kept.
        } finally {
            synchronized (lines) {
                ended = true;
                lines.notifyAll();
            }
        }
    }

    /**
     * Waits for the first line that matches, from the start of the output.
     *
     * @throws AssertionError with the output so far if none came within {@code limit} or the
     *     output ended without one
     */
    public Line await(String what, Predicate<String> match, Duration limit) {
        return awaitLine(what, line -> match.test(line.text()), limit);
    }

    /**
     * As {@link #await}, among the lines read at or after {@code since} (a {@link System#nanoTime()}
     * taken before the command that makes them): a process that runs several jobs one after the
     * other prints the same lines again for each.
     */
    public Line awaitSince(long since, String what, Predicate<String> match, Duration limit) {
        return awaitLine(what, line -> line.nanos() - since >= 0 && match.test(line.text()), limit);
    }

    private Line awaitLine(String what, Predicate<Line> match, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        synchronized (lines) {
            int scanned = 0;
            while (true) {
                for (; scanned < lines.size(); scanned++) {
                    if (match.test(lines.get(scanned))) {
                        return lines.get(scanned);
                    }
                }
                if (ended) {
                    throw new AssertionError(name + " ended its output without " + what + "\n" + transcript());
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    throw new AssertionError(name + " printed no " + what + " within " + limit + "\n" + transcript());
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lines, remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted while waiting for " + what + " from " + name, e);
                }
            }
        }
    }

    public Line awaitPrefix(String prefix, Duration limit) {
        return await("line starting '" + prefix + "'", text -> text.startsWith(prefix), limit);
    }

    /** As {@link #awaitPrefix}, among the lines read at or after {@code since}; see {@link #awaitSince}. */
    public Line awaitPrefixSince(long since, String prefix, Duration limit) {
        return awaitSince(since, "line starting '" + prefix + "' since the mark", text -> text.startsWith(prefix),
                limit);
    }

    public Optional<Line> find(Predicate<String> match) {
        synchronized (lines) {
            return lines.stream().filter(line -> match.test(line.text())).findFirst();
        }
    }

    public List<String> lines(Predicate<String> match) {
        synchronized (lines) {
            return lines.stream().map(Line::text).filter(match).toList();
        }
    }

    public long count(Predicate<String> match) {
        synchronized (lines) {
            return lines.stream().filter(line -> match.test(line.text())).count();
        }
    }

    /** Sends one line to the process's stdin. */
    public void send(String line) {
        try {
            stdin.write(line + "\n");
            stdin.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write to " + name + " (has it ended?)\n" + transcript(), e);
        }
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * CPU time the process has used so far (user and system, all its threads), from
     * {@code /proc/<pid>/stat}; Linux only, in the kernel's clock ticks (usually 10 ms).
     */
    public long cpuTicks() {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" +");
            // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
            return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the CPU time of " + name, e);
        }
    }

    /** Waits for the process to end; returns its exit code, or fails with its output. */
    public int awaitExit(Duration limit) {
        try {
            if (!process.waitFor(limit.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError(name + " still runs after " + limit + "\n" + transcript());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + name + " to end", e);
        }
        try {
            // The last lines are in once the pipe has closed.
            reader.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return process.exitValue();
    }

    /** Sends a signal by name ({@code STOP}, {@code CONT}) with kill(1). */
    public void signal(String signal) {
        ShortCommand.Result result = ShortCommand.run(List.of("kill", "-" + signal, Long.toString(process.pid())),
                Duration.ofSeconds(10));
        if (!result.succeeded()) {
            throw new AssertionError("kill -" + signal + " " + process.pid() + " failed: " + result.output());
        }
    }

    /** SIGKILL (a stopped process is woken first, for tidiness), then waits until it is gone. */
    public void kill() {
        if (process.isAlive()) {
            try {
                signal("CONT");
            } catch (RuntimeException | AssertionError e) {
                // It may have ended meanwhile; the SIGKILL below is what matters.
            }
            process.destroyForcibly();
        }
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException(name + " (pid " + process.pid() + ") survived SIGKILL for 20 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            stdin.close();
        } catch (IOException e) {
            // the pipe is gone with the process
        }
    }

    /** SIGKILL without any preliminaries: the fault the kill test injects. */
    public void killAbruptly() {
        process.destroyForcibly();
    }

    /** SIGTERM: how a process that cleans up after itself (an external media driver) is stopped. */
    public void terminate() {
        process.destroy();
    }

    /**
     * The command of a child JVM running {@code main}: this JVM's java and class path, the module
     * flags that ND4J and Agrona need, and the logging configuration (this JVM's, else the module's
     * {@code src/test/resources/logging.properties}). Arguments go after it.
     */
    public static List<String> javaCommand(Class<?> main) {
        String java = ProcessHandle.current().info().command()
                .orElse(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java,
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
                "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens", "java.base/java.nio=ALL-UNNAMED",
                "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.bytedeco.javacpp.nopointergc=true"));
        String logging = System.getProperty("java.util.logging.config.file");
        if (logging == null) {
            File here = new File("src/test/resources/logging.properties");
            logging = here.isFile() ? here.getAbsolutePath() : null;
        }
        if (logging != null) {
            command.add("-Djava.util.logging.config.file=" + logging);
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        return command;
    }

    /** Where children's transcripts are kept after each test: the module's target/system-tests. */
    public static Path logDirectory() {
        return Paths.get(System.getProperty("basedir", "."), "target", "system-tests");
    }

    /** Every line so far, prefixed with the process's name. */
    public String transcript() {
        StringBuilder text = new StringBuilder();
        synchronized (lines) {
            for (Line line : lines) {
                text.append("  [").append(name).append("] ").append(line.text()).append('\n');
            }
        }
        return text.toString();
    }

    /** Writes the transcript to {@code file}, for the report of a failed run. */
    public void save(Path file) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, transcript(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            // Only a diagnostic; the test result does not depend on it, but say that it is missing.
            System.err.println("could not save the transcript of " + name + " to " + file + ": " + e);
        }
    }
}
