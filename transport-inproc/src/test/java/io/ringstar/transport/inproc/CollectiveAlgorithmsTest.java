package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.ReduceOp;
import io.ringstar.internal.algorithm.CollectiveCall;
import io.ringstar.internal.algorithm.DirectReduce;
import io.ringstar.internal.algorithm.RecursiveDoubling;
import io.ringstar.internal.algorithm.RingAllGather;
import io.ringstar.internal.algorithm.RingAllReduce;
import io.ringstar.internal.algorithm.RingBroadcast;
import io.ringstar.internal.algorithm.RingReduceScatter;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The algorithms of {@code io.ringstar.internal.algorithm} for the general collectives, driven directly over
 * in-process groups of 1 to 8 ranks: every element of every result is checked bit for bit against
 * its closed form ({@link Vectors}), and the results that every rank holds are compared across
 * ranks. Element counts include 0 and counts that no chunk or segment divides, and chunks of 3 and
 * 64 elements, so that pipelining and uneven chunks are exercised. Every op and type runs: SUM and
 * AVG of FLOAT, DOUBLE and INT over every count, the rest over a sample. Disagreements and the
 * order of operands are tested in
 * {@link CollectiveAlgorithmsDisagreementTest} and {@link CollectiveAlgorithmsOrderTest}.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CollectiveAlgorithmsTest {
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
    static final Duration WATCHDOG = Duration.ofSeconds(150);
    private static final ElementType[] TYPES = {ElementType.FLOAT, ElementType.DOUBLE, ElementType.INT,
        ElementType.LONG, ElementType.HALF, ElementType.BFLOAT16};
    /** The types every count runs for; the others run the sample. */
    private static final List<ElementType> MAIN_TYPES = List.of(ElementType.FLOAT, ElementType.DOUBLE,
            ElementType.INT);
    private static final long[] ALL_COUNTS = {0, 1, 2, 7, 1009, 100_003};
    private static final long[] SAMPLE_COUNTS = {0, 1, 7, 1009};
    private static final long LARGE = 100_003;
    /** A result element no algorithm writes, to see what was left alone. */
    private static final double UNTOUCHED = 1e6;

    /** One collective of the sweep. */
    record Case(ElementType type, ReduceOp op, long count, int chunk) {
        @Override
        public String toString() {
            return count + " " + type + " " + op + " in chunks of " + chunk;
        }
    }

    /**
     * The sweep: every type and op (but products of 16-bit floats, which round); FLOAT, DOUBLE and
     * INT with SUM and AVG over every count, the rest over a sample; chunks of 3 and 64 (256 for the
     * large count, whose chunks still cross every segment many times).
     */
    static List<Case> cases(boolean reducing) {
        List<Case> cases = new ArrayList<>();
        for (ElementType type : TYPES) {
            for (ReduceOp op : reducing ? ReduceOp.values() : new ReduceOp[] {null}) {
                boolean sixteenBits = type.bytes() == 2;
                if ((op == ReduceOp.AVG && !type.isFloatingPoint()) || (op == ReduceOp.PROD && sixteenBits)) {
                    continue;
                }
                boolean full = MAIN_TYPES.contains(type) && (op == null || op == ReduceOp.SUM || op == ReduceOp.AVG);
                for (long count : full ? ALL_COUNTS : SAMPLE_COUNTS) {
                    for (int chunk : count >= LARGE ? new int[] {256} : new int[] {3, 64}) {
                        cases.add(new Case(type, op, count, chunk));
                    }
                }
            }
        }
        return cases;
    }

    /**
     * The case for a collective whose count is one rank's share: the large count is shared out
     * (so the whole stays near it), the others are each rank's.
     */
    static Case perRank(Case c, int worldSize) {
        return c.count < LARGE ? c : new Case(c.type, c.op, c.count / worldSize, c.chunk);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void recursiveDoublingAllReduces(int worldSize) {
        List<List<Long>> crcs = AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            List<Long> seen = new ArrayList<>();
            for (Case c : cases(true)) {
                CollectiveCall call = session.begin("allReduce", c.op, MessageHeader.NO_ROOT, c.type, c.count);
                ByteBuffer source = Vectors.values(c.type, session.rank, 0, c.count);
                // Chunks of 3 run in place; chunks of 64 from a read-only input, which must stay as it was.
                boolean inPlace = c.chunk == 3;
                ByteBuffer result = inPlace ? source : Vectors.allocate(c.type, c.count, UNTOUCHED);
                RecursiveDoubling.run(call, inPlace ? source : source.asReadOnlyBuffer(), result, c.chunk);
                String what = "recursive doubling of " + c + " on rank " + session.rank + " of " + worldSize;
                Vectors.check(what, c.type, result, c.count, i -> Vectors.expected(c.op, c.type, worldSize, i));
                if (!inPlace) {
                    Vectors.check(what + " (input)", c.type, source, c.count, i -> Vectors.value(session.rank, i));
                }
                seen.add(Vectors.crc(result));
            }
            return seen;
        });
        assertSameOnEveryRank(crcs);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void barrierWaitsForEveryRank(int worldSize) {
        AtomicIntegerArray entered = new AtomicIntegerArray(worldSize);
        AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            for (int round = 1; round <= 3; round++) {
                // Ranks enter at different times; none may leave before the last has entered.
                Thread.sleep((session.rank * 7 + round) % 5 * 15L);
                entered.set(session.rank, round);
                RecursiveDoubling.barrier(session.begin("barrier", null, MessageHeader.NO_ROOT, ElementType.FLOAT, 0));
                for (int peer = 0; peer < worldSize; peer++) {
                    assertTrue(entered.get(peer) >= round, "rank " + session.rank + " left barrier " + round
                            + " before rank " + peer + " entered it");
                }
            }
            return null;
        });
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void ringAllGathers(int worldSize) {
        List<List<Long>> crcs = AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            List<Long> seen = new ArrayList<>();
            for (Case sweep : cases(false)) {
                Case c = perRank(sweep, worldSize);
                CollectiveCall call = session.begin("allGather", null, MessageHeader.NO_ROOT, c.type, c.count);
                long total = c.count * worldSize;
                ByteBuffer result = Vectors.allocate(c.type, total, UNTOUCHED);
                for (long i = 0; i < c.count; i++) {
                    Vectors.put(c.type, result, session.rank * c.count + i, Vectors.value(session.rank, i));
                }
                RingAllGather.run(call, result, c.chunk);
                Vectors.check("ring all-gather of " + c + " on rank " + session.rank + " of " + worldSize, c.type,
                        result, total, i -> Vectors.value((int) (i / c.count), i % c.count));
                seen.add(Vectors.crc(result));
            }
            return seen;
        });
        assertSameOnEveryRank(crcs);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void ringReduceScatters(int worldSize) {
        AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            for (Case sweep : cases(true)) {
                // c.count is each rank's segment here; the input holds one per rank.
                Case c = perRank(sweep, worldSize);
                long total = c.count * worldSize;
                CollectiveCall call = session.begin("reduceScatter", c.op, MessageHeader.NO_ROOT, c.type, total);
                ByteBuffer source = Vectors.values(c.type, session.rank, 0, total);
                ByteBuffer scratch = Vectors.allocate(c.type, total, UNTOUCHED);
                ByteBuffer result = Vectors.allocate(c.type, c.count, UNTOUCHED);
                RingReduceScatter.run(call, source.asReadOnlyBuffer(), scratch, result, c.chunk);
                long from = session.rank * c.count;
                String what = "ring reduce-scatter of " + c + " per rank on rank " + session.rank + " of "
                        + worldSize;
                Vectors.check(what, c.type, result, c.count, i -> Vectors.expected(c.op, c.type, worldSize, from + i));
                Vectors.check(what + " (input)", c.type, source, total, i -> Vectors.value(session.rank, i));
            }
            return null;
        });
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void ringBroadcastsFromEveryRoot(int worldSize) {
        List<List<Long>> crcs = AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            List<Long> seen = new ArrayList<>();
            int index = 0;
            for (Case c : cases(false)) {
                // Every root, in turn: over the sweep each root sees every type and most counts.
                int root = index++ % worldSize;
                CollectiveCall call = session.begin("broadcast", null, root, c.type, c.count);
                ByteBuffer source = Vectors.values(c.type, session.rank, 0, c.count);
                ByteBuffer result = Vectors.allocate(c.type, c.count, UNTOUCHED);
                RingBroadcast.run(call, source.asReadOnlyBuffer(), result, c.chunk);
                Vectors.check("ring broadcast from rank " + root + " of " + c + " on rank " + session.rank + " of "
                        + worldSize, c.type, result, c.count, i -> Vectors.value(root, i));
                seen.add(Vectors.crc(result));
            }
            return seen;
        });
        assertSameOnEveryRank(crcs);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void directReducesToEveryRoot(int worldSize) {
        AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            int index = 0;
            for (Case c : cases(true)) {
                int root = index++ % worldSize;
                CollectiveCall call = session.begin("reduce", c.op, root, c.type, c.count);
                ByteBuffer source = Vectors.values(c.type, session.rank, 0, c.count);
                ByteBuffer result = Vectors.allocate(c.type, c.count, UNTOUCHED);
                DirectReduce.run(call, source.asReadOnlyBuffer(), result, c.chunk);
                String what = "direct reduce to rank " + root + " of " + c + " on rank " + session.rank + " of "
                        + worldSize;
                Vectors.check(what, c.type, result, c.count, session.rank == root
                        ? i -> Vectors.expected(c.op, c.type, worldSize, i) : i -> UNTOUCHED);
            }
            return null;
        });
    }

    /** Every algorithm once with the checksum on, where each message is gathered whole and checked first. */
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {3, 5})
    void everyAlgorithmWithTheChecksum(int worldSize) {
        List<List<Long>> crcs = AlgorithmGroup.runAll(worldSize, true, CALL_TIMEOUT, WATCHDOG, session -> {
            List<Long> seen = new ArrayList<>();
            ElementType type = ElementType.FLOAT;
            long count = 1009;
            int rank = session.rank;
            ByteBuffer source = Vectors.values(type, rank, 0, count * worldSize);
            ByteBuffer result = Vectors.allocate(type, count * worldSize, UNTOUCHED);
            RecursiveDoubling.run(session.begin("allReduce", ReduceOp.AVG, MessageHeader.NO_ROOT, type, count),
                    source, result, 64);
            Vectors.check("checksummed recursive doubling", type, result, count,
                    i -> Vectors.expected(ReduceOp.AVG, type, worldSize, i));
            seen.add(Vectors.crc(result));
            RecursiveDoubling.barrier(session.begin("barrier", null, MessageHeader.NO_ROOT, type, 0));
            RingReduceScatter.run(session.begin("reduceScatter", ReduceOp.SUM, MessageHeader.NO_ROOT, type,
                    count * worldSize), source, Vectors.allocate(type, count * worldSize, 0), result, 64);
            Vectors.check("checksummed reduce-scatter", type, result, count,
                    i -> Vectors.expected(ReduceOp.SUM, type, worldSize, rank * count + i));
            DirectReduce.run(session.begin("reduce", ReduceOp.MAX, 1, type, count), source, result, 64);
            if (rank == 1) {
                Vectors.check("checksummed direct reduce", type, result, count,
                        i -> Vectors.expected(ReduceOp.MAX, type, worldSize, i));
            }
            RingBroadcast.run(session.begin("broadcast", null, 2, type, count), source, result, 64);
            Vectors.check("checksummed broadcast", type, result, count, i -> Vectors.value(2, i));
            ByteBuffer gathered = Vectors.allocate(type, count * worldSize, UNTOUCHED);
            int blockBytes = Math.toIntExact(count * type.bytes());
            gathered.put(rank * blockBytes, source, 0, blockBytes);
            RingAllGather.run(session.begin("allGather", null, MessageHeader.NO_ROOT, type, count), gathered, 64);
            Vectors.check("checksummed all-gather", type, gathered, count * worldSize,
                    i -> Vectors.value((int) (i / count), i % count));
            seen.add(Vectors.crc(gathered));
            return seen;
        });
        assertSameOnEveryRank(crcs);
    }

    /**
     * The ring all-reduce at two ranks, whose pair exchange gives way to the ring's halves
     * (reduce-scatter, all-gather) from {@link RingAllReduce#HALVES_FROM_BYTES}: closed forms on
     * both sides of that size (in place, where the exchange's only chunk may not be posted under
     * its own send, and not), and for random values of every floating type and op, where the order
     * of operands would show, the same bits from the exchange and from the halves on every rank.
     * The last case sends 8 MiB each way in 1 MiB chunks while the peer does the same.
     */
    @Test
    void ringAllReduceGivesTheSameBitsByPairExchangeAndByHalves() {
        int worldSize = 2;
        long threshold = RingAllReduce.HALVES_FROM_BYTES / ElementType.FLOAT.bytes();
        List<List<Long>> crcs = AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            List<Long> seen = new ArrayList<>();
            for (long count : new long[] {1, threshold - 1, threshold, threshold + 1, 2L << 20}) {
                for (boolean inPlace : new boolean[] {true, false}) {
                    // In place, one chunk: the exchange's receive writes where its own send reads.
                    int chunk = count > threshold + 1 ? 1 << 18 : inPlace ? (int) count + 1 : 64;
                    CollectiveCall call = session.begin("allReduce", ReduceOp.SUM, MessageHeader.NO_ROOT,
                            ElementType.FLOAT, count);
                    ByteBuffer source = Vectors.values(ElementType.FLOAT, session.rank, 0, count);
                    ByteBuffer result = inPlace ? source : Vectors.allocate(ElementType.FLOAT, count, UNTOUCHED);
                    RingAllReduce.run(call, source, result, chunk);
                    Vectors.check("ring all-reduce of " + count + " FLOAT" + (inPlace ? " in place" : "") + " on rank "
                            + session.rank + " of " + worldSize, ElementType.FLOAT, result, count,
                            i -> Vectors.expected(ReduceOp.SUM, ElementType.FLOAT, worldSize, i));
                    seen.add(Vectors.crc(result));
                }
            }
            Random random = new Random(17 + session.rank);
            for (ElementType type : new ElementType[] {ElementType.FLOAT, ElementType.DOUBLE, ElementType.HALF,
                    ElementType.BFLOAT16}) {
                for (ReduceOp op : ReduceOp.values()) {
                    long count = 1009;
                    ByteBuffer source = Vectors.allocate(type, count, 0);
                    for (long i = 0; i < count; i++) {
                        Vectors.put(type, source, i, (random.nextDouble() - 0.5) * Math.pow(2, random.nextInt(20)));
                    }
                    long[] bits = null;
                    for (long halvesFrom : new long[] {0, Long.MAX_VALUE}) {
                        CollectiveCall call = session.begin("allReduce", op, MessageHeader.NO_ROOT, type, count);
                        ByteBuffer result = Vectors.allocate(type, count, UNTOUCHED);
                        RingAllReduce.run(call, source.asReadOnlyBuffer(), result, 64, halvesFrom);
                        long[] now = new long[(int) count];
                        for (int i = 0; i < count; i++) {
                            now[i] = Vectors.bits(type, result, i);
                        }
                        if (bits != null) {
                            assertEquals(Arrays.toString(bits), Arrays.toString(now),
                                    "the halves and the pair exchange disagree on " + op + " of " + type);
                        }
                        bits = now;
                        seen.add(Vectors.crc(result));
                    }
                }
            }
            return seen;
        });
        assertSameOnEveryRank(crcs);
    }

    static void assertSameOnEveryRank(List<List<Long>> crcs) {
        for (int rank = 1; rank < crcs.size(); rank++) {
            assertEquals(crcs.get(0), crcs.get(rank), "the results' bytes of rank " + rank + " differ from rank 0's");
        }
    }
}
