package io.ringstar.bench.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One row of JMH's CSV result file ({@code -rf csv}).
 *
 * @param benchmark the full name, with a secondary score's suffix ({@code ...copy:bytes})
 * @param score the score
 * @param error the 99.9% error, NaN when JMH had too few samples
 * @param unit the score's unit
 * @param parameters every {@code Param: } column of the file by parameter name, in the file's order; the value
 *     is empty where this benchmark has no such parameter
 */
public record JmhRow(String benchmark, double score, double error, String unit, Map<String, String> parameters) {
    private static final String PARAMETER = "Param: ";

    /** Reads every row of {@code file}; a missing column or a score that is not a number is refused. */
    public static List<JmhRow> read(Path file) throws IOException {
        CsvFile csv = CsvFile.read(file).require(List.of("Benchmark", "Score", "Score Error (99.9%)", "Unit"));
        List<JmhRow> rows = new ArrayList<>();
        for (CsvFile.Row row : csv.rows()) {
            Map<String, String> parameters = new LinkedHashMap<>();
            for (String column : csv.header()) {
                if (column.startsWith(PARAMETER)) {
                    parameters.put(column.substring(PARAMETER.length()), row.get(column));
                }
            }
            rows.add(new JmhRow(row.get("Benchmark"), row.number("Score"), row.number("Score Error (99.9%)"),
                    row.get("Unit"), parameters));
        }
        return List.copyOf(rows);
    }
}
