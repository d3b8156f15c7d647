package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveHandle;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Communicator;
import io.ringstar.InvalidConfigException;
import io.ringstar.PeerFailureException;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The failure rules of the communicator, each call in turn: the first failure poisons every later
 * call, argument errors are refused before anything is sent, a rank that dies fails its peers'
 * handles naming it, no wait outlasts the timeout, and a closed communicator takes no calls.
 */
public abstract class CommunicatorFailureRules extends CommunicatorFailureCases {
    /** Every call of the communicator, by name, each with tensors of its own for {@code rank} of 3. */
    private static Map<String, Function<Communicator, Executable>> everyCall(int rank) {
        Map<String, Function<Communicator, Executable>> calls = new LinkedHashMap<>();
        calls.put("allReduce", c -> () -> use(rank, t -> c.allReduce(ReduceOp.SUM, t)));
        calls.put("allReduceAsync", c -> () -> use(rank, t -> c.allReduceAsync(ReduceOp.SUM, t).await()));
        calls.put("broadcast", c -> () -> use(rank, t -> c.broadcast(0, t)));
        calls.put("broadcastAsync", c -> () -> use(rank, t -> c.broadcastAsync(0, t).await()));
        calls.put("reduce", c -> () -> use(rank, t -> c.reduce(0, ReduceOp.MAX, t)));
        calls.put("allGather", c -> () -> use(rank, t -> TensorMemory.close(c.allGather(t))));
        calls.put("reduceScatter", c -> () -> use(rank, t -> TensorMemory.close(c.reduceScatter(ReduceOp.SUM, t))));
        calls.put("barrier", c -> c::barrier);
        return calls;
    }

    private static void use(int rank, java.util.function.Consumer<INDArray> call) {
        INDArray tensor = vector(ElementType.FLOAT, rank, 6);
        try {
            call.accept(tensor);
        } finally {
            TensorMemory.close(tensor);
        }
    }

    /** The operation's name in messages: a non-blocking call is named as its blocking twin. */
    private static String operation(String call) {
        return call.replace("Async", "");
    }

