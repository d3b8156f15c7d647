package io.ringstar.bench.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** Result files written by the tests, in the schema of {@code ringstar bench --output x.csv}. */
public final class Fixtures {
    public static final String HEADER = "date,world_size,placement,transport,type,algorithm,op,size_bytes,count,iters,"
            + "time_p50_us,time_p99_us,algbw_gbps,busbw_gbps,bus_factor,wrong,heap_peak_bytes,offheap_peak_bytes";

    private Fixtures() {
    }

    /** One CSV line of the schema with the fields the reports read; the others are plausible constants. */
    public static String line(int worldSize, String transport, String type, String algorithm, String op, long size,
            double p50, double p99, double busbw, long wrong) {
        return String.format(Locale.ROOT, "2026-11-26T11:31:57Z,%d,threads,%s,%s,%s,%s,%d,%d,20,%s,%s,%s,%s,1,%d,0,0",
                worldSize, transport, type, algorithm, op, size, size / 4, p50, p99, busbw, busbw, wrong);
    }

    /** A row as {@link ResultRow#read} would return it. */
    static ResultRow row(int worldSize, String transport, String type, String algorithm, String op, long size,
            double p50, double busbw) {
        return new ResultRow(worldSize, transport, type, algorithm, op, size, p50, 2 * p50, busbw, 0);
    }

    /** Writes {@code lines} under the schema's header to {@code file} and returns it. */
    public static Path csv(Path file, List<String> lines) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, HEADER + "\n" + String.join("\n", lines) + (lines.isEmpty() ? "" : "\n"));
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
