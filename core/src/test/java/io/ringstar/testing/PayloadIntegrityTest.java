package io.ringstar.testing;

import static io.ringstar.testing.TensorFixtures.average;
import static io.ringstar.testing.TensorFixtures.callTensors;
import static io.ringstar.testing.TensorFixtures.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveMismatchException;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.InvalidConfigException;
import io.ringstar.PayloadCorruptionException;
import io.ringstar.Transport;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.testing.AggregatorConformanceTest.Algorithm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The checksum option ({@link DistributedConfig#CHECKSUM_OPTION}) over the transport a subclass
 * supplies: one bit flipped in one received message is a {@link PayloadCorruptionException} on the
 * receiving rank that names the sender, the operation, the collective and the message, and the
 * rest of the group hears of it at once; the same flip without the checksum gives wrong numbers
 * and no error (the control that shows the corruption is real); ranks configured differently fail
 * with a mismatch.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class PayloadIntegrityTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Duration LIMIT = Duration.ofSeconds(60);
    /** Far below the timeout: the others must hear from the rank that found the corruption, not time out. */
    private static final Duration PROMPT = Duration.ofSeconds(10);
    private static final int WORLD_SIZE = 3;
    /** With 4 KiB chunks, several chunks per message stream, so the second one can be the victim. */
    private static final int COUNT = 10_007;
    private static final String CHUNK_BYTES = "4096";
    /** The second payload message of the stream is corrupted, not the first, so chunk numbering shows. */
    private static final int VICTIM = 1;
    /** The sign bit of the float in the middle of the payload: every value sent here is nonzero. */
    private static final IntUnaryOperator MIDDLE_SIGN_BYTE =
            length -> MessageHeader.LENGTH + (length - MessageHeader.LENGTH) / 8 * 4 + 3;
    private static final int SIGN_BIT = 7;

    /** A group of {@code worldSize} connected transports, element {@code r} for rank {@code r}. */
    protected abstract List<Transport> createGroup(int worldSize, Duration timeout);

    /** The two collectives. */
    enum Operation {
        REDUCE("reduceGradients"), BROADCAST("broadcastParams");

        final String method;

        Operation(String method) {
            this.method = method;
        }

        INDArray[] call(GradientAggregator aggregator, INDArray[] tensors) {
            return this == REDUCE ? aggregator.reduceGradients(tensors) : aggregator.broadcastParams(tensors);
        }

        ClosedForm.Expected expected() {
            return this == REDUCE ? (t, i) -> average(WORLD_SIZE, t, i) : (t, i) -> value(0, t, i);
        }
    }

    /** Message {@link #VICTIM} from {@code sender} to {@code receiver} gets a bit of byte {@code byteOf} flipped. */
    private record Corruption(int sender, int receiver, IntUnaryOperator byteOf, int bit) {
    }

    /** The outcome of every rank, and how many bits were flipped. */
    private record Run(List<Ranks.Outcome<INDArray[]>> outcomes, int flips) {
    }

    /** One call of {@code operation} by every rank; {@code corruption} may be null for none. */
    private Run run(Algorithm algorithm, Operation operation, Corruption corruption,
            IntFunction<String> checksumOfRank) {
        List<Transport> transports = new ArrayList<>(createGroup(WORLD_SIZE, TIMEOUT));
        CorruptingTransport corrupting = null;
        if (corruption != null) {
            corrupting = new CorruptingTransport(transports.get(corruption.receiver()), corruption.sender(), VICTIM,
                    corruption.byteOf(), corruption.bit());
            transports.set(corruption.receiver(), corrupting);
        }
        List<GradientAggregator> aggregators = new ArrayList<>();
        try {
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                DistributedConfig config = DistributedConfig.builder().worldSize(WORLD_SIZE).rank(rank).timeout(TIMEOUT)
                        .option("chunkBytes", CHUNK_BYTES)
                        .option(DistributedConfig.CHECKSUM_OPTION, checksumOfRank.apply(rank)).build();
                aggregators.add(algorithm.create(config, transports.get(rank)));
            }
            List<Ranks.Outcome<INDArray[]>> outcomes = Ranks.run(WORLD_SIZE, LIMIT,
                    rank -> operation.call(aggregators.get(rank), callTensors(DataType.FLOAT, rank, COUNT)));
            return new Run(outcomes, corrupting == null ? 0 : corrupting.flips());
        } finally {
            transports.forEach(Transport::close);
            aggregators.forEach(GradientAggregator::close);
        }
    }

    /** Who sends the corrupted message to whom: a worker to the server, the server to a worker, or neighbours. */
    private static int sender(Algorithm algorithm, Operation operation) {
        if (algorithm == Algorithm.RING) {
            return 1;
        }
        return operation == Operation.REDUCE ? 2 : 0;
    }

    private static int receiver(Algorithm algorithm, Operation operation) {
        return algorithm == Algorithm.STAR && operation == Operation.REDUCE ? 0 : 2;
    }

    private static MessageKind kind(Algorithm algorithm, Operation operation) {
        if (algorithm == Algorithm.RING) {
            return operation == Operation.REDUCE ? MessageKind.RING_ALL_REDUCE : MessageKind.RING_BROADCAST;
        }
        return operation == Operation.REDUCE ? MessageKind.STAR_REDUCE : MessageKind.STAR_BROADCAST;
    }

    private static IntFunction<String> everyRank(String checksum) {
        return rank -> checksum;
    }

    @ParameterizedTest
    @CsvSource({"STAR, REDUCE", "STAR, BROADCAST", "RING, REDUCE", "RING, BROADCAST"})
    void withTheChecksumTheReceiverNamesTheSenderAndTheCorruptedChunk(Algorithm algorithm, Operation operation) {
        int sender = sender(algorithm, operation);
        int receiver = receiver(algorithm, operation);
        Run run = run(algorithm, operation, new Corruption(sender, receiver, MIDDLE_SIGN_BYTE, SIGN_BIT),
                everyRank(DistributedConfig.CHECKSUM_CRC32C));
        assertEquals(1, run.flips(), "the corrupting transport flipped one bit");

        Ranks.Outcome<INDArray[]> found = run.outcomes().get(receiver);
        PayloadCorruptionException e = assertInstanceOf(PayloadCorruptionException.class, found.error,
                "rank " + receiver + " got " + found.error);
        assertEquals(receiver, e.rank());
        assertEquals(sender, e.peerRank());
        String message = e.getMessage();
        assertTrue(message.startsWith(operation.method + " on rank " + receiver + " (peer rank " + sender + "): "),
                message);
        assertTrue(message.contains("message " + VICTIM + " (" + kind(algorithm, operation) + ") of collective #0 "
                + "from rank " + sender + " failed its CRC32C check"), message);
        assertTrue(found.elapsed.compareTo(PROMPT) < 0, "detected after " + found.elapsed);

        for (Ranks.Outcome<INDArray[]> outcome : run.outcomes()) {
            if (outcome.rank == receiver) {
                continue;
            }
            if (outcome.error == null) {
                // Only a broadcast lets a rank finish: one that never waits on the corrupted rank
                // (the star's server, a ring rank before it in the chain) got rank 0's data intact.
                assertEquals(Operation.BROADCAST, operation, "rank " + outcome.rank + " finished a reduce");
                ClosedForm.check(operation.method, outcome.rank, outcome.value, callTensors(DataType.FLOAT, 0, COUNT),
                        DataType.FLOAT, operation.expected());
                continue;
            }
            PayloadCorruptionException relayed = assertInstanceOf(PayloadCorruptionException.class, outcome.error,
                    "rank " + outcome.rank + " got " + outcome.error);
            assertTrue(relayed.getMessage().contains("rank " + receiver + " failed and stopped the group"),
                    relayed.getMessage());
            assertTrue(outcome.elapsed.compareTo(PROMPT) < 0, "rank " + outcome.rank + " took " + outcome.elapsed
                    + " against a timeout of " + TIMEOUT);
        }
        if (operation == Operation.REDUCE) {
            run.outcomes().forEach(outcome -> assertNotNull(outcome.error, "rank " + outcome.rank + " returned"));
        }
    }

    @ParameterizedTest
    @CsvSource({"STAR, REDUCE", "STAR, BROADCAST", "RING, REDUCE", "RING, BROADCAST"})
    void withoutTheChecksumTheSameFlipGivesWrongNumbersSilently(Algorithm algorithm, Operation operation) {
        int receiver = receiver(algorithm, operation);
        Run run = run(algorithm, operation,
                new Corruption(sender(algorithm, operation), receiver, MIDDLE_SIGN_BYTE, SIGN_BIT),
                everyRank(DistributedConfig.CHECKSUM_NONE));
        assertEquals(1, run.flips(), "the corrupting transport flipped one bit");
        for (Ranks.Outcome<INDArray[]> outcome : run.outcomes()) {
            assertNull(outcome.error, "rank " + outcome.rank + " noticed nothing, yet threw " + outcome.error);
        }
        INDArray[] wrong = run.outcomes().get(receiver).value;
        AssertionError differs = assertThrows(AssertionError.class, () -> ClosedForm.check(operation.method, receiver,
                wrong, callTensors(DataType.FLOAT, 0, COUNT), DataType.FLOAT, operation.expected()),
                "rank " + receiver + "'s result should be wrong");
        assertTrue(differs.getMessage().contains("tensor 0 element"), differs.getMessage());
    }

    @Test
    void aFlippedHeaderBitIsCorruptionWithTheChecksumAndAFalseMismatchWithout() {
        // Sequence number 0 becomes 1: without the checksum the receiver blames the sender for a
        // skipped call that never happened.
        Corruption sequenceBit = new Corruption(1, 2, length -> MessageHeader.SEQUENCE_OFFSET, 0);
        Run checked = run(Algorithm.RING, Operation.REDUCE, sequenceBit, everyRank(DistributedConfig.CHECKSUM_CRC32C));
        PayloadCorruptionException corruption = assertInstanceOf(PayloadCorruptionException.class,
                checked.outcomes().get(2).error, "rank 2 got " + checked.outcomes().get(2).error);
        assertEquals(1, corruption.peerRank());

        Run unchecked = run(Algorithm.RING, Operation.REDUCE, sequenceBit, everyRank(DistributedConfig.CHECKSUM_NONE));
        CollectiveMismatchException misleading = assertInstanceOf(CollectiveMismatchException.class,
                unchecked.outcomes().get(2).error, "rank 2 got " + unchecked.outcomes().get(2).error);
        assertTrue(misleading.getMessage().contains("collective #1"), misleading.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"STAR, 0", "STAR, 2", "RING, 0", "RING, 1"})
    void ranksThatDisagreeOnTheChecksumFailWithAMismatchNotNumbers(Algorithm algorithm, int oddRank) {
        for (String odd : new String[] {DistributedConfig.CHECKSUM_CRC32C, DistributedConfig.CHECKSUM_NONE}) {
            String others = odd.equals(DistributedConfig.CHECKSUM_NONE) ? DistributedConfig.CHECKSUM_CRC32C
                    : DistributedConfig.CHECKSUM_NONE;
            Run run = run(algorithm, Operation.REDUCE, null, rank -> rank == oddRank ? odd : others);
            for (Ranks.Outcome<INDArray[]> outcome : run.outcomes()) {
                CollectiveMismatchException e = assertInstanceOf(CollectiveMismatchException.class, outcome.error,
                        "rank " + outcome.rank + " with rank " + oddRank + " on " + odd + ": " + outcome.error);
                assertTrue(e.getMessage().contains("give every rank the same option checksum"), e.getMessage());
                assertTrue(outcome.elapsed.compareTo(PROMPT) < 0, "rank " + outcome.rank + " took " + outcome.elapsed);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void anUnknownChecksumIsRefusedAtConstruction(Algorithm algorithm) {
        List<Transport> transports = createGroup(1, TIMEOUT);
        try {
            DistributedConfig config = DistributedConfig.builder().option(DistributedConfig.CHECKSUM_OPTION, "md5")
                    .build();
            InvalidConfigException e = assertThrows(InvalidConfigException.class,
                    () -> algorithm.create(config, transports.get(0)));
            assertTrue(e.getMessage().contains("checksum") && e.getMessage().contains("md5")
                    && e.getMessage().contains("crc32c"), e.getMessage());
        } finally {
            transports.forEach(Transport::close);
        }
    }
}
