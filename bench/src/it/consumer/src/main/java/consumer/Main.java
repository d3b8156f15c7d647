package consumer;

import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.Transports;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A library user's first program: two ranks as two threads of this JVM, one {@code reduceGradients}
 * each, the average checked against its closed form. Exits 0 and prints one line when every element
 * is right on both ranks; any failure ends it with an exception (exit status 1).
 */
public final class Main {

    private static final int WORLD_SIZE = 2;
    private static final int ELEMENTS = 3;

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        ExecutorService ranks = Executors.newFixedThreadPool(WORLD_SIZE);
        try {
            List<Future<float[]>> averages = new ArrayList<>();
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                int thisRank = rank;
                averages.add(ranks.submit(() -> averageOnRank(thisRank)));
            }
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                check(rank, averages.get(rank).get(60, TimeUnit.SECONDS));
            }
        } finally {
            ranks.shutdownNow();
        }
        System.out.println("consumer: " + WORLD_SIZE + " ranks averaged " + ELEMENTS + " elements, all right");
    }

    /** The README's example: rank r's gradient is (r + 1) * {1, 2, 3}; this returns the average over all ranks. */
    static float[] averageOnRank(int rank) {
        DistributedConfig config = DistributedConfig.builder()
                .worldSize(2).rank(rank)
                .coordinatorAddr("127.0.0.1:29500")   // in-process: ranks with the same address form one group
                .transport("inproc")
                .timeout(Duration.ofSeconds(30))
                .build();
        try (GradientAggregator aggregator = new AllReduceAggregator(config, Transports.open(config))) {
            INDArray gradient = Nd4j.createFromArray(1f, 2f, 3f).muli(rank + 1);
            return aggregator.reduceGradients(gradient)[0].toFloatVector();   // {1.5, 3, 4.5} on both ranks
        }
    }

    /** The average of (r + 1) * (i + 1) over ranks 0 and 1 is 1.5 * (i + 1), exact in float. */
    private static void check(int rank, float[] average) {
        if (average.length != ELEMENTS) {
            throw new AssertionError("rank " + rank + ": " + average.length + " elements, expected " + ELEMENTS);
        }
        for (int i = 0; i < ELEMENTS; i++) {
            float expected = 1.5f * (i + 1);
            if (average[i] != expected) {
                throw new AssertionError("rank " + rank + ": element " + i + " is " + average[i] + ", expected "
                        + expected);
            }
        }
    }
}
