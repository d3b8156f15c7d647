package io.ringstar.testing;

import io.ringstar.AllReduceAggregator;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.internal.engine.KeptResiduals;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Assumptions;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * What {@link CompressionConformanceTest} works with: the targets (the ring, the star, the
 * communicator with an op and an algorithm), one group of ranks per case over the transport a
 * subclass supplies, the inputs of each call (integers, so sums are exact, or reals) and each
 * rank's ledger of what went in, what came out and what it kept.
 */
public abstract class CompressionCases {
    /** Watchdog for each group of ranks. */
    protected static final Duration LIMIT = Duration.ofSeconds(90);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    /** A group of {@code worldSize} connected transports, element {@code r} for rank {@code r}. */
    protected abstract List<Transport> createGroup(int worldSize, Duration timeout);

    /**
     * Whether every case runs (the in-process transport), or, for a network transport where each
     * group costs real connections, only the ring's and the star's cases of the main properties.
     */
    protected boolean everyCase() {
        return true;
    }

    void assumeCase(Target target) {
        Assumptions.assumeTrue(everyCase() || target == Target.RING || target == Target.STAR,
                "the reduced suite runs the ring and the star");
    }

    /** What runs the compressed all-reduce, with which op. */
    protected enum Target {
        RING(ReduceOp.AVG, null), STAR(ReduceOp.AVG, null),
        COMMUNICATOR_AUTO_SUM(ReduceOp.SUM, Communicator.ALGORITHM_AUTO),
        COMMUNICATOR_RING_AVG(ReduceOp.AVG, Communicator.ALGORITHM_RING),
        COMMUNICATOR_STAR_SUM(ReduceOp.SUM, Communicator.ALGORITHM_STAR);

        final ReduceOp op;
        final String algorithm;

        Target(ReduceOp op, String algorithm) {
            this.op = op;
            this.algorithm = algorithm;
        }

        /** A world size at which an average of integers is exact: 4 divides without rounding. */
        int exactWorldSize() {
            return op == ReduceOp.AVG ? 4 : 3;
        }
    }

    /** One rank's aggregator or communicator. */
    static final class Member implements AutoCloseable {
        final Target target;
        final Object owner;

        Member(Target target, DistributedConfig config, Transport transport) {
            this.target = target;
            this.owner = target == Target.RING ? new AllReduceAggregator(config, transport)
                    : target == Target.STAR ? new ParameterServer(config, transport)
                    : new Communicator(config, transport);
        }

        INDArray[] allReduce(INDArray[] tensors) {
            if (owner instanceof GradientAggregator) {
                return ((GradientAggregator) owner).reduceGradients(tensors);
            }
            INDArray[] copies = TensorFixtures.copies(tensors);
            ((Communicator) owner).allReduce(target.op, copies);
            return copies;
        }

        long bytesSent() {
            return owner instanceof Communicator ? ((Communicator) owner).bytesSent()
                    : owner instanceof AllReduceAggregator ? ((AllReduceAggregator) owner).bytesSent()
                    : ((ParameterServer) owner).bytesSent();
        }

        @Override
        public void close() {
            if (owner instanceof Communicator) {
                ((Communicator) owner).close();
            } else {
                ((GradientAggregator) owner).close();
            }
        }
    }

    @FunctionalInterface
    interface MemberBody<T> {
        T run(int rank, Member member) throws Exception;
    }

    /** Runs {@code body} on every rank of a group of its own, rank {@code r} with {@code options.apply(r)}. */
    <T> List<Ranks.Outcome<T>> run(Target target, int worldSize, IntFunction<Map<String, String>> options,
            MemberBody<T> body) {
        List<Transport> transports = createGroup(worldSize, CALL_TIMEOUT);
        List<Member> members = new ArrayList<>();
        try {
            for (int rank = 0; rank < worldSize; rank++) {
                DistributedConfig.Builder builder = DistributedConfig.builder().worldSize(worldSize).rank(rank)
                        .timeout(CALL_TIMEOUT);
                if (target.algorithm != null) {
                    builder.option(Communicator.ALGORITHM_OPTION, target.algorithm);
                }
                options.apply(rank).forEach(builder::option);
                members.add(new Member(target, builder.build(), transports.get(rank)));
            }
            return Ranks.run(worldSize, LIMIT, rank -> body.run(rank, members.get(rank)));
        } finally {
            members.forEach(Member::close);
            transports.forEach(Transport::close);
        }
    }