    @Test
    void theFirstFailurePoisonsEveryLaterCall() {
        List<Ranks.Outcome<Object>> outcomes = groups().own(3, FAILURE_TIMEOUT, RING, (rank, communicator) -> {
            CollectiveException first = assertThrows(CollectiveMismatchException.class,
                    () -> use(rank, t -> communicator.allReduce(rank == 1 ? ReduceOp.MAX : ReduceOp.SUM, t)));
            for (Map.Entry<String, Function<Communicator, Executable>> call : everyCall(rank).entrySet()) {
                long start = System.nanoTime();
                CollectiveException again = assertThrows(CollectiveMismatchException.class,
                        call.getValue().apply(communicator), call.getKey() + " after a failure");
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5),
                        call.getKey() + " after a failure fails at once");
                assertSame(first, again.getCause(), call.getKey() + " carries the first failure as its cause");
                assertTrue(again.getMessage().startsWith(operation(call.getKey()) + " on rank " + rank),
                        again.getMessage());
            }
            return null;
        });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    @ParameterizedTest
    @ValueSource(strings = {"INT", "LONG"})
    void argumentErrorsAreRefusedBeforeAnythingIsSent(String typeName) {
        ElementType integer = ElementType.valueOf(typeName);
        int worldSize = 3;
        List<Ranks.Outcome<Object>> outcomes = groups().reused(worldSize, RING, (rank, communicator) -> {
            INDArray floats = vector(ElementType.FLOAT, rank, 6);
            INDArray integers = vector(integer, rank, 6);
            INDArray seven = vector(ElementType.FLOAT, rank, 7);
            try {
                INDArray[] mixed = {floats, integers};
                List<Executable> averages = List.of(() -> communicator.allReduce(ReduceOp.AVG, mixed),
                        () -> communicator.allReduceAsync(ReduceOp.AVG, mixed),
                        () -> communicator.reduce(0, ReduceOp.AVG, mixed),
                        () -> communicator.reduceScatter(ReduceOp.AVG, integers));
                for (Executable average : averages) {
                    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, average);
                    assertTrue(e.getMessage().contains("AVG") && e.getMessage().contains(typeName)
                            && e.getMessage().contains("on rank " + rank), e.getMessage());
                }
                IllegalArgumentException notMultiple = assertThrows(IllegalArgumentException.class,
                        () -> communicator.reduceScatter(ReduceOp.SUM, seven));
                String message = notMultiple.getMessage();
                assertTrue(message.matches("(?s).*\\b7\\b.*") && message.matches("(?s).*\\b3\\b.*"),
                        "names the length and the world size: " + message);
                for (int root : new int[] {-1, worldSize}) {
                    assertThrows(IllegalArgumentException.class, () -> communicator.broadcast(root, floats));
                    assertThrows(IllegalArgumentException.class, () -> communicator.broadcastAsync(root, floats));
                    assertThrows(IllegalArgumentException.class, () -> communicator.reduce(root, ReduceOp.SUM, floats));
                }
                assertThrows(IllegalArgumentException.class, () -> communicator.allReduce(null, floats));
                assertThrows(IllegalArgumentException.class, () -> communicator.allReduce(ReduceOp.SUM, floats, null));
                // Nothing was sent: the group is in step, and the sum is right.
                communicator.allReduce(ReduceOp.SUM, integers);
                CollectiveClosedForm.check("allReduce after the refusals on rank " + rank, integers, integer,
                        new long[] {6}, i -> CollectiveClosedForm.expected(ReduceOp.SUM, integer, worldSize, 0, i));
                return null;
            } finally {
                TensorMemory.close(floats, integers, seven);
            }
        });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    @ParameterizedTest
    @ValueSource(strings = {"allReduceAsync ring", "allReduceAsync doubling", "allReduceAsync star", "broadcastAsync"})
    void aRankThatDiesFailsItsPeersHandlesNamingIt(String call) {
        String algorithm = call.contains(" ") ? call.substring(call.indexOf(' ') + 1) : Communicator.ALGORITHM_AUTO;
        Map<String, String> options = Map.of(Communicator.ALGORITHM_OPTION, algorithm);
        List<Ranks.Outcome<Object>> outcomes = groups().own(3, FAILURE_TIMEOUT, options, (rank, communicator) -> {
            if (rank == 1) {
                Thread.sleep(300);
                communicator.close();
                return null;
            }
            INDArray tensor = vector(ElementType.FLOAT, rank, 100_000);
            try {
                CollectiveHandle handle = call.startsWith("allReduce")
                        ? communicator.allReduceAsync(ReduceOp.SUM, tensor)
                        : communicator.broadcastAsync(0, tensor);
                try {
                    handle.await();
                } finally {
                    assertTrue(handle.isDone(), "a handle whose await threw is done");
                    ExecutionException viaFuture = assertThrows(ExecutionException.class,
                            () -> handle.toCompletableFuture().get(1, TimeUnit.SECONDS));
                    assertInstanceOf(PeerFailureException.class, viaFuture.getCause(),
                            "the future fails as await does");
                }
                return null;
            } finally {
                TensorMemory.close(tensor);
            }
        });
        for (int rank : new int[] {0, 2}) {
            Ranks.Outcome<Object> outcome = outcomes.get(rank);
            assertInstanceOf(PeerFailureException.class, outcome.error, "rank " + rank + ": " + outcome.error);
            assertTrue(outcome.elapsed.compareTo(Duration.ofSeconds(10)) < 0,
                    "rank " + rank + " took " + outcome.elapsed + " against a " + FAILURE_TIMEOUT + " timeout");
            assertTrue(outcome.error.getMessage().matches("(?s).*\\brank 1\\b.*"), outcome.error.getMessage());
        }
    }

    @Test
    void aHandleOfACommunicatorClosedUnderItThrowsIllegalState() {
        // Rank 1 issues an all-reduce and closes its communicator at once; the peers issue theirs only
        // later, so the collective cannot have completed.
        List<Ranks.Outcome<Object>> outcomes = groups().own(3, FAILURE_TIMEOUT, RING, (rank, communicator) -> {
            INDArray tensor = vector(ElementType.FLOAT, rank, 100_000);
            try {
                if (rank != 1) {
                    Thread.sleep(300);
                    communicator.allReduceAsync(ReduceOp.SUM, tensor).await();
                    return null;
                }
                CollectiveHandle handle = communicator.allReduceAsync(ReduceOp.SUM, tensor);
                communicator.close();
                assertThrows(IllegalStateException.class, handle::await, "the handle of a closed communicator");
                return null;
            } finally {
                TensorMemory.close(tensor);
            }
        });
        outcomes.get(1).valueOrFail();
        for (int rank : new int[] {0, 2}) {
            assertInstanceOf(PeerFailureException.class, outcomes.get(rank).error, "rank " + rank);
        }
    }

    @Test
    void awaitNeverWaitsPastTheTimeout() {
        Duration timeout = Duration.ofSeconds(1);
        // Rank 2 stays away until the others have given up (or five timeouts have passed).
        CountDownLatch othersDone = new CountDownLatch(2);
        List<Ranks.Outcome<Object>> outcomes = groups().own(3, timeout, RING, (rank, communicator) -> {
            if (rank == 2) {
                othersDone.await(timeout.toMillis() * 5, TimeUnit.MILLISECONDS);
                return null;
            }
            INDArray first = vector(ElementType.FLOAT, rank, 1000);
            INDArray second = vector(ElementType.DOUBLE, rank, 1000);
            try {
                CollectiveHandle firstHandle = communicator.allReduceAsync(ReduceOp.SUM, first);
                CollectiveHandle secondHandle = communicator.broadcastAsync(0, second);
                CollectiveException e = assertThrows(CollectiveTimeoutException.class, firstHandle::await);
                assertTrue(e.getMessage().startsWith("allReduce on rank " + rank), e.getMessage());
                // Queued behind the first, with a deadline from its own issue: over by now, or nearly.
                assertThrows(CollectiveTimeoutException.class, secondHandle::await);
                assertThrows(CollectiveTimeoutException.class, () -> communicator.allReduce(ReduceOp.SUM, first));
                return null;
            } finally {
                othersDone.countDown();
                TensorMemory.close(first, second);
            }
        });
        for (int rank = 0; rank < 2; rank++) {
            Ranks.Outcome<Object> outcome = outcomes.get(rank);
            outcome.valueOrFail();
            // Loosely: the deadline and the handle's grace, with room for a loaded machine.
            assertTrue(outcome.elapsed.compareTo(timeout.multipliedBy(4)) < 0,
                    "rank " + rank + " took " + outcome.elapsed + " with a timeout of " + timeout);
        }
    }

    @Test
    void aBlockingCallWithoutItsRootTimesOut() {
        // The root of a broadcast never calls: the others wait for its data, never past the timeout.
        Duration timeout = Duration.ofSeconds(1);
        CountDownLatch othersDone = new CountDownLatch(2);
        List<Ranks.Outcome<Object>> outcomes = groups().own(3, timeout, RING, (rank, communicator) -> {
            if (rank == 0) {
                othersDone.await(timeout.toMillis() * 5, TimeUnit.MILLISECONDS);
                return null;
            }
            try {
                use(rank, t -> communicator.broadcast(0, t));
                return null;
            } finally {
                othersDone.countDown();
            }
        });
        assertAllFailWith(CollectiveTimeoutException.class, outcomes.subList(1, 3), timeout.multipliedBy(4),
                "broadcast without its root");
    }

    @Test
    void anUnknownAlgorithmIsRefusedWhenTheCommunicatorIsMade() {
        List<Transport> transports = createGroup(1, FAILURE_TIMEOUT);
        try {
            InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> new Communicator(
                    groups().config(1, 0, FAILURE_TIMEOUT, Map.of(Communicator.ALGORITHM_OPTION, "butterfly")),
                    Transports.borrowed(transports.get(0))).close());
            assertTrue(e.getMessage().contains(Communicator.ALGORITHM_OPTION) && e.getMessage().contains("butterfly"),
                    e.getMessage());
        } finally {
            Ranks.closeAll(transports);
        }
    }

    @Test
    void aClosedCommunicatorTakesNoCalls() {
        List<Ranks.Outcome<Object>> outcomes = groups().reused(2, RING, (rank, communicator) -> {
            communicator.close();
            communicator.close();
            for (Map.Entry<String, Function<Communicator, Executable>> call : everyCall(rank).entrySet()) {
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        call.getValue().apply(communicator), call.getKey() + " after close");
                assertTrue(e.getMessage().startsWith(operation(call.getKey()) + " on rank " + rank)
                        && e.getMessage().contains("closed"), e.getMessage());
            }
            assertEquals(rank, communicator.rank(), "the rank is still known");
            return null;
        });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }
}
