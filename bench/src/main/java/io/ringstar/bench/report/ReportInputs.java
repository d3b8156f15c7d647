package io.ringstar.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Everything benchmarks.sh's report is written from: the run's record, the machine, and the result
 * files of one results directory, each read once. A result file that is missing or empty is absent.
 *
 * @param results the results directory, as the user named it (the report quotes it)
 * @param run run.txt and steps.txt
 * @param machine the machine's facts
 * @param sweep the sweep's rows ({@code sweep.csv}), if any
 * @param compare compare-mpi.sh's rows ({@code compare-mpi/compare-run1.csv}), if any
 * @param cluster cluster.sh's rows ({@code cluster/cluster.csv}), if any
 * @param clusterTable cluster.sh's table ({@code cluster/cluster.md}), if any
 * @param jmh JMH's rows ({@code jmh.csv}), if any
 */
public record ReportInputs(String results, RunRecord run, MachineFacts machine, Optional<List<ResultRow>> sweep,
        Optional<List<ResultRow>> compare, Optional<List<ResultRow>> cluster, Optional<String> clusterTable,
        Optional<List<JmhRow>> jmh) {
    /** The sweep's file, relative to the results directory. */
    public static final String SWEEP = "sweep.csv";
    /** compare-mpi.sh's file of the first run, relative to the results directory. */
    public static final String COMPARE = "compare-mpi/compare-run1.csv";
    /** cluster.sh's CSV, relative to the results directory. */
    public static final String CLUSTER = "cluster/cluster.csv";
    /** cluster.sh's table, relative to the results directory. */
    public static final String CLUSTER_TABLE = "cluster/cluster.md";
    /** JMH's CSV, relative to the results directory. */
    public static final String JMH = "jmh.csv";

    /** Reads the files of {@code results}; a malformed file is refused with its name and line. */
    public static ReportInputs read(String results, MachineFacts machine) throws IOException {
        Path directory = Path.of(results);
        Path jmh = directory.resolve(JMH);
        Path clusterTable = directory.resolve(CLUSTER_TABLE);
        return new ReportInputs(results, RunRecord.read(directory), machine, rows(directory.resolve(SWEEP)),
                rows(directory.resolve(COMPARE)), rows(directory.resolve(CLUSTER)),
                present(clusterTable) ? Optional.of(Files.readString(clusterTable)) : Optional.empty(),
                present(jmh) ? Optional.of(JmhRow.read(jmh)) : Optional.empty());
    }

    /** The sweep's rows, none when it wrote no file. */
    public List<ResultRow> sweepRows() {
        return sweep.orElse(List.of());
    }

    /** Whether {@code file} exists and is not empty, as the shell's {@code test -s}. */
    static boolean present(Path file) throws IOException {
        return Files.isRegularFile(file) && Files.size(file) > 0;
    }

    private static Optional<List<ResultRow>> rows(Path file) throws IOException {
        return present(file) ? Optional.of(ResultRow.read(file)) : Optional.empty();
    }
}
