package io.ringstar.bench.report;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * JMH's results as a table: a benchmark's name from its class on, its parameters, score, error and
 * unit; of a sample-time benchmark's percentiles only p50 and p99; a secondary score {@code :bytes}
 * (bytes per second) in GB/s.
 */
public final class JmhTable {
    private static final Pattern FROM_CLASS = Pattern.compile("[A-Za-z0-9]+Benchmark\\..*");
    private static final double GIGA = 1e9;

    private JmhTable() {
    }

    /** The table of {@code rows}. */
    public static String render(List<JmhRow> rows) {
        MarkdownTable table = new MarkdownTable(List.of("benchmark", "parameters", "score", "± (99.9%)", "unit"),
                List.of(false, false, true, true, false));
        for (JmhRow row : rows) {
            String name = shortName(row.benchmark());
            if (name.contains(":p") && !name.endsWith(":p0.50") && !name.endsWith(":p0.99")) {
                continue;
            }
            String parameters = row.parameters().entrySet().stream().filter(entry -> !entry.getValue().isEmpty())
                    .map(entry -> entry.getKey() + "=" + entry.getValue()).collect(Collectors.joining(", "));
            double score = row.score();
            double error = row.error();
            String unit = row.unit();
            if (name.endsWith(":bytes")) {
                score /= GIGA;
                error /= GIGA;
                unit = "GB/s";
            }
            table.add(List.of(name, parameters, Numbers.significant(score, 4),
                    Double.isNaN(error) ? "" : Numbers.significant(error, 2), unit));
        }
        return table.render();
    }

    /** {@code io.ringstar.bench.jmh.ReductionBenchmark.copy:bytes} becomes {@code ReductionBenchmark.copy:bytes}. */
    static String shortName(String benchmark) {
        Matcher matcher = FROM_CLASS.matcher(benchmark);
        return matcher.find() ? matcher.group() : benchmark;
    }

    /**
     * The secondary score {@code :bytes} in GB/s of the benchmark whose name {@code pattern} finds, at its
     * largest {@code bytes} parameter, on direct buffers where it has a {@code memory} parameter.
     *
     * @return {@code [GB/s, bytes]}, or null when no row matches
     */
    public static double[] bytesPerSecond(List<JmhRow> rows, Pattern pattern) {
        double[] best = null;
        for (JmhRow row : rows) {
            Map<String, String> parameters = row.parameters();
            String memory = parameters.get("memory");
            double bytes = parseOrZero(parameters.getOrDefault("bytes", ""));
            if (pattern.matcher(row.benchmark()).find() && (memory == null || memory.equals("direct"))
                    && bytes > 0 && (best == null || bytes >= best[1])) {
                best = new double[] {row.score() / GIGA, bytes};
            }
        }
        return best;
    }

    private static double parseOrZero(String text) {
        try {
            return Double.parseDouble(text);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
