package io.ringstar.bench;

import io.ringstar.GradientAggregator;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.ranks.RankPlacement;
import io.ringstar.ranks.RankThreads;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** The check, before the first row, that every rank of a group was given the same sweep. */
final class PlanAgreement {
    /** What one rank learnt from the plan check. */
    private record PlanCheck(double[] rankZeroPlan, List<Integer> differingRanks) {
    }

    private PlanAgreement() {
    }

    /**
     * Checks that every rank runs the same sweep as rank 0: rank 0 broadcasts its plan (the flags
     * that decide which calls a rank makes and how many, {@link BenchSettings#plan}), each
     * rank compares it with its own, and an all-reduce of one flag per rank tells every rank who
     * differs. Ranks given different {@code --iters}, say, would otherwise call different numbers
     * of collectives and fail later with a timeout or a mismatch that hides the cause.
     *
     * @throws PlanMismatchException on every rank when any rank differs, naming the ranks and, on a rank
     *     that differs, its flags against rank 0's
     */
    static void check(BenchSettings settings, RankPlacement placement, RankThreads threads,
            List<GradientAggregator> control) {
        double[] mine = settings.plan().stream().mapToDouble(BenchSettings.PlanEntry::value).toArray();
        int worldSize = placement.config().worldSize();
        List<PlanCheck> checks = threads.run(local -> {
            GradientAggregator aggregator = control.get(local);
            INDArray own = Nd4j.createFromArray(mine);
            INDArray[] fromRankZero = aggregator.broadcastParams(own);
            double[] rankZeroPlan = fromRankZero[0].toDoubleVector();
            TensorMemory.close(fromRankZero);
            own.close();
            INDArray vote = Nd4j.zeros(DataType.DOUBLE, worldSize);
            if (!Arrays.equals(mine, rankZeroPlan)) {
                vote.putScalar(placement.groupRank(local), 1.0);
            }
            INDArray[] votes = aggregator.reduceGradients(vote);
            vote.close();
            List<Integer> differing = new ArrayList<>();
            for (int rank = 0; rank < worldSize; rank++) {
                if (Math.round(votes[0].getDouble(rank) * worldSize) != 0) {
                    differing.add(rank);
                }
            }
            TensorMemory.close(votes);
            return new PlanCheck(rankZeroPlan, differing);
        }, settings.timeout().multipliedBy(2).plusSeconds(30));
        PlanCheck check = checks.get(0);
        if (check.differingRanks().isEmpty()) {
            return;
        }
        int rank = placement.groupRank(0);
        if (placement.oneRankPerProcess() && check.differingRanks().contains(rank)) {
            List<String> differences = new ArrayList<>();
            List<BenchSettings.PlanEntry> plan = settings.plan();
            for (int i = 0; i < plan.size(); i++) {
                BenchSettings.PlanEntry entry = plan.get(i);
                if (entry.value() != check.rankZeroPlan()[i]) {
                    differences.add(entry.flag() + " " + entry.describe(entry.value()) + " here but "
                            + entry.describe(check.rankZeroPlan()[i]) + " on rank 0");
                }
            }
            throw new PlanMismatchException("rank " + rank + " was given other bench flags than rank 0: "
                    + String.join(", ", differences) + "; give every rank the same flags");
        }
        List<Integer> differing = check.differingRanks();
        String ranks = differing.stream().map(String::valueOf).collect(Collectors.joining(", "));
        throw new PlanMismatchException((differing.size() == 1 ? "rank " + ranks + " was" : "ranks " + ranks + " were")
                + " given other bench flags than rank 0 (each says which); give every rank the same flags");
    }
}
