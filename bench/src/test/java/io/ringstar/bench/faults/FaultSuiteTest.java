package io.ringstar.bench.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import io.ringstar.testing.ChildProcess;
import io.ringstar.testing.Ports;
import io.ringstar.testing.RankMain;
import io.ringstar.testing.VethPair;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fault suite: the same cases over Netty and Aeron (UDP, an embedded driver per process), each
 * with three {@link RankMain} JVMs (and impostors), each stating what the other ranks must see and
 * how soon. A fault that ends a rank ends it within its bound with an exception naming the rank,
 * the peer and the operation, and an exit status for its kind; garbage and a late coordinator must
 * not end anything. {@link FaultJob#close()} then checks that no process, port or driver directory
 * was left behind. Each case prints {@code [fault] <case> <transport>: detected in X.Y s}; the
 * table in RELIABILITY.md is made from those lines.
 */
@Tag("slow")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FaultSuiteTest {
    private static final int WORLD_SIZE = 3;
    /** Aeron's liveness timeout in these cases: a dead peer's image is gone within 2 s. */
    private static final int LIVENESS_MS = 2000;
    /**
     * The timeout of the jobs that form a group and then meet a fault. It bounds forming the group
     * too, which takes seconds when this 2-core machine is loaded, so it is not shorter.
     */
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    /** The timeout of ranks that never form a group: a missing coordinator, a late claim of a taken rank. */
    private static final Duration SHORT = Duration.ofSeconds(3);
    private static final Duration IMPOSTOR_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration LONG = Duration.ofSeconds(30);
    /** The most a killed rank may take to be noticed by the others. */
    private static final Duration KILL_DETECTION = Duration.ofSeconds(2);
    /**
     * The timeout of the group where a rank stops calling: short, since these JVMs have formed eight
     * groups already (it bounds forming the group too).
     */
    private static final long STOPPED_TIMEOUT_MS = 1500;
    /** How long a rank is stopped in the pause that must be survived. */
    private static final Duration PAUSE = Duration.ofSeconds(7);

    private static final List<String> SKEWS = List.of("operation", "shape", "tensors", "sequence");
    /** The job id of every run, and so the name of the ranks' trace dumps. */
    private static final String JOB_ID = "faults";
    /** The call a FAIL line of a ring,ps loop names: its algorithm and iteration. */
    private static final Pattern LOOP_CALL =
            Pattern.compile("op=\"reduceGradients \\((ring|ps), iteration (\\d+)\\)\"");

    private FaultJob job;
    /** The case and its transport, for the names of what it leaves in target/system-tests. */
    private String caseName;

    @BeforeEach
    void newJob(TestInfo test) {
        caseName = test.getTestMethod().map(method -> method.getName()).orElse("case") + "-"
                + test.getDisplayName().replaceAll("[^A-Za-z0-9]+", "-");
        job = new FaultJob(caseName);
    }

    @AfterEach
    void nothingLeftBehind() {
        job.close();
    }

    // ---------------------------------------------------------------- killed and frozen ranks

    /**
     * SIGKILL of one rank of three: before the first call (the group has formed, the victim is held
     * before its first all-reduce), during a ring all-reduce loop, during a star reduce loop (the
     * victim is the server), and after three iterations of both (held between calls). Each
     * survivor ends with {@code PeerFailureException} naming the victim within 2 s (the call
     * timeout is 5 s; Aeron learns of the death from its sentinel connections, rank 0 telling the
     * others), and its run ends with status 3.
     *
     * <p>The four phases are one job of JVMs: the survivors of a phase wait ({@code then=wait}) and
     * take part in the next, and a fresh JVM, started while the phase runs, takes the victim's
     * place; each phase checks its survivors' {@code IDLE} status (the status a rank exits with),
     * and the last phase's survivors then exit with it. Forming the group anew in JVMs that have
     * seen a peer die is part of what this states.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netty", "aeron"})
    void aKilledRankFailsTheOthersPromptly(String transport) {
        List<ChildProcess> ranks = new ArrayList<>(job.startRanks("r", WORLD_SIZE, List.of()));
        List<String> phases = List.of("before", "during-ring", "during-star", "after");
        List<ChildProcess> survivors = List.of();
        for (String phase : phases) {
            int victim = switch (phase) {
                case "during-star" -> 0;
                case "after" -> 2;
                default -> 1;
            };
            // The victim's successor loads ND4J while this phase forms its group and runs.
            ChildProcess successor = phase.equals("after") ? null : job.start("successor-" + phase, List.of());
            killOneRank(transport, phase, victim, ranks, successor);
            if (successor != null) {
                ranks.set(victim, successor);
            }
            survivors = new ArrayList<>(ranks);
            survivors.remove(victim);
        }
        for (ChildProcess survivor : survivors) {
            survivor.send("EXIT");
            job.awaitExit(survivor, RankMain.EXIT_PEER_FAILURE, LONG);
        }
    }

    /**
     * One phase of {@link #aKilledRankFailsTheOthersPromptly}: a job of {@code ranks}, {@code victim}
     * killed; {@code successor} (if any) is ready before the kill, so that its start takes no CPU
     * from the survivors while they detect the death.
     */
    private void killOneRank(String transport, String phase, int victim, List<ChildProcess> ranks,
            ChildProcess successor) {
        String algorithms = phase.equals("during-ring") ? "ring" : phase.equals("during-star") ? "ps" : "ring,ps";
        String coordinator = FaultJob.coordinator();
        long mark = System.nanoTime();
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            Map<String, Object> settings = loop(transport, rank, coordinator, TIMEOUT, algorithms);
            settings.put("then", "wait");
            if (rank == victim && phase.equals("before")) {
                settings.put("pause-after", 0);
            }
            if (rank == victim && phase.equals("after")) {
                settings.put("pause-after", 3);
            }
            FaultJob.run(ranks.get(rank), settings);
        }
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            String formed = ranks.get(rank).awaitPrefixSince(mark, "FORMED " + rank + " ", LONG).text();
            // Ranks on one host, shared memory by default: the victim dies writing into its rings.
            assertTrue(formed.endsWith(" shm=" + (rank == 0 ? "[1,2]" : rank == 1 ? "[0,2]" : "[0,1]")), formed);
            job.listening(ranks.get(rank));
        }
        if (phase.startsWith("during")) {
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                ranks.get(rank).awaitPrefixSince(mark, "ITER " + rank + " 10", LONG);
            }
        } else {
            ranks.get(victim).awaitPrefixSince(mark, "PAUSED " + victim + " ", LONG);
        }
        if (successor != null) {
            job.awaitReady(successor);
        }
        long killedAt = System.nanoTime();
        job.killAbruptly(ranks.get(victim));
        double slowest = 0;
        List<String> lines = new ArrayList<>();
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            if (rank != victim) {
                // The operating system closes a killed process's sockets at once: Netty's connections
                // and Aeron's sentinel connections tell the survivors within 2 s on one host.
                ChildProcess survivor = ranks.get(rank);
                ChildProcess.Line failure = survivor.awaitPrefixSince(mark, "FAIL rank=" + rank + " ",
                        KILL_DETECTION.plusSeconds(20));
                String line = checkFailure(survivor, rank, "PeerFailureException", failure, killedAt, 0,
                        KILL_DETECTION);
                assertTrue(Pattern.compile("rank " + victim + "\\b").matcher(line).find(),
                        "rank " + rank + " should name rank " + victim + ": " + line);
                slowest = Math.max(slowest, (failure.nanos() - killedAt) / 1e9);
                lines.add(line);
                String idle = survivor.awaitPrefixSince(mark, "IDLE ", LONG).text();
                assertTrue(idle.endsWith(" status=" + RankMain.EXIT_PEER_FAILURE),
                        "rank " + rank + "'s run should end with a peer failure's status: " + idle);
            }
        }
        // The lines RELIABILITY.md quotes.
        System.out.println("[fault] kill " + phase + ", " + transport + ": " + lines);
        detected("kill " + phase, transport, slowest);
        assertEquals(137, ranks.get(victim).awaitExit(LONG), "SIGKILL's exit status");
    }

    /**
     * SIGSTOP of rank 2 in the middle of a loop of both algorithms: its sockets stay open (and over
     * Aeron the liveness timeout is set to 10 s, longer than the call's), so only the 5 s timeout
     * can tell. Ranks 0 and 1 end with {@code CollectiveTimeoutException} after about 5 s, not
     * sooner and not never; thawed, the frozen rank fails too instead of hanging.
     *
     * <p>Every rank has a trace directory. Once ranks 0 and 1 have failed, {@code ringstar report
     * hang} on it names the call they waited in and rank 2 as the rank without a dump, and names a
     * garbage file and a truncated copy of a dump put beside theirs; once rank 2 has failed too, it
     * reads rank 2's dump and names rank 2's last call.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netty", "aeron"})
    void aFrozenRankEndsTheOthersWithATimeout(String transport) {
        int victim = 2;
        Path traces = TraceChecks.freshDirectory("faults-" + caseName + "-traces");
        List<ChildProcess> ranks = job.startRanks("r", WORLD_SIZE, List.of());
        String coordinator = FaultJob.coordinator();
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            Map<String, Object> settings = loop(transport, rank, coordinator, TIMEOUT, "ring,ps");
            if (transport.equals("aeron")) {
                // Aeron would otherwise call the silent peer gone after its liveness timeout, before the call's.
                settings.put("option.aeron.livenessTimeoutMs", 2 * TIMEOUT.toMillis());
            }
            settings.put("option.traceDir", traces);
            FaultJob.run(ranks.get(rank), settings);
        }
        awaitFormed(ranks);
        awaitIteration(ranks, 10);
        long frozenAt = System.nanoTime();
        ranks.get(victim).signal("STOP");
        double slowest = 0;
        long diverged = Long.MAX_VALUE;
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            if (rank != victim) {
                // The stuck call began at most one short iteration before the freeze.
                String line = awaitFailure(ranks.get(rank), rank, "CollectiveTimeoutException", frozenAt,
                        TIMEOUT.toMillis() - 1500, TIMEOUT.plusSeconds(10));
                slowest = Math.max(slowest, seconds(ranks.get(rank), frozenAt));
                // In a ring one survivor may have completed the call the other still waits in.
                diverged = Math.min(diverged, loopSequence(line));
            }
        }
        detected("sigstop", transport, slowest);
        long waitedIn = diverged;
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            if (rank != victim) {
                job.awaitExit(ranks.get(rank), RankMain.EXIT_TIMEOUT, LONG);
                printStallWarnings(ranks.get(rank), rank, "sigstop " + transport);
            }
        }
        // A survivor writes its dump before its exception reaches the loop, so both are there.
        List<String> spoiled = TraceChecks.spoil(traces, TraceChecks.dumpOf(traces, JOB_ID, 0));
        TraceChecks.Report stopped = TraceChecks.printed(TraceChecks.hang(traces),
                "sigstop " + transport + ", rank 2 stopped");
        assertEquals(0, stopped.status(), stopped.toString());
        assertTrue(stopped.lines().get(0).endsWith(", 3 ranks, dumps from ranks 0, 1"), stopped.out());
        assertTrue(stopped.lines().stream().anyMatch(line -> line.startsWith("reduceGradients #" + waitedIn + ": ")
                && line.contains("rank 2 has no dump")),
                "the report should name #" + waitedIn + " and rank 2 without a dump:\n" + stopped.out());
        for (String file : spoiled) {
            assertTrue(stopped.err().contains("ringstar report hang: " + file + ": not a ringstar trace: "),
                    "the report should name " + file + ":\n" + stopped.err());
        }
        assertTrue(stopped.err().contains(spoiled.get(1) + ": not a ringstar trace: truncated at byte "),
                stopped.err());
        TraceChecks.remove(traces, spoiled);

        ranks.get(victim).signal("CONT");
        ranks.get(victim).awaitPrefix("FAIL rank=" + victim + " ", LONG);
        int code = ranks.get(victim).awaitExit(LONG);
        assertTrue(code == RankMain.EXIT_TIMEOUT || code == RankMain.EXIT_PEER_FAILURE,
                "a thawed rank ends with a timeout or a peer failure, not " + code + "\n"
                        + ranks.get(victim).transcript());
        JsonObject last = TraceChecks.lastEntry(TraceChecks.read(TraceChecks.dumpOf(traces, JOB_ID, victim)));
        long lastCall = last.get("sequence").getAsLong();
        TraceChecks.Report thawed = TraceChecks.printed(TraceChecks.hang(traces),
                "sigstop " + transport + ", rank 2 thawed");
        assertEquals(0, thawed.status(), thawed.toString());
        assertEquals("", thawed.err());
        assertTrue(thawed.lines().get(0).endsWith(", 3 ranks, dumps from ranks 0-2"), thawed.out());
        assertTrue(thawed.lines().stream().noneMatch(line -> line.contains("no dump")), thawed.out());
        assertTrue(thawed.lines().stream().skip(1).anyMatch(line -> line.matches(".*#" + lastCall + "\\b.*")
                && TraceChecks.ranksNamed(line).contains(victim)),
                "the report should name rank 2's last call, #" + lastCall + ":\n" + thawed.out());
    }

    /**
     * SIGSTOP of rank 2 for 7 s, shorter than the 20 s timeout, in the middle of a loop of both
     * algorithms, then SIGCONT: a long garbage-collection pause, say. The job goes on with exact
     * results on every rank (each reduction and every fifth broadcast checks them) and ends normally;
     * over Aeron no pair takes the IPC path (a driver per process). Over Aeron this needs
     * the default liveness timeout (the collective timeout): deaths are told apart from pauses by
     * the sentinel connections, which a stopped process keeps open.
     *
     * <p>With {@code stallWarning=1s} the ranks waiting for the stopped rank log a WARNING once a
     * call has waited 1 s, naming rank 2 as not answering and no other rank as not answering or
     * late: both survivors, whether they wait in a receive or in a send the stopped rank holds back.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netty", "aeron"})
    void aPauseShorterThanTheTimeoutIsSurvived(String transport) throws InterruptedException {
        int victim = 2;
        Duration timeout = Duration.ofSeconds(20);
        List<ChildProcess> ranks = job.startRanks("r", WORLD_SIZE, List.of());
        String coordinator = FaultJob.coordinator();
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            Map<String, Object> settings = stoppable(transport, rank, coordinator, timeout, 20);
            settings.remove("option.aeron.livenessTimeoutMs");
            // Broadcasts too: this is the suite's case of a whole job between processes with exact results.
            settings.put("broadcast-every", 5);
            settings.put("option.stallWarning", "1s");
            FaultJob.run(ranks.get(rank), settings);
        }
        awaitFormed(ranks);
        awaitIteration(ranks, 10);
        ranks.get(victim).signal("STOP");
        long frozenAt = System.nanoTime();
        Thread.sleep(PAUSE.toMillis());
        ranks.get(victim).signal("CONT");
        double paused = (System.nanoTime() - frozenAt) / 1e9;
        awaitIteration(ranks, 30);
        if (transport.equals("aeron")) {
            // An embedded driver per process: no pair may take the IPC path, or UDP would go untested.
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                assertEquals("IPC " + rank + " []", ranks.get(rank).awaitPrefix("IPC " + rank + " ", LONG).text(),
                        "rank " + rank + " talks UDP to every peer");
            }
        }
        ranks.get(0).send("STOP");
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            ranks.get(rank).awaitPrefix("OK " + rank + " ", LONG);
            job.awaitExit(ranks.get(rank), RankMain.EXIT_OK, LONG);
            assertTrue(ranks.get(rank).find(line -> line.startsWith("FAIL ")).isEmpty(),
                    "rank " + rank + " failed although the pause was shorter than the timeout:\n"
                            + ranks.get(rank).transcript());
        }
        System.out.printf("[fault] pause of %.1f s (timeout %d s) %s: survived, exact results on every rank%n",
                paused, timeout.toSeconds(), transport);
        List<Integer> warned = new ArrayList<>();
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            if (rank != victim) {
                List<TraceChecks.StallWarning> warnings = printStallWarnings(ranks.get(rank), rank,
                        "pause " + transport);
                if (!warnings.isEmpty()) {
                    warned.add(rank);
                }
                for (TraceChecks.StallWarning warning : warnings) {
                    assertTrue(warning.silent().contains(victim) || warning.late().contains(victim),
                            "the warning should name rank " + victim + ": " + warning.message());
                    assertTrue(warning.silent().stream().allMatch(r -> r == victim),
                            "no rank but " + victim + " should be named as not answering: " + warning.message());
                    // In a ring one survivor may complete the call the other still waits in for the stopped
                    // rank; that survivor is then behind but blocked on a peer itself, and not named late.
                    assertTrue(warning.late().stream().allMatch(r -> r == victim),
                            "no rank but " + victim + " should be named late: " + warning.message());
                }
            }
        }
        // Both survivors, whatever they wait in: a receive, or (over Aeron) a send the stopped rank holds back.
        assertTrue(warned.containsAll(List.of(0, 1)), "ranks " + warned + " of 0 and 1 logged "
                + "a stall warning in a pause of " + paused + " s with stallWarning=1s\n" + job.transcripts());
    }

    /**
     * Rank 0 in one network namespace, ranks 1 and 2 in another, joined by a veth pair that goes
     * down in the middle of a job: no FIN and no RST reach anyone, as when a cable is pulled. Every
     * rank ends within its 5 s timeout plus a margin, with a timeout or (Aeron, 2 s liveness) a
     * peer failure. Needs root and iproute2; skipped with the reason otherwise.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netty", "aeron"})
    void aCutLinkEndsEveryRankWithinItsTimeout(String transport) {
        try (VethPair network = VethPair.create("faults-" + transport)) {
            if (network.unavailable() != null) {
                System.out.println("[fault] partition " + transport + " skipped: " + network.unavailable());
            }
            Assumptions.assumeTrue(network.unavailable() == null, network.unavailable());
            List<ChildProcess> ranks = new ArrayList<>();
            ranks.add(job.start("r0", network.inA()));
            ranks.add(job.start("r1", network.inB()));
            ranks.add(job.start("r2", network.inB()));
            ranks.forEach(job::awaitReady);
            String coordinator = network.hostA() + ":29511";
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                FaultJob.run(ranks.get(rank), loop(transport, rank, coordinator, TIMEOUT, "ring,ps"));
            }
            awaitFormed(ranks);
            awaitIteration(ranks, 10);
            long cutAt = System.nanoTime();
            network.cut();
            double slowest = 0;
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                String line = ranks.get(rank).awaitPrefix("FAIL rank=" + rank + " ", LONG).text();
                assertTrue(line.contains(" CollectiveTimeoutException ") || line.contains(" PeerFailureException "),
                        line);
                assertNamesPeerAndOperation(line);
                double took = seconds(ranks.get(rank), cutAt);
                assertTrue(took < TIMEOUT.toSeconds() + 10, "rank " + rank + " took " + took + " s: " + line);
                slowest = Math.max(slowest, took);
            }
            detected("partition", transport, slowest);
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                int code = ranks.get(rank).awaitExit(LONG);
                assertTrue(code == RankMain.EXIT_TIMEOUT || code == RankMain.EXIT_PEER_FAILURE,
                        "exit status " + code + "\n" + ranks.get(rank).transcript());
            }
        }
    }

    // ---------------------------------------------------------------- ranks that disagree

    /**
     * Rank 2 calls differently from ranks 0 and 1: broadcastParams where they reduce, a vector one
     * element longer, one tensor fewer, or (after one good call) well-formed messages whose
     * sequence number is one behind; each with the ring and with the star, eight groups one after
     * the other in the same three JVMs. No rank gets a result: the header check fails the call with
     * {@code CollectiveMismatchException} on the ranks that see the odd message, and the abort
     * notice fails the others with an error naming the rank that failed, within the 5 s timeout.
     * With the operation skew every rank dumps its trace, and {@code ringstar report hang} names
     * both operations at the sequence number where they differ.
     *
     * <p>A ninth group in the same JVMs: rank 2 stops calling after four calls (it waits between
     * calls), and ranks 0 and 1 end with a timeout of {@value #STOPPED_TIMEOUT_MS} ms in the fifth.
     * Their failure report reaches rank 2, which dumps its trace although it is in no call; the
     * report names the fifth call and rank 2 as the rank that never started it, and the others'
     * stall warnings name rank 2 as late.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netty", "aeron"})
    void ranksThatCallDifferentlyFailWithAMismatch(String transport) {
        List<ChildProcess> ranks = job.startRanks("r", WORLD_SIZE, List.of());
        double slowest = 0;
        for (String algorithm : List.of("ring", "ps")) {
            for (String skew : SKEWS) {
                String coordinator = FaultJob.coordinator();
                Path traces = skew.equals("operation")
                        ? TraceChecks.freshDirectory("faults-" + caseName + "-traces-" + algorithm) : null;
                long start = System.nanoTime();
                for (int rank = 0; rank < WORLD_SIZE; rank++) {
                    Map<String, Object> settings = base(transport, rank, coordinator, TIMEOUT);
                    settings.put("algorithms", algorithm);
                    settings.put("iterations", 3);
                    settings.put("then", "wait");
                    if (rank == 2) {
                        settings.put("skew", skew);
                    }
                    if (traces != null) {
                        settings.put("option.traceDir", traces);
                    }
                    FaultJob.run(ranks.get(rank), settings);
                }
                int phase = SKEWS.size() * (algorithm.equals("ring") ? 0 : 1) + SKEWS.indexOf(skew) + 1;
                int mismatches = 0;
                List<String> lines = new ArrayList<>();
                for (int rank = 0; rank < WORLD_SIZE; rank++) {
                    ChildProcess child = ranks.get(rank);
                    ChildProcess.Line failure = nth(child, "FAIL rank=" + rank + " ", phase);
                    nth(child, "IDLE ", phase);
                    String line = failure.text();
                    lines.add(line);
                    assertNamesPeerAndOperation(line);
                    assertTrue(line.contains(" CollectiveMismatchException ")
                            || line.contains(" PeerFailureException "),
                            line);
                    if (rank != 2) {
                        assertTrue(line.contains("rank 2"), "rank " + rank + " should name rank 2: " + line);
                    }
                    mismatches += line.contains(" CollectiveMismatchException ") ? 1 : 0;
                    double took = (failure.nanos() - start) / 1e9;
                    assertTrue(took < 20, "rank " + rank + " took " + took + " s, forming included: " + line);
                    ChildProcess.Line formed = nth(child, "FORMED " + rank + " ", phase);
                    slowest = Math.max(slowest, (failure.nanos() - formed.nanos()) / 1e9);
                }
                System.out.println("[fault] " + skew + " skew, " + algorithm + ", " + transport + ": " + lines);
                assertTrue(mismatches >= 1, "no rank reported a mismatch: " + lines + "\n" + job.transcripts());
                if (traces != null) {
                    // Every rank failed in its call, so each wrote its dump before its FAIL line.
                    TraceChecks.Report report = TraceChecks.printed(TraceChecks.hang(traces),
                            "operation skew, " + algorithm + ", " + transport);
                    assertEquals(0, report.status(), report.toString());
                    assertTrue(report.lines().get(0).endsWith(", 3 ranks, dumps from ranks 0-2"), report.out());
                    assertTrue(report.lines().stream().anyMatch(
                            line -> line.startsWith("#1: rank 2 called broadcastParams ")
                                    && line.contains(" where ranks 0, 1 called reduceGradients ")),
                            "the report should name both operations at #1:\n" + report.out());
                }
            }
        }
        detected("mismatched calls (slowest rank of 8 groups, from forming)", transport, slowest);
        aRankThatStopsCallingIsNamed(transport, ranks, SKEWS.size() * 2 + 1);
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            ranks.get(rank).send("EXIT");
        }
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            int code = ranks.get(rank).awaitExit(LONG);
            // The status of the last group: rank 0 timed out; the others failed with it.
            assertTrue(rank == 0 ? code == RankMain.EXIT_TIMEOUT
                    : code == RankMain.EXIT_PEER_FAILURE || code == RankMain.EXIT_TIMEOUT,
                    "rank " + rank + " exit " + code);
        }
    }

    /**
     * The ninth group of {@link #ranksThatCallDifferentlyFailWithAMismatch}: rank 2 stops calling
     * after two iterations of both algorithms; {@code phase} counts the groups these JVMs ran.
     */
    private void aRankThatStopsCallingIsNamed(String transport, List<ChildProcess> ranks, int phase) {
        int victim = 2;
        Path traces = TraceChecks.freshDirectory("faults-" + caseName + "-traces-stopped");
        String coordinator = FaultJob.coordinator();
        long start = System.nanoTime();
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            Map<String, Object> settings = base(transport, rank, coordinator, Duration.ofMillis(STOPPED_TIMEOUT_MS));
            settings.put("algorithms", "ring,ps");
            settings.put("iterations", 3);
            settings.put("then", "wait");
            settings.put("option.traceDir", traces);
            if (rank == victim) {
                settings.put("pause-after", 2);
            }
            FaultJob.run(ranks.get(rank), settings);
        }
        ranks.get(victim).awaitPrefixSince(start, "PAUSED " + victim + " 2", LONG);
        // Calls #1-#4 are iterations 0 and 1; ranks 0 and 1 wait in #5, rank 2 never makes it.
        long waited = 5;
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            if (rank != victim) {
                ChildProcess child = ranks.get(rank);
                String line = nth(child, "FAIL rank=" + rank + " ", phase).text();
                nth(child, "IDLE ", phase);
                // Rank 0 waits for rank 2; rank 1 waits for rank 0, and may learn of its failure first.
                assertTrue(line.contains(" CollectiveTimeoutException ")
                        || (rank == 1 && line.contains(" PeerFailureException ")), line);
                assertEquals(waited, loopSequence(line), line);
                System.out.println("[fault] rank 2 stops calling, " + transport + ": " + line);
                List<TraceChecks.StallWarning> warnings = printStallWarnings(child, rank, "rank 2 stops calling "
                        + transport);
                assertTrue(warnings.stream().anyMatch(warning -> warning.late().equals(List.of(victim))
                        && warning.message().startsWith("reduceGradients #" + waited + " ")),
                        "rank " + rank + " should warn of #" + waited + " naming rank 2 late: " + warnings);
            }
        }
        // Rank 2 is in no call: it dumps on a thread of its own when the others' failure report reaches it.
        Path dump = TraceChecks.awaitDump(traces, JOB_ID, victim, LONG);
        String reason = TraceChecks.read(dump).get("reason").getAsString();
        System.out.println("[fault] rank 2 stops calling, " + transport + ", rank 2's dump: reason " + reason);
        assertTrue(reason.startsWith("failure reported by rank "), reason);
        TraceChecks.Report report = TraceChecks.printed(TraceChecks.hang(traces), "rank 2 stops calling, "
                + transport);
        assertEquals(0, report.status(), report.toString());
        assertTrue(report.lines().get(0).endsWith(", 3 ranks, dumps from ranks 0-2"), report.out());
        assertTrue(report.lines().stream().anyMatch(line -> line.startsWith("reduceGradients #" + waited + ": ")
                && line.contains("rank 2 never started it; its last completed call was #" + (waited - 1) + " ")),
                "the report should name #" + waited + " and rank 2:\n" + report.out());
        ranks.get(victim).send("RESUME");
        String line = nth(ranks.get(victim), "FAIL rank=" + victim + " ", phase).text();
        nth(ranks.get(victim), "IDLE ", phase);
        System.out.println("[fault] rank 2 stops calling, " + transport + ", resumed: " + line);
    }

    // ---------------------------------------------------------------- impostors

    /**
     * A job of three ranks with a shared secret. While rank 0 waits for the others, a fourth JVM
     * tries to join four times, each refused with an error that says why, before its 10 s
     * timeout: a wrong world size, a wrong job id, a wrong secret, no secret. Then two JVMs claim
     * rank 1 at the same moment: one is refused naming the rank (the first to register wins), and
     * the job of the other three runs to exact results. A claim of rank 1 while the job runs ends
     * too: refused (Netty), or a timeout naming the coordinator's address (Aeron, whose rendezvous
     * port closes once the group has formed).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netty", "aeron"})
    void impostorsAreRefusedAndTheJobGoesOn(String transport) {
        List<ChildProcess> ranks = job.startRanks("r", WORLD_SIZE, List.of());
        ChildProcess impostor = job.start("impostor", List.of());
        ChildProcess twin = job.start("twin", List.of());
        job.awaitReady(impostor);
        job.awaitReady(twin);
        int port = Ports.freeLoopbackPort();
        String coordinator = "127.0.0.1:" + port;
        String secret = "faults-secret-" + ProcessHandle.current().pid();
        FaultJob.run(ranks.get(0), member(transport, 0, coordinator, secret));
        awaitListening(ranks.get(0), port);

        Map<String, Map<String, Object>> impostors = new LinkedHashMap<>();
        Map<String, Object> wrongSize = member(transport, 2, coordinator, secret);
        wrongSize.put("world-size", WORLD_SIZE + 1);
        impostors.put("wrong world size", wrongSize);
        Map<String, Object> wrongJob = member(transport, 2, coordinator, secret);
        wrongJob.put("job", "another-job");
        impostors.put("wrong job id", wrongJob);
        impostors.put("wrong secret", member(transport, 2, coordinator, "not-the-secret"));
        Map<String, Object> noSecret = member(transport, 2, coordinator, secret);
        noSecret.remove("option.secret");
        impostors.put("missing secret", noSecret);
        int attempt = 0;
        for (Map.Entry<String, Map<String, Object>> entry : impostors.entrySet()) {
            attempt++;
            Map<String, Object> settings = entry.getValue();
            // A refusal comes at once; the timeout is only the bound if it did not.
            settings.put("timeout-ms", IMPOSTOR_TIMEOUT.toMillis());
            settings.put("then", "wait");
            long sentAt = System.nanoTime();
            FaultJob.run(impostor, settings);
            ChildProcess.Line failure = nth(impostor, "FAIL rank=2 ", attempt);
            nth(impostor, "IDLE ", attempt);
            double took = (failure.nanos() - sentAt) / 1e9;
            System.out.println("[fault] impostor, " + entry.getKey() + ", " + transport + ": " + failure.text());
            detected("impostor (" + entry.getKey() + ")", transport, took);
            assertNamesPeerAndOperation(failure.text());
            assertTrue(failure.text().contains(" HandshakeException ") || failure.text().contains(" RefusedException "),
                    entry.getKey() + " should be refused: " + failure.text());
            assertTrue(took < IMPOSTOR_TIMEOUT.toSeconds(), entry.getKey() + " was refused only after " + took + " s");
        }
        impostor.send("EXIT");
        assertEquals(RankMain.EXIT_REFUSED, impostor.awaitExit(LONG), impostor.transcript());

        // Two processes claim rank 1 while rank 0 still waits for rank 2, so both reach it: the first wins.
        long claimedAt = System.nanoTime();
        List<ChildProcess> claimants = List.of(ranks.get(1), twin);
        for (ChildProcess claimant : claimants) {
            Map<String, Object> settings = member(transport, 1, coordinator, secret);
            settings.put("then", "wait");
            FaultJob.run(claimant, settings);
        }
        ChildProcess loser = firstToFail(claimants);
        ChildProcess winner = loser == twin ? ranks.get(1) : twin;
        ChildProcess.Line refusal = loser.find(text -> text.startsWith("FAIL ")).orElseThrow();
        assertNamesPeerAndOperation(refusal.text());
        assertTrue(refusal.text().contains("rank 1"), "the refusal names rank 1: " + refusal.text());
        System.out.println("[fault] duplicate rank " + transport + ": " + refusal.text());
        detected("duplicate rank", transport, (refusal.nanos() - claimedAt) / 1e9);
        FaultJob.run(ranks.get(2), member(transport, 2, coordinator, secret));
        List<ChildProcess> members = List.of(ranks.get(0), winner, ranks.get(2));
        awaitFormed(members);
        awaitIteration(members, 5);
        assertTrue(winner.find(text -> text.startsWith("FAIL ")).isEmpty(), winner.transcript());

        // A third claim of rank 1 once the group runs: Netty's rank 0 still listens and refuses it;
        // Aeron's rendezvous has closed, so the claimant finds nobody and times out naming the address.
        Map<String, Object> late = member(transport, 1, coordinator, secret);
        late.put("timeout-ms", SHORT.toMillis());
        late.put("then", "wait");
        long lateAt = System.nanoTime();
        FaultJob.run(loser, late);
        ChildProcess.Line lateFailure = nth(loser, "FAIL rank=1 ", 2);
        assertNamesPeerAndOperation(lateFailure.text());
        assertTrue(transport.equals("netty") ? lateFailure.text().contains("rank 1 is already taken")
                : lateFailure.text().contains("could not register with rank 0 at /" + coordinator),
                lateFailure.text());
        double lateTook = (lateFailure.nanos() - lateAt) / 1e9;
        assertTrue(lateTook < SHORT.toSeconds() + 5, "a late claim took " + lateTook + " s: " + lateFailure.text());
        System.out.println("[fault] duplicate rank, group running, " + transport + ": " + lateFailure.text());
        detected("duplicate rank, group running", transport, lateTook);

        ranks.get(0).send("STOP");
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            members.get(rank).awaitPrefix("OK " + rank + " ", LONG);
        }
        winner.send("EXIT");
        loser.send("EXIT");
        for (ChildProcess member : members) {
            job.awaitExit(member, RankMain.EXIT_OK, LONG);
        }
        int lateStatus = transport.equals("netty") ? RankMain.EXIT_REFUSED : RankMain.EXIT_TIMEOUT;
        job.awaitExit(loser, lateStatus, LONG);
    }

    /** Waits until one of {@code children} prints a FAIL line; returns it. */
    private static ChildProcess firstToFail(List<ChildProcess> children) {
        long deadline = System.nanoTime() + LONG.toNanos();
        while (System.nanoTime() < deadline) {
            for (ChildProcess child : children) {
                if (child.find(text -> text.startsWith("FAIL ")).isPresent()) {
                    return child;
                }
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
        throw new AssertionError("neither claimant of rank 1 was refused within " + LONG);
    }

    // ---------------------------------------------------------------- garbage

    /**
     * Garbage on every port the job listens on, while it runs: the coordinator's TCP port while
     * rank 0 waits for the others (over Aeron that is the only TCP port, closed once the group has
     * formed), then every TCP and UDP port of every rank that {@code ss} shows for its pid. TCP gets
     * random bytes, records cut short, length fields of 2 GiB and -1, and a well-formed collective
     * header with a sequence number far ahead; each connection is closed by the rank (one that stays
     * open with half a record, at the latest when its handshake limit runs out). UDP gets random
     * datagrams, Aeron headers cut short or claiming 2 GiB, and data and setup frames of a session
     * nobody published. The job goes on to exact results; no rank fails.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netty", "aeron"})
    void garbageOnEveryPortDoesNotDisturbTheJob(String transport) throws Exception {
        List<ChildProcess> ranks = job.startRanks("r", WORLD_SIZE, List.of());
        int port = Ports.freeLoopbackPort();
        String coordinator = "127.0.0.1:" + port;
        InetAddress loopback = InetAddress.getLoopbackAddress();
        FaultJob.run(ranks.get(0), stoppable(transport, 0, coordinator, Duration.ofSeconds(60), 20));
        awaitListening(ranks.get(0), port);
        // The probe's outcome: how long the rank took to close the connection, or why it did not.
        CompletableFuture<Duration> heldOpen = new CompletableFuture<>();
        Thread holder = new Thread(() -> {
            try {
                heldOpen.complete(Garbage.closedAfter(loopback, port, new byte[] {100, 0, 0, 0, 2}, false,
                        Duration.ofSeconds(25)));
            } catch (IOException | AssertionError e) {
                heldOpen.completeExceptionally(e);
            }
        }, "held-open-probe");
        holder.setDaemon(true);
        holder.start();
        double slowest = probeTcp(transport, loopback, port);
        for (int rank = 1; rank < WORLD_SIZE; rank++) {
            FaultJob.run(ranks.get(rank), stoppable(transport, rank, coordinator, Duration.ofSeconds(60), 20));
        }
        awaitFormed(ranks);
        Duration closedAfter;
        try {
            closedAfter = heldOpen.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("a connection left open with half a record was not closed by rank 0 of "
                    + transport, e.getCause());
        }
        System.out.printf("[fault] garbage %s: a connection left open with half a record was closed after %.1f s%n",
                transport, closedAfter.toNanos() / 1e9);
        awaitIteration(ranks, 5);
        int udpPorts = 0;
        for (ChildProcess rank : ranks) {
            FaultJob.Ports ports = job.listening(rank);
            for (int tcp : ports.tcp()) {
                slowest = Math.max(slowest, probeTcp(transport, loopback, tcp));
            }
            for (int udp : ports.udp()) {
                udpPorts++;
                for (byte[] payload : Garbage.udpPayloads(udp).values()) {
                    Garbage.datagrams(loopback, udp, payload, 20);
                }
            }
        }
        if (transport.equals("aeron")) {
            assertTrue(udpPorts >= WORLD_SIZE, "ss showed " + udpPorts + " UDP ports for 3 Aeron ranks");
        }
        System.out.printf("[fault] garbage %s: every TCP probe closed by the rank within %.1f s; %d UDP ports fed%n",
                transport, slowest, udpPorts);
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            ChildProcess child = ranks.get(rank);
            String here = "ITER " + rank + " ";
            List<String> reported = child.lines(text -> text.startsWith(here));
            String later = here + (Integer.parseInt(reported.get(reported.size() - 1).split(" ")[2]) + 10);
            // Ten more iterations after the garbage: the job goes on, not just survives.
            child.await(later, later::equals, LONG);
            assertTrue(child.find(text -> text.startsWith("FAIL ")).isEmpty(), child.transcript());
        }
        // The garbage did arrive: every TCP probe left a line in the log of the rank it hit.
        int probes = Garbage.tcpPayloads(0).size();
        for (int rank = 0; rank < (transport.equals("netty") ? WORLD_SIZE : 1); rank++) {
            // Netty's listeners log "refused a connection"; Aeron's rendezvous, "refused a registration".
            long logged = ranks.get(rank).count(text -> text.contains("refused a connection")
                    || text.contains("refused a registration"));
            assertTrue(logged >= probes, "rank " + rank + " logged " + logged + " refusals for " + probes + " probes\n"
                    + ranks.get(rank).transcript());
        }
        ranks.get(0).send("STOP");
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            ranks.get(rank).awaitPrefix("OK " + rank + " ", LONG);
            job.awaitExit(ranks.get(rank), RankMain.EXIT_OK, LONG);
        }
    }

    /**
     * Sends every TCP payload to {@code port} at once (half-closing after each); returns the slowest
     * close in seconds.
     */
    private static double probeTcp(String transport, InetAddress host, int port) throws Exception {
        Map<String, Thread> probes = new LinkedHashMap<>();
        Map<String, Object> outcomes = new ConcurrentHashMap<>();
        for (Map.Entry<String, byte[]> payload : Garbage.tcpPayloads(port).entrySet()) {
            Thread probe = new Thread(() -> {
                try {
                    outcomes.put(payload.getKey(), Garbage.closedAfter(host, port, payload.getValue(), true,
                            Duration.ofSeconds(15)));
                } catch (IOException | AssertionError e) {
                    outcomes.put(payload.getKey(), e);
                }
            }, "probe");
            probe.setDaemon(true);
            probe.start();
            probes.put(payload.getKey(), probe);
        }
        double slowest = 0;
        for (Map.Entry<String, Thread> probe : probes.entrySet()) {
            probe.getValue().join(TimeUnit.SECONDS.toMillis(40));
            Object outcome = outcomes.get(probe.getKey());
            assertTrue(outcome instanceof Duration,
                    transport + " port " + port + ", " + probe.getKey() + ": " + outcome);
            slowest = Math.max(slowest, ((Duration) outcome).toMillis() / 1000.0);
        }
        return slowest;
    }

    // ---------------------------------------------------------------- the coordinator

    /**
     * Ranks 1 and 2 start with a coordinator address where nobody listens and a 3 s timeout: each
     * ends with {@code CollectiveTimeoutException} naming that address, after the 3 s and not much
     * later. Then, in the same JVMs, ranks 1 and 2 start 3 s before rank 0 (the coordinator) with a
     * 20 s timeout: they wait for it, and the job runs to exact results.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netty", "aeron"})
    void aMissingCoordinatorIsNamedAndALateOneIsWaitedFor(String transport) throws InterruptedException {
        List<ChildProcess> ranks = job.startRanks("r", WORLD_SIZE, List.of());
        String nowhere = FaultJob.coordinator();
        long sentAt = System.nanoTime();
        for (int rank = 1; rank < WORLD_SIZE; rank++) {
            Map<String, Object> settings = base(transport, rank, nowhere, SHORT);
            settings.put("then", "wait");
            FaultJob.run(ranks.get(rank), settings);
        }
        double slowest = 0;
        for (int rank = 1; rank < WORLD_SIZE; rank++) {
            String line = awaitFailure(ranks.get(rank), rank, "CollectiveTimeoutException", sentAt,
                    SHORT.toMillis() - 200, SHORT.plusSeconds(5));
            assertTrue(line.contains(nowhere),
                    "rank " + rank + " should name the coordinator " + nowhere + ": " + line);
            System.out.println("[fault] coordinator never comes " + transport + ": " + line);
            slowest = Math.max(slowest, seconds(ranks.get(rank), sentAt));
            ranks.get(rank).awaitPrefix("IDLE ", LONG);
        }
        detected("coordinator never comes", transport, slowest);

        String late = FaultJob.coordinator();
        for (int rank = WORLD_SIZE - 1; rank >= 0; rank--) {
            if (rank == 0) {
                Thread.sleep(3000);
                for (int other = 1; other < WORLD_SIZE; other++) {
                    assertTrue(ranks.get(other).find(text -> text.startsWith("FORMED ")).isEmpty(),
                            "rank " + other + " formed a group without rank 0");
                }
            }
            Map<String, Object> settings = base(transport, rank, late, Duration.ofSeconds(20));
            settings.put("iterations", 6);
            FaultJob.run(ranks.get(rank), settings);
        }
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            ranks.get(rank).awaitPrefix("OK " + rank + " iterations=6 ", LONG);
            job.awaitExit(ranks.get(rank), RankMain.EXIT_OK, LONG);
        }
    }

    // ---------------------------------------------------------------- helpers

    /** The {@code n}-th line (from 1) that starts with {@code prefix}, waiting for it if need be. */
    private static ChildProcess.Line nth(ChildProcess child, String prefix, int n) {
        int[] seen = {0};
        // await tests each line once, in order, so counting in the predicate is sound.
        return child.await("line " + n + " starting '" + prefix + "'",
                text -> text.startsWith(prefix) && ++seen[0] == n, LONG);
    }

    /** A member of the impostor test's job: both algorithms until STOP (and at least 6 iterations), with the secret. */
    private static Map<String, Object> member(String transport, int rank, String coordinator, String secret) {
        Map<String, Object> settings = stoppable(transport, rank, coordinator, Duration.ofSeconds(30), 6);
        settings.put("option.secret", secret);
        return settings;
    }

    /** Waits until {@code child} listens on TCP {@code port}. */
    private void awaitListening(ChildProcess child, int port) {
        long deadline = System.nanoTime() + LONG.toNanos();
        while (!job.listening(child).tcp().contains(port)) {
            assertTrue(System.nanoTime() < deadline, child.name() + " does not listen on " + port + " after " + LONG
                    + "\n" + child.transcript());
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }

    private static Map<String, Object> base(String transport, int rank, String coordinator, Duration timeout) {
        Map<String, Object> settings = FaultJob.rankSettings(transport, rank, WORLD_SIZE, coordinator, timeout,
                JOB_ID);
        if (transport.equals("aeron")) {
            settings.put("option.aeron.livenessTimeoutMs", LIVENESS_MS);
        }
        return settings;
    }

    /** A loop of reductions that only a fault ends (no broadcast between them, so a fault hits a reduction). */
    private static Map<String, Object> loop(String transport, int rank, String coordinator, Duration timeout,
            String algorithms) {
        Map<String, Object> settings = base(transport, rank, coordinator, timeout);
        settings.put("algorithms", algorithms);
        settings.put("iterations", 1_000_000_000);
        settings.put("report-every", 5);
        return settings;
    }

    /** A loop that ends when rank 0 is sent STOP, after at least {@code iterations}. */
    private static Map<String, Object> stoppable(String transport, int rank, String coordinator, Duration timeout,
            int iterations) {
        Map<String, Object> settings = loop(transport, rank, coordinator, timeout, "ring,ps");
        settings.put("iterations", iterations);
        settings.put("until-stop", true);
        return settings;
    }

    private void awaitFormed(List<ChildProcess> ranks) {
        for (int rank = 0; rank < ranks.size(); rank++) {
            ranks.get(rank).awaitPrefix("FORMED " + rank + " ", LONG);
            job.listening(ranks.get(rank));
        }
    }

    private static void awaitIteration(List<ChildProcess> ranks, int iteration) {
        for (int rank = 0; rank < ranks.size(); rank++) {
            ranks.get(rank).awaitPrefix("ITER " + rank + " " + iteration, LONG);
        }
    }

    /**
     * Waits for rank {@code rank}'s FAIL line, checks its exception class, that it names a peer and
     * an operation, and that it came between {@code atLeastMs} and {@code within} after {@code since}.
     */
    private static String awaitFailure(ChildProcess child, int rank, String exception, long since, long atLeastMs,
            Duration within) {
        ChildProcess.Line failure = child.awaitPrefix("FAIL rank=" + rank + " ", within.plusSeconds(20));
        return checkFailure(child, rank, exception, failure, since, atLeastMs, within);
    }

    /** The checks of {@link #awaitFailure} on a FAIL line already read. */
    private static String checkFailure(ChildProcess child, int rank, String exception, ChildProcess.Line failure,
            long since, long atLeastMs, Duration within) {
        String line = failure.text();
        assertTrue(line.contains(" " + exception + " "), "rank " + rank + " should fail with " + exception + ": "
                + line + "\n" + child.transcript());
        assertNamesPeerAndOperation(line);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(failure.nanos() - since);
        assertTrue(tookMs >= atLeastMs, "rank " + rank + " failed after only " + tookMs + " ms: " + line);
        assertTrue(tookMs <= within.toMillis(), "rank " + rank + " took " + tookMs + " ms: " + line);
        return line;
    }

    /** The one-line error names this rank (it starts with it), a peer rank and an operation. */
    private static void assertNamesPeerAndOperation(String line) {
        assertTrue(line.matches("FAIL rank=\\d+ peer=\\d+ op=\"[^\"]+\" \\S+ :: .+"),
                "the error should name the rank, a peer and the operation: " + line);
    }

    /** Seconds from {@code since} to the child's first FAIL line. */
    private static double seconds(ChildProcess child, long since) {
        long at = child.find(line -> line.startsWith("FAIL ")).orElseThrow().nanos();
        return (at - since) / 1e9;
    }

    /** Prints the stall warnings rank {@code rank} logged ({@code [fault] stall warning (<what>): ...}). */
    private static List<TraceChecks.StallWarning> printStallWarnings(ChildProcess child, int rank, String what) {
        List<TraceChecks.StallWarning> warnings = TraceChecks.stallWarnings(child, rank);
        warnings.forEach(warning -> System.out.println("[fault] stall warning (" + what + "): " + warning.message()));
        return warnings;
    }

    /**
     * The sequence number of the call a FAIL line names, in a {@link #loop} of {@code ring,ps}: each
     * iteration makes two calls on the one transport, numbered from 1.
     */
    private static long loopSequence(String failLine) {
        Matcher call = LOOP_CALL.matcher(failLine);
        assertTrue(call.find(), "no call of a ring,ps loop in " + failLine);
        return 2L * Integer.parseInt(call.group(2)) + (call.group(1).equals("ring") ? 1 : 2);
    }

    private static void detected(String what, String transport, double seconds) {
        System.out.printf("[fault] %s %s: detected in %.1f s%n", what, transport, seconds);
    }
}
