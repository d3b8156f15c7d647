package io.ringstar.cli.launch;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** One started rank: its process, the threads that copy its output, and its last lines. */
final class RankProcess {
    /** Lines of each rank kept for the report when it fails. */
    static final int LAST_LINES = 20;
    /** How long stopped ranks get to exit after SIGTERM before they are killed. */
    static final Duration GRACE = Duration.ofSeconds(5);

    final int rank;
    final Process process;
    private final Deque<String> lastLines = new ArrayDeque<>();
    private final List<Thread> pumps = new ArrayList<>();

    private volatile long exitedAt = Long.MAX_VALUE;

    private RankProcess(int rank, Process process) {
        this.rank = rank;
        this.process = process;
        process.onExit().thenRun(() -> exitedAt = System.nanoTime());
    }

    /** System.nanoTime when the process was seen to exit; a dead process not yet noted counts as now. */
    long exitedAt() {
        long noted = exitedAt;
        return noted != Long.MAX_VALUE || process.isAlive() ? noted : System.nanoTime();
    }

    static RankProcess start(int rank, List<String> commandLine, Map<String, String> env, PrintStream out,
            PrintStream err) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(commandLine).redirectInput(ProcessBuilder.Redirect.from(
                new File("/dev/null")));
        builder.environment().clear();
        builder.environment().putAll(env);
        RankProcess started = new RankProcess(rank, builder.start());
        started.pump(started.process.getInputStream(), out, "out");
        started.pump(started.process.getErrorStream(), err, "err");
        return started;
    }

    private void pump(InputStream stream, PrintStream target, String which) {
        String prefix = "[rank " + rank + "] ";
        Thread thread = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                    synchronized (target) {
                        target.println(prefix + line);
                    }
                    remember(line);
                }
            } catch (IOException e) {
                // The process is gone and its pipe closed under us; what it printed was copied.
            } catch (UncheckedIOException e) {
                remember("(output lost: " + e.getMessage() + ")");
            }
        }, "ringstar-launch-rank-" + rank + "-" + which);
        thread.setDaemon(true);
        thread.start();
        pumps.add(thread);
    }

    private synchronized void remember(String line) {
        if (lastLines.size() == LAST_LINES) {
            lastLines.removeFirst();
        }
        lastLines.addLast(line);
    }

    synchronized List<String> lastLines() {
        return List.copyOf(lastLines);
    }

    /**
     * Waits until {@code deadline} (System.nanoTime) at most for the output threads, so a rank's
     * last lines come first.
     */
    void awaitOutput(long deadline) {
        for (Thread pump : pumps) {
            try {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                pump.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * SIGTERM to every rank still running and its descendants, then SIGKILL to whatever is left
     * after the grace. The descendants are listed before the SIGTERM: a rank that dies of it leaves
     * its children to init, and a later look would no longer find them. The signals go through
     * each process's {@link ProcessHandle}: {@code Process.destroy} would also close the pipes that
     * the output threads are still draining, and lose a rank's last lines even after it exited.
     */
    static void stopAll(List<RankProcess> ranks) {
        List<RankProcess> snapshot;
        synchronized (ranks) {
            snapshot = List.copyOf(ranks);
        }
        List<List<ProcessHandle>> descendants = new ArrayList<>();
        for (RankProcess rank : snapshot) {
            List<ProcessHandle> children = rank.process.descendants().toList();
            descendants.add(children);
            children.forEach(ProcessHandle::destroy);
            rank.process.toHandle().destroy();
        }
        long deadline = System.nanoTime() + GRACE.toNanos();
        for (int i = 0; i < snapshot.size(); i++) {
            Process process = snapshot.get(i).process;
            try {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !process.waitFor(left, TimeUnit.NANOSECONDS)) {
                    process.toHandle().destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.toHandle().destroyForcibly();
            }
            // Children that outlived the grace, whether or not the rank itself went in time.
            descendants.get(i).stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        }
    }
}
