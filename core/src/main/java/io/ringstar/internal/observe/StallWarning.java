package io.ringstar.internal.observe;

import io.ringstar.config.TraceOptions;
import io.ringstar.spi.TransportProbe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The stall warning ({@value TraceOptions#STALL_WARNING_OPTION}): once the running call has waited
 * past the threshold, asks every peer where it is ({@link TransportProbe#askStatus}), gives them
 * up to a second to answer, and logs one WARNING naming the ranks that have not reached the call.
 * In a ring or a doubling exchange a rank often waits for a neighbour that is itself waiting, so
 * the peer a rank waits for says little; the group's answers say who is late, as Horovod's stall
 * inspector does. A rank that does not answer (a stopped process) is named as not answering.
 *
 * <p>Run on the waiting thread, from the transport's long waits ({@link CallObserver#waiting}); its
 * state is that thread's. Nothing is allocated until it warns.
 */
final class StallWarning {
    private static final System.Logger LOG = System.getLogger("io.ringstar.observe");
    /** The longest the warning waits for the peers' answers. */
    private static final long ANSWER_NANOS = 1_000_000_000L;

    private final int rank;
    private final int worldSize;
    private final long afterNanos;
    private final long answerNanos;
    /** The call the peers were asked about, and when; the call warned about. */
    private long askedFor;
    private long askedAt;
    private long warnedFor;

    StallWarning(int rank, int worldSize, Duration after) {
        this.rank = rank;
        this.worldSize = worldSize;
        this.afterNanos = after.toNanos();
        this.answerNanos = Math.min(ANSWER_NANOS, Math.max(1, afterNanos));
    }

    void check(TransportProbe transport, String operation, long sequence, long startedNanos) {
        if (warnedFor == sequence) {
            return;
        }
        long now = System.nanoTime();
        if (now - startedNanos < afterNanos) {
            return;
        }
        if (askedFor != sequence) {
            // Marked before asking: a query that has to wait for its peer waits in a round of its own.
            askedFor = sequence;
            askedAt = System.nanoTime();
            askedAt = transport.askStatus();
            return;
        }
        if (now - askedAt < answerNanos && !allAnswered(transport)) {
            return;
        }
        warnedFor = sequence;
        long[] answers = new long[worldSize];
        for (int peer = 0; peer < worldSize; peer++) {
            answers[peer] = peer == rank ? TransportProbe.NO_ANSWER : transport.statusOf(peer, askedAt);
        }
        LOG.log(System.Logger.Level.WARNING, describe(operation, sequence, now - startedNanos, answers));
    }

    private boolean allAnswered(TransportProbe transport) {
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer != rank && transport.statusOf(peer, askedAt) == TransportProbe.NO_ANSWER) {
                return false;
            }
        }
        return true;
    }

    /**
     * The warning: "allReduce #18 on rank 1: waiting 5.0 s; rank 2 has not started it (its last
     * call, #17, completed 5.2 s ago); ranks 0 and 3 are waiting too". Late ranks are those whose
     * answer puts them before this call; element {@code rank} of {@code answers} is ignored.
     */
    String describe(String operation, long sequence, long waitedNanos, long[] answers) {
        List<String> late = new ArrayList<>();
        List<Integer> lateRanks = new ArrayList<>();
        List<Integer> waitingToo = new ArrayList<>();
        List<Integer> silent = new ArrayList<>();
        List<String> other = new ArrayList<>();
        boolean anyFailed = false;
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer == rank) {
                continue;
            }
            long answer = answers[peer];
            if (answer == TransportProbe.NO_ANSWER) {
                silent.add(peer);
                continue;
            }
            int state = RankStatus.state(answer);
            long theirs = RankStatus.sequence(answer);
            String age = seconds(RankStatus.ageMillis(answer) * 1_000_000L);
            switch (state) {
                case RankStatus.NO_CALL -> {
                    lateRanks.add(peer);
                    late.add("rank " + peer + " has not started it (it has made no call yet)");
                }
                case RankStatus.IN_CALL -> {
                    if (theirs == sequence) {
                        waitingToo.add(peer);
                    } else if (theirs < sequence && RankStatus.waiting(answer)) {
                        // Behind, but blocked on a peer itself: the rank it waits for is the late one.
                        other.add("rank " + peer + " is still in #" + theirs + ", itself waiting for a peer");
                    } else if (theirs < sequence) {
                        lateRanks.add(peer);
                        late.add("rank " + peer + " has not started it (it is still in #" + theirs + ", started " + age
                                + " ago)");
                    } else {
                        other.add("rank " + peer + " is past it, in #" + theirs);
                    }
                }
                case RankStatus.BETWEEN_CALLS -> {
                    if (theirs < sequence) {
                        lateRanks.add(peer);
                        late.add("rank " + peer + " has not started it (its last call, #" + theirs + ", completed "
                                + age + " ago)");
                    } else {
                        other.add("rank " + peer + " has completed it (its last call, #" + theirs + ", completed "
                                + age + " ago)");
                    }
                }
                default -> {
                    anyFailed = true;
                    other.add("rank " + peer + " has failed (in or after #" + theirs + ")");
                }
            }
        }
        StringBuilder text = new StringBuilder(operation).append(" #").append(sequence).append(" on rank ")
                .append(rank).append(": waiting ").append(seconds(waitedNanos));
        for (String part : late) {
            text.append("; ").append(part);
        }
        if (!silent.isEmpty()) {
            text.append("; ").append(ranks(silent)).append(silent.size() == 1 ? " does" : " do")
                    .append(" not answer (stopped, or cut off)");
        }
        for (String part : other) {
            text.append("; ").append(part);
        }
        if (!waitingToo.isEmpty()) {
            text.append("; ").append(ranks(waitingToo)).append(waitingToo.size() == 1 ? " is" : " are")
                    .append(" waiting too");
        }
        // A failed rank will never complete the call: that is no slow transfer.
        if (lateRanks.isEmpty() && silent.isEmpty() && !anyFailed) {
            text.append("; every rank has reached it (a slow transfer, not a missing rank)");
        }
        text.append(". Late: ").append(lateRanks.isEmpty() ? "none" : ranks(lateRanks));
        if (!silent.isEmpty()) {
            text.append("; not answering: ").append(ranks(silent));
        }
        text.append(". The job goes on until the timeout.");
        return text.toString();
    }

    /** "rank 2", "ranks 0 and 3", "ranks 0, 1 and 3". */
    static String ranks(List<Integer> ranks) {
        if (ranks.size() == 1) {
            return "rank " + ranks.get(0);
        }
        StringBuilder text = new StringBuilder("ranks ");
        for (int i = 0; i < ranks.size(); i++) {
            text.append(ranks.get(i)).append(i == ranks.size() - 1 ? "" : i == ranks.size() - 2 ? " and " : ", ");
        }
        return text.toString();
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
    }
}
