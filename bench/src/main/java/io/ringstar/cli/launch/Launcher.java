package io.ringstar.cli.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Starts the ranks of one job on this machine, the way torchrun does, and watches them: each rank
 * is a process with torchrun's variables in its environment ({@link #rankEnvironment}), every line
 * it prints comes out prefixed with {@code [rank r]}, and when one exits with a non-zero status the
 * others are stopped and the job ends with that status, naming the rank and showing its last lines.
 * Ctrl-C (the JVM's shutdown) stops them all too.
 *
 * <p>When a rank fails and the ranks have a trace directory ({@link TraceDirectory}), the ranks still
 * running get up to {@link #DUMP_WAIT} to write their trace dumps before they are stopped, and the
 * report of the failure ends with where the dumps are and the command that reads them; without a
 * trace directory it ends with how to get dumps next time.
 *
 * @param nproc how many ranks to start
 * @param transport the value of {@code RINGSTAR_TRANSPORT} for the ranks, or {@code null} to leave theirs
 * @param maxTime how long the ranks may run before every one is stopped
 * @param commandLine what each rank runs, program first
 * @param env the environment the ranks inherit, other launchers' rank variables included (they are removed)
 * @param traceDumps where the ranks write their trace dumps, or {@code null} when they write none
 */
public record Launcher(int nproc, String transport, Duration maxTime, List<String> commandLine,
        Map<String, String> env, TraceDirectory traceDumps) {
    /**
     * How long the ranks still running may take to write their trace dumps once another failed:
     * each writes its dump as soon as it hears of the failure, within milliseconds, unless its
     * machine is busy; a rank that never formed its group writes none, and is not waited for longer.
     */
    public static final Duration DUMP_WAIT = Duration.ofSeconds(2);
    /** How long the output of ranks that have ended may take to come through, all ranks together. */
    private static final Duration OUTPUT_WAIT = Duration.ofSeconds(2);
    private static final long POLL_MILLIS = 20;
    /** Launcher variables that must not leak from this process into the ranks it starts. */
    private static final List<String> FOREIGN_VARIABLES = List.of("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "PMI_RANK", "PMI_SIZE");

    /** Copies the lists. */
    public Launcher {
        commandLine = List.copyOf(commandLine);
        env = Map.copyOf(env);
    }

    /**
     * Starts every rank and waits for them: blocks until all have exited, one has failed, or
     * {@link #maxTime} has passed; the ranks still running are stopped before it returns.
     *
     * @param port the free loopback port that rank 0 listens on ({@code MASTER_PORT})
     * @return 0 when every rank exited with 0, the status of the rank that failed first, or 1 when
     *     a rank could not be started, the time ran out, or this thread was interrupted
     */
    public int run(int port, PrintStream out, PrintStream err) {
        // Dumps older than this are an earlier job's: a job of the same id overwrites them rank by rank.
        long startMillis = System.currentTimeMillis();
        err.println("ringstar launch: " + nproc + " ranks, MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port
                + (transport == null ? "" : " RINGSTAR_TRANSPORT=" + transport) + ": " + String.join(" ",
                        commandLine));
        // The shutdown hook (Ctrl-C) reads this list while ranks are being started.
        List<RankProcess> ranks = Collections.synchronizedList(new ArrayList<>());
        Thread stopOnExit = new Thread(() -> RankProcess.stopAll(ranks), "ringstar-launch-stop");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
        try {
            for (int rank = 0; rank < nproc; rank++) {
                ranks.add(RankProcess.start(rank, commandLine, rankEnvironment(rank, port), out, err));
            }
            return watch(ranks, startMillis, err);
        } catch (IOException e) {
            err.println("ringstar launch: could not start rank " + ranks.size() + " (" + String.join(" ", commandLine)
                    + "): " + e.getMessage());
            return 1;
        } finally {
            RankProcess.stopAll(ranks);
            long outputDeadline = System.nanoTime() + OUTPUT_WAIT.toNanos();
            ranks.forEach(rank -> rank.awaitOutput(outputDeadline));
            try {
                Runtime.getRuntime().removeShutdownHook(stopOnExit);
            } catch (IllegalStateException shuttingDown) {
                // The hook is running or has run: Ctrl-C came while the ranks were stopping.
            }
        }
    }

    /** This launcher, with the ranks writing their trace dumps where {@code dumps} says ({@code null}: nowhere). */
    public Launcher withTraceDumps(TraceDirectory dumps) {
        return new Launcher(nproc, transport, maxTime, commandLine, env, dumps);
    }

    /** Torchrun's variables for one rank, on top of {@link #env} without other launchers' ranks. */
    public Map<String, String> rankEnvironment(int rank, int port) {
        Map<String, String> rankEnv = new HashMap<>(env);
        FOREIGN_VARIABLES.forEach(rankEnv::remove);
        rankEnv.put("RANK", Integer.toString(rank));
        rankEnv.put("LOCAL_RANK", Integer.toString(rank));
        rankEnv.put("WORLD_SIZE", Integer.toString(nproc));
        rankEnv.put("LOCAL_WORLD_SIZE", Integer.toString(nproc));
        rankEnv.put("MASTER_ADDR", "127.0.0.1");
        rankEnv.put("MASTER_PORT", Integer.toString(port));
        rankEnv.putIfAbsent("OMP_NUM_THREADS", "1");
        if (transport != null) {
            rankEnv.put("RINGSTAR_TRANSPORT", transport);
        }
        return rankEnv;
    }

    /** Waits until every rank has exited with 0, one has failed, or {@code maxTime} has passed. */
    private int watch(List<RankProcess> ranks, long startMillis, PrintStream err) {
        long deadline = System.nanoTime() + maxTime.toNanos();
        while (true) {
            boolean allDone = true;
            RankProcess firstFailed = null;
            for (RankProcess rank : ranks) {
                if (rank.process.isAlive()) {
                    allDone = false;
                } else if (rank.process.exitValue() != 0
                        && (firstFailed == null || rank.exitedAt() < firstFailed.exitedAt())) {
                    // Others may have failed because of it within one poll; the earliest exit is the cause.
                    firstFailed = rank;
                }
            }
            if (firstFailed != null) {
                RankProcess rank = firstFailed;
                int status = rank.process.exitValue();
                if (traceDumps != null) {
                    // A rank stopped now would lose the dump it is about to write; one that exited has written its own.
                    Set<Integer> running = ranks.stream().filter(r -> r.process.isAlive()).map(r -> r.rank)
                            .collect(Collectors.toSet());
                    traceDumps.await(running, nproc, startMillis, DUMP_WAIT);
                }
                List<Integer> stopped = ranks.stream().filter(r -> r.process.isAlive()).map(r -> r.rank).toList();
                RankProcess.stopAll(ranks);
                rank.awaitOutput(System.nanoTime() + OUTPUT_WAIT.toNanos());
                err.println("ringstar launch: rank " + rank.rank + " exited with status " + status
                        + (stopped.isEmpty() ? "" : "; stopping ranks " + stopped) + ". Its last lines:");
                rank.lastLines().forEach(line -> err.println("  " + line));
                if (traceDumps != null) {
                    traceDumps.report(nproc, startMillis, err);
                } else {
                    TraceDirectory.suggest(err);
                }
                return status;
            }
            if (allDone) {
                return 0;
            }
            if (System.nanoTime() - deadline > 0) {
                List<Integer> running = ranks.stream().filter(r -> r.process.isAlive()).map(r -> r.rank).toList();
                err.println("ringstar launch: ranks " + running + " still running after --max-time "
                        + maxTime.toSeconds() + " s; stopping them");
                RankProcess.stopAll(ranks);
                return 1;
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                err.println("ringstar launch: interrupted; stopping every rank");
                return 1;
            }
        }
    }
}
