package io.ringstar.testing;

import io.ringstar.Communicator;
import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ElementType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The {@link Communicator} contract, written once over the transport a subclass supplies
 * ({@link #createGroup}): every call against the closed forms of {@link CollectiveClosedForm} for
 * every op and element type, on every world size and awkward element counts, several tensors of
 * every layout per call, mixed types in one call, every root, each all-reduce algorithm forced;
 * results identical on every rank, inputs that must not change unchanged. The non-blocking calls
 * are in {@link CommunicatorAsyncCases}, the failure rules in {@link CommunicatorFailureRules} and
 * {@link CommunicatorFailureCases}.
 *
 * <p>A subclass chooses the {@link Sweep}: the full one for the in-process transport, the reduced
 * one for a network transport. Cases in which every call completes share one formed group per
 * world size ({@link ReusedGroup}); cases that fail a call or close a rank form their own.
 */
public abstract class CommunicatorConformanceTest extends CommunicatorAsyncCases {
    /** Every all-reduce algorithm, each forced through {@link Communicator#ALGORITHM_OPTION}. */
    static final String[] ALGORITHMS = {Communicator.ALGORITHM_RING, Communicator.ALGORITHM_DOUBLING,
        Communicator.ALGORITHM_STAR, Communicator.ALGORITHM_AUTO};

    /** Element counts of the size sweep, by {@link #sweep()}. */
    protected int[] elementCounts() {
        return sweep() == Sweep.FULL ? new int[] {0, 1, 2, 7, 1009, 100_003} : new int[] {0, 1, 7, 1009, 100_003};
    }

    /**
     * World sizes on which every op meets every type: a few, as each size adds some 200 cases (6: a
     * recursive doubling with two ranks beyond a power of two).
     */
    protected int[] opAndTypeWorldSizes() {
        return sweep() == Sweep.FULL ? new int[] {1, 2, 3, 6, 8} : new int[] {3};
    }

    /** Tiny chunks for small counts (every tensor crosses many chunks), otherwise the sweep's. */
    private Map<String, String> options(String algorithm, long count) {
        Map<String, String> options = new HashMap<>();
        options.put(Communicator.ALGORITHM_OPTION, algorithm);
        options.put("chunkBytes", count <= 1009 ? "16" : sweep() == Sweep.FULL ? "1048576" : "65536");
        return options;
    }

    /** Runs {@code test} on every rank of the reused group; compares the ranks' results bit for bit. */
    private void run(CollectiveCase test, Map<String, String> options) {
        List<Ranks.Outcome<double[][]>> outcomes = groups().reused(test.worldSize(), options,
                (rank, communicator) -> test.runOnRank(rank, communicator));
        try {
            double[][] first = outcomes.get(0).valueOrFail();
            for (Ranks.Outcome<double[][]> outcome : outcomes) {
                double[][] results = outcome.valueOrFail();
                for (int t = 0; t < results.length && test.resultsAgree(); t++) {
                    CollectiveClosedForm.assertBitIdentical(first[t], results[t], test + ": tensor " + t
                            + " on rank " + outcome.rank + " and rank 0");
                }
            }
        } catch (AssertionError | RuntimeException wrong) {
            // A wrong result may leave the group out of step: the next case must not inherit it.
            groups().discardReused();
            throw wrong;
        }
    }

    private static List<ReduceOp> opsFor(ElementType type) {
        return Arrays.stream(ReduceOp.values()).filter(op -> op != ReduceOp.AVG || type.isFloatingPoint()).toList();
    }

    private void add(List<DynamicTest> tests, CollectiveCase test, String algorithm) {
        long count = Arrays.stream(test.specs()).mapToLong(RankTensors.Spec::length).max().orElse(0);
        Map<String, String> options = options(algorithm, count);
        String name = test.call().toString().startsWith("ALL_REDUCE") ? test + " " + algorithm : test.toString();
        tests.add(DynamicTest.dynamicTest(name, () -> run(test, options)));
    }

    @TestFactory
    Stream<DynamicTest> everyCallOpAndTypeHasItsClosedForm() {
        List<DynamicTest> tests = new ArrayList<>();
        int count = 7;
        for (int n : opAndTypeWorldSizes()) {
            for (ElementType type : ElementType.values()) {
                RankTensors.Spec[] layouts = CollectiveCase.layouts(type, count);
                for (ReduceOp op : opsFor(type)) {
                    for (String algorithm : ALGORITHMS) {
                        add(tests, new CollectiveCase(CollectiveCase.Call.ALL_REDUCE, op, 0, n, layouts), algorithm);
                    }
                    add(tests, new CollectiveCase(CollectiveCase.Call.ALL_REDUCE_ASYNC, op, 0, n, layouts), "auto");
                    add(tests, new CollectiveCase(CollectiveCase.Call.REDUCE, op, n - 1, n, layouts), "auto");
                    add(tests, new CollectiveCase(CollectiveCase.Call.REDUCE_SCATTER, op, 0, n,
                            CollectiveCase.scatterLayouts(type, n, 5)), "auto");
                }
                for (int root : n == 1 ? new int[] {0} : new int[] {0, n - 1}) {
                    add(tests, new CollectiveCase(CollectiveCase.Call.BROADCAST, null, root, n, layouts), "auto");
                    add(tests, new CollectiveCase(CollectiveCase.Call.BROADCAST_ASYNC, null, root, n, layouts), "auto");
                }
                add(tests, new CollectiveCase(CollectiveCase.Call.ALL_GATHER, null, 0, n, layouts), "auto");
            }
        }
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> everyWorldSizeAndCount() {
        List<DynamicTest> tests = new ArrayList<>();
        ElementType type = ElementType.FLOAT;
        for (int n : worldSizes()) {
            for (int count : elementCounts()) {
                RankTensors.Spec[] layouts = CollectiveCase.layouts(type, count);
                for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG}) {
                    for (String algorithm : ALGORITHMS) {
                        add(tests, new CollectiveCase(CollectiveCase.Call.ALL_REDUCE, op, 0, n, layouts), algorithm);
                    }
                    add(tests, new CollectiveCase(CollectiveCase.Call.REDUCE, op, n / 2, n, layouts), "auto");
                    add(tests, new CollectiveCase(CollectiveCase.Call.REDUCE_SCATTER, op, 0, n,
                            CollectiveCase.scatterLayouts(type, n, count)), "auto");
                }
                add(tests, new CollectiveCase(CollectiveCase.Call.BROADCAST, null, 0, n, layouts), "auto");
                add(tests, new CollectiveCase(CollectiveCase.Call.ALL_GATHER, null, 0, n, layouts), "auto");
            }
        }
        if (sweep() == Sweep.FULL) {
            // A million and three: many 1 MiB chunks per ring segment, and the auto choice of the ring.
            for (int n : new int[] {3, 8}) {
                RankTensors.Spec[] large = {new RankTensors.Spec(type, RankTensors.Kind.C, 1_000_003)};
                for (String algorithm : ALGORITHMS) {
                    add(tests, new CollectiveCase(CollectiveCase.Call.ALL_REDUCE, ReduceOp.SUM, 0, n, large),
                            algorithm);
                }
            }
        }
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> everyRootOfBroadcastAndReduce() {
        List<DynamicTest> tests = new ArrayList<>();
        for (int n : worldSizes()) {
            for (int root = 0; root < n; root++) {
                RankTensors.Spec[] floats = CollectiveCase.layouts(ElementType.FLOAT, 7);
                add(tests, new CollectiveCase(CollectiveCase.Call.BROADCAST, null, root, n, floats), "auto");
                add(tests, new CollectiveCase(CollectiveCase.Call.BROADCAST_ASYNC, null, root, n,
                        CollectiveCase.layouts(ElementType.LONG, 1009)), "auto");
                add(tests, new CollectiveCase(CollectiveCase.Call.REDUCE, ReduceOp.SUM, root, n,
                        CollectiveCase.layouts(ElementType.INT, 7)), "auto");
                add(tests, new CollectiveCase(CollectiveCase.Call.REDUCE, ReduceOp.MAX, root, n,
                        CollectiveCase.layouts(ElementType.BFLOAT16, 1009)), "auto");
            }
        }
        return tests.stream();
    }

    /** Tensors of every type and layout in one call; {@code floatingOnly} swaps the integer ones for floats. */
    private static RankTensors.Spec[] mixed(long count, boolean floatingOnly) {
        ElementType integer = floatingOnly ? ElementType.DOUBLE : ElementType.INT;
        ElementType wide = floatingOnly ? ElementType.HALF : ElementType.LONG;
        return new RankTensors.Spec[] {
            new RankTensors.Spec(ElementType.FLOAT, RankTensors.Kind.C, count),
            new RankTensors.Spec(ElementType.DOUBLE, RankTensors.Kind.F, 2, 3),
            new RankTensors.Spec(ElementType.HALF, RankTensors.Kind.C),
            new RankTensors.Spec(ElementType.BFLOAT16, RankTensors.Kind.COLUMN, 5),
            new RankTensors.Spec(integer, RankTensors.Kind.TRANSPOSED, 3, 4),
            new RankTensors.Spec(wide, RankTensors.Kind.C, 0, 3),
            new RankTensors.Spec(ElementType.FLOAT, RankTensors.Kind.TRANSPOSED, 2, 5),
            new RankTensors.Spec(wide, RankTensors.Kind.C, count),
            new RankTensors.Spec(ElementType.HALF, RankTensors.Kind.F, 3, 2),
            new RankTensors.Spec(ElementType.BFLOAT16, RankTensors.Kind.C, count),
            new RankTensors.Spec(integer, RankTensors.Kind.C, 1),
        };
    }

    @TestFactory
    Stream<DynamicTest> everyTypeMixesInOneCall() {
        List<DynamicTest> tests = new ArrayList<>();
        for (int n : sweep() == Sweep.FULL ? new int[] {1, 2, 3, 5, 8} : new int[] {3}) {
            for (int count : new int[] {7, 1009}) {
                for (ReduceOp op : ReduceOp.values()) {
                    RankTensors.Spec[] specs = mixed(count, op == ReduceOp.AVG);
                    for (String algorithm : ALGORITHMS) {
                        add(tests, new CollectiveCase(CollectiveCase.Call.ALL_REDUCE, op, 0, n, specs), algorithm);
                    }
                    add(tests, new CollectiveCase(CollectiveCase.Call.REDUCE, op, n - 1, n, specs), "auto");
                }
                RankTensors.Spec[] specs = mixed(count, false);
                add(tests, new CollectiveCase(CollectiveCase.Call.BROADCAST, null, 0, n, specs), "auto");
                add(tests, new CollectiveCase(CollectiveCase.Call.BROADCAST, null, n - 1, n, specs), "auto");
                add(tests, new CollectiveCase(CollectiveCase.Call.ALL_GATHER, null, 0, n, specs), "auto");
            }
        }
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> tensorsLargerThanABucketGoThroughInWindows() {
        // A bucket of 40 bytes stands in for the 1 GiB one: windows of 10 floats or 20 halves cut
        // through every layout, and the scalar and the empty tensor fall between them.
        List<DynamicTest> tests = new ArrayList<>();
        for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MIN}) {
            RankTensors.Spec[] specs = mixed(1009, op == ReduceOp.AVG);
            for (String algorithm : ALGORITHMS) {
                CollectiveCase test = new CollectiveCase(CollectiveCase.Call.ALL_REDUCE, op, 0, 3, specs);
                Map<String, String> options = options(algorithm, 1009);
                options.put("bucketBytes", "40");
                tests.add(DynamicTest.dynamicTest(test + " " + algorithm + " bucket=40", () -> run(test, options)));
            }
            CollectiveCase broadcast = new CollectiveCase(CollectiveCase.Call.BROADCAST, null, 2, 3, specs);
            Map<String, String> options = options("auto", 1009);
            options.put("bucketBytes", "40");
            tests.add(DynamicTest.dynamicTest(broadcast + " bucket=40", () -> run(broadcast, options)));
        }
        return tests.stream();
    }

    @Test
    void twoViewsThatStraddleAWindowBothKeepTheirResults() {
        // In place, each non-'c' tensor that straddles windows goes through a 'c'-order copy kept until
        // its last window is in. Windows of 5 doubles: [0, 5) is in the first 'f' tensor; [5, 10) holds
        // its last element and the second one's first four.
        RankTensors.Spec[] specs = {new RankTensors.Spec(ElementType.DOUBLE, RankTensors.Kind.F, 2, 3),
            new RankTensors.Spec(ElementType.DOUBLE, RankTensors.Kind.TRANSPOSED, 3, 4)};
        for (String algorithm : ALGORITHMS) {
            Map<String, String> options = options(algorithm, 18);
            options.put("bucketBytes", "40");
            run(new CollectiveCase(CollectiveCase.Call.ALL_REDUCE, ReduceOp.SUM, 0, 3, specs), options);
            run(new CollectiveCase(CollectiveCase.Call.BROADCAST, null, 1, 3, specs), options);
            run(new CollectiveCase(CollectiveCase.Call.REDUCE, ReduceOp.MAX, 2, 3, specs), options);
        }
    }
}
