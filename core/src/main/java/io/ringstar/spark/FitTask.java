package io.ringstar.spark;

import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.checkpoint.Checkpoint;
import io.ringstar.internal.tensor.TensorMemory;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/**
 * One rank of a {@link SparkDataParallel#fit}, run by {@link SparkRanks} on an executor: reads its
 * partition into memory, agrees with the other ranks on the steps ({@link MinibatchPlan}) and on
 * the step to start at, then trains its copy of the network through {@link io.ringstar.dl4j.DataParallel}
 * for every epoch, rank 0 saving checkpoints, and returns its {@link RankOutcome}.
 *
 * <p>One transport serves the whole task: a {@link Communicator} borrows it for the agreement,
 * then the aggregator for the training.
 */
final class FitTask implements RankTask<DataSet, RankOutcome>, ReadsWholePartition {
    private static final long serialVersionUID = 1L;
    private static final System.Logger LOG = System.getLogger(SparkDataParallel.class.getName());

    private final SparkNetwork.Kind kind;
    /** The driver's network as {@link SparkNetwork#write} wrote it. */
    private final byte[] network;
    private final int epochs;
    private final FitSettings settings;
    private final String fitId;

    FitTask(SparkNetwork.Kind kind, byte[] network, int epochs, FitSettings settings, String fitId) {
        this.kind = kind;
        this.network = network;
        this.epochs = epochs;
        this.settings = settings;
        this.fitId = fitId;
    }

    /** Where training starts: the global step, and on rank 0 the checkpoint it resumes from (or null). */
    private record Start(MinibatchPlan plan, long step, Checkpoint checkpoint) {
    }

    @Override
    public RankOutcome run(DistributedConfig config, Iterator<DataSet> partition) throws Exception {
        long began = System.nanoTime();
        int attempt = SparkRanks.stageAttempt();
        List<DataSet> minibatches = new ArrayList<>();
        partition.forEachRemaining(minibatches::add);
        try (SparkNetwork net = SparkNetwork.read(kind, network)) {
            // The partition was read before the ranks met at SparkRanks' barrier (ReadsWholePartition).
            try (Transport transport = Transports.open(config)) {
                Start start = agree(config, transport, minibatches, attempt, net.params().length());
                if (start.checkpoint() != null) {
                    FitCheckpoints.install(start.checkpoint(), net);
                }
                return train(config, transport, net, start, minibatches, attempt, began);
            }
        }
    }

    /**
     * The plan and the starting step, the same on every rank: two all-gathers of the ranks' counts,
     * then, when a checkpoint may be resumed from, rank 0's choice broadcast.
     */
    private Start agree(DistributedConfig config, Transport transport, List<DataSet> minibatches, int attempt,
            long parameters) throws Exception {
        try (Communicator communicator = new Communicator(config, Transports.borrowed(transport))) {
            long[][] first = allGather(communicator, MinibatchPlan.firstCounts(minibatches));
            int minibatchSize = MinibatchPlan.minibatchSize(first);
            long[][] usable = allGather(communicator, new long[] {MinibatchPlan.usable(minibatches, minibatchSize)});
            long[] usableCounts = new long[usable.length];
            for (int rank = 0; rank < usable.length; rank++) {
                usableCounts[rank] = usable[rank][0];
            }
            MinibatchPlan plan = MinibatchPlan.of(first, usableCounts, minibatchSize);
            boolean resuming = settings.checkpointing() && (attempt > 0 || settings.resume());
            if (!resuming) {
                return new Start(plan, 0, null);
            }
            Checkpoint checkpoint = null;
            INDArray step = Nd4j.createFromArray(new long[] {0});
            try {
                if (config.rank() == 0) {
                    long total = (long) epochs * plan.steps();
                    FitCheckpoints checkpoints = new FitCheckpoints(settings, fitId);
                    checkpoint = checkpoints.resumePoint(!settings.resume(), plan, parameters, total).orElse(null);
                    if (checkpoint != null) {
                        step.putScalar(0, checkpoint.step());
                        long resumed = checkpoint.step();
                        LOG.log(System.Logger.Level.INFO, () -> "SparkDataParallel: stage attempt " + attempt
                                + " resumes from step " + resumed + " of " + total + " (checkpoint in "
                                + checkpoints.directory() + ")");
                    }
                }
                communicator.broadcast(0, step);
                return new Start(plan, step.getLong(0), checkpoint);
            } catch (RuntimeException e) {
                if (checkpoint != null) {
                    checkpoint.tensors().values().forEach(TensorMemory::close);
                }
                throw e;
            } finally {
                TensorMemory.close(step);
            }
        }
    }

    /** Every rank's {@code values}, row r rank r's. */
    private static long[][] allGather(Communicator communicator, long[] values) {
        INDArray mine = Nd4j.createFromArray(values);
        INDArray all = null;
        try {
            all = communicator.allGather(mine);
            long[][] rows = new long[communicator.worldSize()][values.length];
            for (int rank = 0; rank < rows.length; rank++) {
                for (int i = 0; i < values.length; i++) {
                    rows[rank][i] = all.getLong(rank, i);
                }
            }
            return rows;
        } finally {
            TensorMemory.close(mine, all);
        }
    }

    private RankOutcome train(DistributedConfig config, Transport transport, SparkNetwork net, Start start,
            List<DataSet> minibatches, int attempt, long taskBegan) throws Exception {
        int rank = config.rank();
        MinibatchPlan plan = start.plan();
        List<DataSet> steps = plan.stepsOf(minibatches);
        FitCheckpoints checkpoints = rank == 0 && settings.checkpointing() ? new FitCheckpoints(settings, fitId) : null;
        long total = (long) epochs * plan.steps();
        float[] losses = new float[(int) Math.min(Integer.MAX_VALUE, total - start.step())];
        long began = System.nanoTime();
        long setupNanos = began - taskBegan;
        try (GradientAggregator aggregator = settings.aggregator().create(config, Transports.borrowed(transport))) {
            // Every rank now holds rank 0's parameters, updater state and counters (a checkpoint's, if resumed).
            net.attach(aggregator);
            for (long step = start.step(); step < total; step++) {
                int k = (int) (step % plan.steps());
                net.fit(steps.get(k));
                losses[(int) (step - start.step())] = (float) net.score();
                if (k == plan.steps() - 1) {
                    net.incrementEpochCount();
                }
                if (checkpoints != null && checkpoints.due(step + 1, total)) {
                    checkpoints.save(step + 1, net, plan);
                }
            }
            net.detach();
        }
        long trainingNanos = System.nanoTime() - began;
        return new RankOutcome(rank, attempt, plan.minibatchSize(), plan.steps(), plan.examples(rank),
                plan.dropped(rank), start.step(), total - start.step(), losses, setupNanos,
                trainingNanos, RankOutcome.digest(net.params(), net.updaterState()),
                rank == 0 ? RankOutcome.State.of(net) : null);
    }
}
