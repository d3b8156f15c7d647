package io.ringstar.bench;

import io.ringstar.config.ByteSize;
import io.ringstar.ranks.Algorithm;
import io.ringstar.transport.inproc.InProcessTransportProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** What {@code bench} tells its user besides the table: the preamble, and the result and chart files. */
final class BenchOutput {
    private static final String IN_PROCESS = InProcessTransportProvider.NAME;

    private BenchOutput() {
    }

    /**
     * Writes {@code --output} and {@code --plot}. A file that cannot be written is reported and the
     * other still written.
     *
     * @return whether every file asked for was written
     */
    static boolean writeFiles(BenchSettings settings, String date, String nativeThreads, List<BenchRow> rows,
            PrintStream out, PrintStream err) {
        String placement = settings.placementName();
        boolean written = true;
        if (settings.output().isPresent()) {
            Path path = settings.output().get();
            try {
                ResultFile.write(path, new ResultFile.Run(date, settings.worldSize(), placement),
                        meta(settings, date, nativeThreads), rows);
                out.println("# wrote " + rows.size() + " rows to " + path);
            } catch (IOException e) {
                err.println("ringstar bench: cannot write " + path + ": " + e);
                written = false;
            }
        }
        if (settings.plot().isPresent()) {
            Path path = settings.plot().get();
            try {
                BusBandwidthChart.write(path, "ringstar bench: busbw, world size " + settings.worldSize()
                        + ", ranks as "
                        + placement + ", " + date, rows);
                out.println("# drew busbw against size to " + path);
            } catch (IOException | RuntimeException | LinkageError | InternalError e) {
                // Without fontconfig, a font or the AWT library, the JDK's graphics code fails with one of these.
                err.println("ringstar bench: cannot draw " + path + ": " + e);
                written = false;
            }
        }
        return written;
    }

    private static Map<String, Object> meta(BenchSettings settings, String date, String nativeThreads) {
        Runtime runtime = Runtime.getRuntime();
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("tool", "ringstar bench");
        meta.put("date", date);
        meta.put("world_size", settings.worldSize());
        meta.put("placement", settings.placementName());
        meta.put("transports", settings.transports());
        meta.put("types", settings.types().stream().map(BenchRow::typeName).toList());
        meta.put("algorithms", settings.algorithms().stream().map(Algorithm::label).toList());
        meta.put("ops", settings.operations().stream().map(Operation::label).toList());
        if (settings.algorithms().contains(Algorithm.COMM)) {
            meta.put("allreduce_algorithm", settings.allReduceAlgorithm());
        }
        meta.put("min_bytes", settings.minBytes());
        meta.put("max_bytes", settings.maxBytes());
        meta.put("iters", settings.iters() == BenchSettings.AUTO ? "auto" : settings.iters());
        meta.put("warmup", settings.warmup() == BenchSettings.AUTO ? "auto" : settings.warmup());
        meta.put("chunk_bytes", settings.chunkBytes() == BenchSettings.AUTO ? "default" : settings.chunkBytes());
        meta.put("timeout_s", settings.timeout().toSeconds());
        meta.put("time", "nearest-rank percentiles (HdrHistogram, 3 significant digits) of the per-call times;"
                + " each call's time is the slowest"
                + " rank's (processes: gathered at rank 0)");
        meta.put("memory_per", settings.oneRankPerProcess() ? "rank" : "jvm");
        meta.put("memory", "heap: sum of the heap pools' peaks during the row; offheap: peak, sampled every "
                + JvmMemoryMeter.PERIOD.toMillis() + " ms, of ND4J host memory + JDK direct buffers + Netty"
                + " cleaner-less direct memory + JavaCPP; mapped files and JVM-internal memory not counted;"
                + (settings.oneRankPerProcess() ? " one value per rank" : " one value for the JVM that runs every"
                        + " rank as a thread"));
        meta.put("accounting", "per timed call, from just before the first to just after the last: the calling"
                + " thread's CPU time (ThreadMXBean), page faults and context switches (/proc/thread-self), the mean"
                + " over the ranks; the process's (faults: /proc/self/stat; CPU time and switches: summed over"
                + " /proc/self/task/*/schedstat and status, threads alive at both readings), the mean over the "
                + (settings.oneRankPerProcess() ? "processes" : "one JVM of every rank") + "; null where not counted");
        meta.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        meta.put("processors", runtime.availableProcessors());
        meta.put("max_heap_bytes", runtime.maxMemory());
        meta.put("nd4j_threads", nativeThreads);
        return meta;
    }

    static void printPreamble(PrintStream out, BenchSettings settings, List<Long> sizes, String date,
            String nativeThreads) {
        Runtime runtime = Runtime.getRuntime();
        String transports = String.join(", ", settings.transports());
        out.printf(Locale.ROOT, "# ringstar bench: world size %d, transport %s (%s)%n", settings.worldSize(),
                transports, settings.oneRankPerProcess() ? "one rank per process; a call's time is the slowest rank's"
                        : settings.transports().equals(List.of(IN_PROCESS)) ? "ranks are threads of this JVM"
                        : "ranks are threads of this JVM; over a network transport each has its own sockets on"
                                + " loopback");
        out.printf(Locale.ROOT, "# JVM: %s %s (%s), %d processors, max heap %s; ND4J threads: %s%n",
                System.getProperty("java.vm.name"), System.getProperty("java.runtime.version"),
                System.getProperty("java.vm.vendor"), runtime.availableProcessors(),
                ByteSize.format(runtime.maxMemory()), nativeThreads);
        out.printf(Locale.ROOT, "# date: %s%n", date);
        String iters = settings.iters() == BenchSettings.AUTO
                ? "auto (" + BenchSettings.AUTO_MAX_ITERS + " down to " + BenchSettings.AUTO_MIN_ITERS + ")"
                : Integer.toString(settings.iters());
        String warmup = settings.warmup() == BenchSettings.AUTO
                ? "auto (" + ByteSize.format(BenchSettings.AUTO_WARMUP_BYTES) + " or " + BenchSettings.AUTO_MAX_WARMUP
                        + " calls, at least iters/5)"
                : Integer.toString(settings.warmup());
        out.printf(Locale.ROOT, "# sizes %s..%s B, types %s, iters %s, warmup %s, timeout %ds, chunk %s%n",
                ByteSize.format(sizes.get(0)), ByteSize.format(sizes.get(sizes.size() - 1)),
                settings.types().stream().map(BenchRow::typeName).collect(Collectors.joining(",")), iters, warmup,
                settings.timeout().toSeconds(),
                settings.chunkBytes() == BenchSettings.AUTO ? "default" : ByteSize.format(settings.chunkBytes()));
        out.println(settings.oneRankPerProcess()
                ? "# memory: each rank's own process; columns show the largest rank, the '#' line below each row"
                        + " every rank"
                : "# memory: this JVM's, shared by all its rank threads (one figure per row, not per rank)");
        out.println("#");
        out.flush();
    }
}
