package io.ringstar.testing;

import io.ringstar.GradientAggregator;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * How the child JVMs of system tests end a loop that runs until told to stop: only rank 0 reads
 * the order, and it broadcasts its decision after every iteration, so that every rank makes the
 * same calls and none waits for a call the others will not make.
 */
public final class StopVote {
    private StopVote() {
    }

    /**
     * Broadcasts rank 0's {@code stop} (the other ranks' is ignored) with one
     * {@code broadcastParams} call; blocks as that call does.
     *
     * @return whether the loop ends now, the same on every rank
     * @throws AssertionError if the broadcast flag is neither 0 nor 1
     */
    public static boolean decide(GradientAggregator aggregator, int rank, boolean stop) {
        float mine = rank == 0 && stop ? 1f : 0f;
        INDArray[] flag = aggregator.broadcastParams(Nd4j.scalar(DataType.FLOAT, mine));
        float decided = flag[0].getFloat(0);
        if (decided != 0f && decided != 1f) {
            throw new AssertionError("rank " + rank + ": the broadcast stop flag is " + decided);
        }
        return decided == 1f;
    }
}
