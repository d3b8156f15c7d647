package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LimitsSectionTest {
    @Test
    void tailIsTheMedianAndTheFirstMaximumOfP99OverP50() {
        List<ResultRow> rows = new ArrayList<>();
        // p99 / p50 = 1, 2, 3, 3, 5 (and a row without a time, left out): median 3, maximum 5.
        double[] ratios = {3, 1, 5, 2, 3};
        for (int i = 0; i < ratios.length; i++) {
            rows.add(new ResultRow(4, "netty", "float", "ring", "reduce", 4L << i, 10, 10 * ratios[i], 1, 0));
        }
        rows.add(new ResultRow(4, "aeron", "float", "ps", "reduce", 4, 0, 10, 1, 0));
        rows.add(new ResultRow(4, "aeron", "double", "ps", "broadcast", 8, 2, 10, 1, 0));
        String expected = """
                - **JIT, garbage collection and scheduling.** Timed calls follow untimed warm-up calls, but
                  a call that waits for a compilation, a collection or a core shows in p99. Over the sweep's
                  6 rows, p99 ÷ p50 has median 3.00 and maximum 5.00 (netty ring reduce float at 16 B).
                """;
        assertEquals(expected, LimitsSection.tail(rows));
        assertEquals("", LimitsSection.tail(List.of()));
    }

    @Test
    void linkUseIsTheRingsBusbwInGbitAtItsLargestSizePerWorldSize() {
        List<ResultRow> rows = List.of(
                Fixtures.row(3, "netty", "float", "ring", "reduce", 1024, 1, 0.01),
                Fixtures.row(3, "netty", "float", "ring", "reduce", 4096, 1, 0.1125),
                Fixtures.row(2, "netty", "float", "ring", "reduce", 4096, 1, 0.12),
                Fixtures.row(2, "netty", "float", "ps", "reduce", 8192, 1, 5));
        assertEquals("0.96 Gbit/s at n=2, 0.90 Gbit/s at n=3", LimitsSection.linkUse(rows));
    }
}