    static IntFunction<Map<String, String>> same(String compression, String chunkBytes) {
        Map<String, String> options = new HashMap<>();
        options.put("compression", compression);
        options.put("chunkBytes", chunkBytes);
        return rank -> options;
    }

    /**
     * The tensors of a call of layout {@code layout} (0: six tensors of two types, some empty, one in
     * 'f' order; 1: one 'c'-order vector, worked on in its own memory; 2: two vectors), rank
     * {@code rank}, call {@code call}: integers in [-20, 20] or reals in [-1, 1].
     */
    static INDArray[] inputs(int layout, int rank, int call, boolean integers) {
        Random random = new Random(1_000_003L * layout + 7919L * rank + call);
        long[][] shapes = layout == 0 ? new long[][] {{7}, {1009}, {0}, {1}, {2, 13}, {101}}
                : layout == 1 ? new long[][] {{1009}} : new long[][] {{3}, {557}};
        INDArray[] tensors = new INDArray[shapes.length];
        for (int t = 0; t < shapes.length; t++) {
            long length = 1;
            for (long dimension : shapes[t]) {
                length *= dimension;
            }
            double[] values = new double[(int) length];
            for (int i = 0; i < values.length; i++) {
                values[i] = integers ? random.nextInt(41) - 20 : (float) (random.nextDouble() * 2 - 1);
            }
            DataType type = layout == 0 && t == 1 ? DataType.DOUBLE : DataType.FLOAT;
            INDArray tensor = length == 0 ? Nd4j.create(type, shapes[t], 'c')
                    : Nd4j.create(values, shapes[t], 'c').castTo(type);
            tensors[t] = layout == 0 && t == 4 ? tensor.dup('f') : tensor;
        }
        return tensors;
    }

    static double[][] values(INDArray[] tensors) {
        double[][] values = new double[tensors.length][];
        for (int t = 0; t < tensors.length; t++) {
            values[t] = TensorFixtures.values(tensors[t]);
        }
        return values;
    }

    /** One rank's record of a run of calls: per layout, its inputs summed, the results summed, what it kept. */
    static final class Ledger {
        final Map<Integer, double[][]> inputs = new HashMap<>();
        final Map<Integer, double[][]> sent = new HashMap<>();
        final Map<Integer, double[][]> kept = new HashMap<>();
        final List<double[][]> results = new ArrayList<>();
    }

    static void addInto(Map<Integer, double[][]> sums, int layout, double[][] values, double scale) {
        double[][] sum = sums.computeIfAbsent(layout, key -> {
            double[][] zeros = new double[values.length][];
            for (int t = 0; t < values.length; t++) {
                zeros[t] = new double[values[t].length];
            }
            return zeros;
        });
        for (int t = 0; t < values.length; t++) {
            for (int i = 0; i < values[t].length; i++) {
                sum[t][i] += values[t][i] * scale;
            }
        }
    }

    /** Calls of layouts 0, 0, 1, 0, 2, 1, 0, 2: each layout's residuals must stay its own. */
    static final int[] CALLS = {0, 0, 1, 0, 2, 1, 0, 2};

    List<Ranks.Outcome<Ledger>> ledgers(Target target, int worldSize, String compression, boolean integers) {
        return run(target, worldSize, same(compression, "64"), (rank, member) -> {
            Ledger ledger = new Ledger();
            double scale = target.op == ReduceOp.AVG ? worldSize : 1;
            for (int call = 0; call < CALLS.length; call++) {
                INDArray[] inputs = inputs(CALLS[call], rank, call, integers);
                double[][] results = values(member.allReduce(inputs));
                ledger.results.add(results);
                addInto(ledger.inputs, CALLS[call], values(inputs), 1);
                addInto(ledger.sent, CALLS[call], results, scale);
            }
            for (int layout = 0; layout < 3; layout++) {
                ledger.kept.put(layout, KeptResiduals.of(member.owner, inputs(layout, rank, 0, true)));
            }
            return ledger;
        });
    }

    static void assertBitIdentical(List<Ranks.Outcome<Ledger>> outcomes, String what) {
        List<double[][]> first = outcomes.get(0).valueOrFail().results;
        for (Ranks.Outcome<Ledger> outcome : outcomes) {
            List<double[][]> results = outcome.valueOrFail().results;
            for (int call = 0; call < results.size(); call++) {
                for (int t = 0; t < results.get(call).length; t++) {
                    CollectiveClosedForm.assertBitIdentical(first.get(call)[t], results.get(call)[t],
                            what + ": call " + call + ", tensor " + t + " on rank " + outcome.rank + " and rank 0");
                }
            }
        }
    }
}
