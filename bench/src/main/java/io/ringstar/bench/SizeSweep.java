package io.ringstar.bench;

import io.ringstar.internal.tensor.ElementType;
import io.ringstar.ranks.Algorithm;
import java.util.List;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The rows of one transport: every size, then every type that fits it, algorithm and operation
 * (for the communicator's all-gather and reduce-scatter, every size that holds an element per rank).
 */
final class SizeSweep {
    /**
     * Before the first row, this many untimed calls of {@link #JIT_WARMUP_ELEMENTS} elements per
     * type, algorithm and operation: enough for the JIT to compile the whole path of a call with
     * its optimizing compiler (C2 compiles a method after about 10 000 calls; a 1 KiB ring
     * all-reduce took 105 us after 2000 warm-up calls and 26 us after 20 000), so that no row, even
     * a sweep's first at a large size, pays for compiling (a 64 KiB row measured 350-580 us first in
     * its sweep, 41 us after the 1 KiB rows).
     */
    static final int JIT_WARMUP_CALLS = 20_000;
    /** Elements per type of the calls of {@link #JIT_WARMUP_CALLS}. */
    private static final int JIT_WARMUP_ELEMENTS = 256;

    private SizeSweep() {
    }

    /**
     * Measures every row on {@code sweep}, adding it to {@code rows} and printing it on
     * {@code table} (when this process reports; {@code null} otherwise).
     */
    static void run(BenchSettings settings, List<Long> sizes, TransportSweep sweep, ResultTable table,
            List<BenchRow> rows) {
        if (settings.warmup() == BenchSettings.AUTO) {
            // However large the first size, the first row must not pay for compiling the path.
            for (ElementType type : settings.types()) {
                for (Algorithm algorithm : settings.algorithms()) {
                    for (Operation operation : settings.operations()) {
                        sweep.warmUp(type, algorithm, operation, JIT_WARMUP_ELEMENTS, JIT_WARMUP_CALLS);
                    }
                }
            }
        }
        for (long size : sizes) {
            for (ElementType type : settings.types()) {
                if (size < type.bytes()) {
                    continue;
                }
                if (settings.algorithms().contains(Algorithm.COMM)) {
                    // The communicator alone (--algorithm comm): each row makes its own inputs.
                    for (Operation operation : settings.operations()) {
                        add(sweep.measureCommunicator(type, size, operation), table, rows);
                    }
                    continue;
                }
                List<INDArray> inputs = sweep.inputs(type, Math.toIntExact(size / type.bytes()));
                try {
                    for (Algorithm algorithm : settings.algorithms()) {
                        for (Operation operation : settings.operations()) {
                            add(sweep.measure(type, size, inputs, algorithm, operation), table, rows);
                        }
                    }
                } finally {
                    inputs.forEach(INDArray::close);
                }
            }
        }
    }

    private static void add(BenchRow row, ResultTable table, List<BenchRow> rows) {
        if (row == null) {
            return;
        }
        rows.add(row);
        if (table != null) {
            table.printRow(row);
        }
    }
}
