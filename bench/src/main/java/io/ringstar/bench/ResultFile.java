package io.ringstar.bench;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.TypeAdapter;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonWriter;
import io.ringstar.bench.report.CsvFile;
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
 * scripts reading them rely on (the column names must not change, and new ones come last): {@link #CSV_HEADER}.
 * CSV fields are quoted only when they need it (RFC 4180), and lines end with LF rather than the
 * RFC's CRLF, which line-based tools would keep as part of the last field. The JSON form is
 * {@code {"meta": {...}, "rows": [...]}} where each row has the CSV's keys plus
 * {@code heap_peak_bytes_per_rank} and {@code offheap_peak_bytes_per_rank}; an unknown accounting
 * value ({@link #ACCOUNTING_COLUMNS}) is an empty CSV field and a JSON {@code null}.
 */
public final class ResultFile {
    /**
     * The per-call accounting columns, after the older ones so that files without them still read:
     * the calling thread's and the process's CPU time in microseconds, minor and major page faults,
     * voluntary and involuntary context switches, each per timed call, the mean over the ranks (the
     * thread's) or over the processes (the process's; with ranks as threads there is one, the JVM
     * of every rank). Empty where the system does not count them (no {@code /proc}).
     */
    public static final List<String> ACCOUNTING_COLUMNS = List.of("thread_cpu_us", "process_cpu_us",
            "thread_minor_faults", "process_minor_faults", "thread_major_faults", "process_major_faults",
            "thread_voluntary_switches", "thread_involuntary_switches", "process_voluntary_switches",
            "process_involuntary_switches");
    /** The CSV file's first line: its columns, in order. */
    public static final String CSV_HEADER = "date,world_size,placement,transport,type,algorithm,op,size_bytes,count,"
            + "iters,time_p50_us,time_p99_us,algbw_gbps,busbw_gbps,bus_factor,wrong,heap_peak_bytes,offheap_peak_bytes,"
            + String.join(",", ACCOUNTING_COLUMNS);
    private static final MathContext SIGNIFICANT = new MathContext(6);
    /** Decimals as written ({@code 12.345}, never {@code 1.2345E+1}); no HTML escapes in the strings. */
    private static final Gson JSON = new GsonBuilder().disableHtmlEscaping().serializeNulls()
            .registerTypeAdapter(BigDecimal.class, new PlainDecimal()).create();

    /** What every row shares: when, how many ranks, and how they were placed. */
    record Run(String date, int worldSize, String placement) {
    }

    private ResultFile() {
    }

    /** Whether {@code path} names a file this class can write ({@code .csv} or {@code .json}). */
    public static boolean isSupported(Path path) {
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
                cells.add(value == null ? "" : CsvFile.quote(String.valueOf(value)));
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
        return JSON.toJson(document) + "\n";
    }

    /** One row's values under the CSV's column names, in its order; numbers as {@link Number}s. */
    private static Map<String, Object> fields(Run run, BenchRow row) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("date", run.date());
        fields.put("world_size", run.worldSize());
        fields.put("placement", run.placement());
        fields.put("transport", row.transport());
        fields.put("type", row.typeName());
        fields.put("algorithm", row.algorithmLabel());
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
        fields.put("thread_cpu_us", known(row.threadCpuMicros()));
        fields.put("process_cpu_us", known(row.processCpuMicros()));
        fields.put("thread_minor_faults", known(row.perThreadCall(ResourceCounters::minorFaults)));
        fields.put("process_minor_faults", known(row.perProcessCall(ResourceCounters::minorFaults)));
        fields.put("thread_major_faults", known(row.perThreadCall(ResourceCounters::majorFaults)));
        fields.put("process_major_faults", known(row.perProcessCall(ResourceCounters::majorFaults)));
        fields.put("thread_voluntary_switches", known(row.perThreadCall(ResourceCounters::voluntarySwitches)));
        fields.put("thread_involuntary_switches", known(row.perThreadCall(ResourceCounters::involuntarySwitches)));
        fields.put("process_voluntary_switches", known(row.perProcessCall(ResourceCounters::voluntarySwitches)));
        fields.put("process_involuntary_switches",
                known(row.perProcessCall(ResourceCounters::involuntarySwitches)));
        return fields;
    }

    /** {@link #significant} of a value, {@code null} (an empty cell, a JSON null) for NaN, the unknown. */
    private static BigDecimal known(double value) {
        return Double.isNaN(value) ? null : significant(value);
    }

    /** Six significant digits in plain notation ({@code 0.0000412345}, not {@code 4.12345E-5}). */
    private static BigDecimal significant(double value) {
        return new BigDecimal(value).round(SIGNIFICANT).stripTrailingZeros();
    }

    /** Writes a {@link BigDecimal} as the plain number it is; the JSON form is only ever written. */
    private static final class PlainDecimal extends TypeAdapter<BigDecimal> {
        @Override
        public void write(JsonWriter out, BigDecimal value) throws IOException {
            if (value == null) {
                out.nullValue();
                return;
            }
            out.jsonValue(value.toPlainString());
        }

        @Override
        public BigDecimal read(JsonReader in) throws IOException {
            return new BigDecimal(in.nextString());
        }
    }

    private static String lowerName(Path path) {
        Path name = path.getFileName();
        return name == null ? "" : name.toString().toLowerCase(Locale.ROOT);
    }
}
