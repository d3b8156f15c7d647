package io.ringstar.bench;

import java.io.IOException;
import java.io.Writer;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The bench's results as a file, CSV or JSON by the file's extension, in the schema that the
 * scripts reading them rely on (the column names must not change): {@value #CSV_HEADER}.
 * CSV fields are quoted only when they need it (RFC 4180), and lines end with LF rather than the
 * RFC's CRLF, which line-based tools would keep as part of the last field. The JSON form is
 * {@code {"meta": {...}, "rows": [...]}} where each row has the CSV's keys plus
 * {@code heap_peak_bytes_per_rank} and {@code offheap_peak_bytes_per_rank}.
 */
final class ResultFile {
    static final String CSV_HEADER = "date,world_size,placement,transport,type,algorithm,op,size_bytes,count,iters,"
            + "time_p50_us,time_p99_us,algbw_gbps,busbw_gbps,bus_factor,wrong,heap_peak_bytes,offheap_peak_bytes";
    private static final MathContext SIGNIFICANT = new MathContext(6);

    /** What every row shares: when, how many ranks, and how they were placed. */
    record Run(String date, int worldSize, String placement) {
    }

    private ResultFile() {
    }

    /** Whether {@code path} names a file this class can write ({@code .csv} or {@code .json}). */
    static boolean isSupported(Path path) {
        String name = lowerName(path);
        return name.endsWith(".csv") || name.endsWith(".json");
    }

    /**
     * Writes {@code rows} to {@code path}, replacing it.
     *
     * @param meta the run's description for the JSON form; values are strings, numbers or lists of them
     */
    static void write(Path path, Run run, Map<String, Object> meta, List<BenchRow> rows) throws IOException {
        try (Writer out = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
            if (lowerName(path).endsWith(".json")) {
                out.write(json(run, meta, rows));
            } else {
                out.write(csv(run, rows));
            }
        }
    }

    static String csv(Run run, List<BenchRow> rows) {
        StringBuilder text = new StringBuilder(CSV_HEADER).append('\n');
        for (BenchRow row : rows) {
            List<String> cells = new ArrayList<>();
            for (Object value : fields(run, row).values()) {
                cells.add(csvCell(String.valueOf(value)));
            }
            text.append(String.join(",", cells)).append('\n');
        }
        return text.toString();
    }

    static String json(Run run, Map<String, Object> meta, List<BenchRow> rows) {
        List<Object> jsonRows = new ArrayList<>();
        for (BenchRow row : rows) {
            Map<String, Object> fields = fields(run, row);
            fields.put("heap_peak_bytes_per_rank", row.heapPeakPerRank());
            fields.put("offheap_peak_bytes_per_rank", row.offHeapPeakPerRank());
            jsonRows.add(fields);
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("meta", meta);
        document.put("rows", jsonRows);
        StringBuilder text = new StringBuilder();
        appendJson(text, document);
        return text.append('\n').toString();
    }

    /** One row's values under the CSV's column names, in its order; numbers as {@link Number}s. */
    private static Map<String, Object> fields(Run run, BenchRow row) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("date", run.date());
        fields.put("world_size", run.worldSize());
        fields.put("placement", run.placement());
        fields.put("transport", row.transport());
        fields.put("type", row.typeName());
        fields.put("algorithm", row.algorithm().label());
        fields.put("op", row.operation().label());
        fields.put("size_bytes", row.sizeBytes());
        fields.put("count", row.count());
        fields.put("iters", row.iters());
        // Nanoseconds as microseconds with three decimals: exact, no binary rounding.
        fields.put("time_p50_us", BigDecimal.valueOf(row.p50Nanos(), 3));
        fields.put("time_p99_us", BigDecimal.valueOf(row.p99Nanos(), 3));
        fields.put("algbw_gbps", significant(row.algbwGbps()));
        fields.put("busbw_gbps", significant(row.busbwGbps()));
        fields.put("bus_factor", significant(row.busFactor()));
        fields.put("wrong", row.wrong());
        fields.put("heap_peak_bytes", row.heapPeakBytes());
        fields.put("offheap_peak_bytes", row.offHeapPeakBytes());
        return fields;
    }

    /** Six significant digits in plain notation ({@code 0.0000412345}, not {@code 4.12345E-5}). */
    private static BigDecimal significant(double value) {
        return new BigDecimal(value).round(SIGNIFICANT).stripTrailingZeros();
    }

    private static String csvCell(String value) {
        if (value.contains(",") || value.contains("\"") || value.contains("\n") || value.contains("\r")) {
            return "\"" + value.replace("\"", "\"\"") + "\"";
        }
        return value;
    }

    private static void appendJson(StringBuilder text, Object value) {
        if (value instanceof Map<?, ?> map) {
            text.append('{');
            String separator = "";
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                text.append(separator);
                appendString(text, String.valueOf(entry.getKey()));
                text.append(": ");
                appendJson(text, entry.getValue());
                separator = ", ";
            }
            text.append('}');
        } else if (value instanceof List<?> list) {
            text.append('[');
            String separator = "";
            for (Object element : list) {
                text.append(separator);
                appendJson(text, element);
                separator = ", ";
            }
            text.append(']');
        } else if (value instanceof BigDecimal decimal) {
            text.append(decimal.toPlainString());
        } else if (value instanceof Number || value instanceof Boolean) {
            text.append(value);
        } else {
            appendString(text, String.valueOf(value));
        }
    }

    private static void appendString(StringBuilder text, String value) {
        text.append('"');
        for (char c : value.toCharArray()) {
            switch (c) {
                case '"' -> text.append("\\\"");
                case '\\' -> text.append("\\\\");
                case '\n' -> text.append("\\n");
                case '\r' -> text.append("\\r");
                case '\t' -> text.append("\\t");
                default -> {
                    if (c < 0x20) {
                        text.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        text.append(c);
                    }
                }
            }
        }
        text.append('"');
    }

    private static String lowerName(Path path) {
        Path name = path.getFileName();
        return name == null ? "" : name.toString().toLowerCase(Locale.ROOT);
    }
}
