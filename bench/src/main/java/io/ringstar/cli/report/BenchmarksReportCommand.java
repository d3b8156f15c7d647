package io.ringstar.cli.report;

import io.ringstar.bench.report.BenchmarksReport;
import io.ringstar.bench.report.MachineFacts;
import io.ringstar.bench.report.ReportInputs;
import io.ringstar.bench.report.RunRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ringstar report benchmarks --results DIR --out BENCHMARKS.md}: writes benchmarks.sh's report
 * ({@link BenchmarksReport}) from a results directory, replacing the file only once it is complete.
 * Exit status 1 when a step of the run failed (after writing the report, which shows it).
 */
@Command(name = "benchmarks", mixinStandardHelpOptions = true,
        description = "BENCHMARKS.md from a results directory of bench/benchmarks.sh (run.txt, steps.txt, "
                + "sweep.csv, compare-mpi/, cluster/, jmh.csv).")
public final class BenchmarksReportCommand extends ReportJob {
    @Option(names = "--results", required = true, paramLabel = "DIR", description = "the run's results directory")
    private String results;

    @Option(names = "--out", required = true, paramLabel = "FILE", description = "the report to write")
    private Path out;

    @Option(names = "--log", paramLabel = "FILE", defaultValue = "bench/target/benchmarks.log",
            description = "the run's log, named where a step failed. Default: ${DEFAULT-VALUE}")
    private String log;

    @Option(names = "--before-after", paramLabel = "FILE",
            description = "a hand-written section to copy into the report as it is")
    private Path beforeAfter;

    @Option(names = "--cluster-needs-root", description = "list the cluster step as not run for want of root")
    private boolean clusterNeedsRoot;

    @Override
    int report() throws IOException {
        ReportInputs inputs = ReportInputs.read(results, MachineFacts.ofThisMachine());
        Optional<String> section = beforeAfter != null && Files.isRegularFile(beforeAfter)
                ? Optional.of(Files.readString(beforeAfter, StandardCharsets.UTF_8)) : Optional.empty();
        String text = BenchmarksReport.render(inputs, out, log, section, clusterNeedsRoot);
        Path partial = out.resolveSibling(out.getFileName() + ".tmp");
        Files.writeString(partial, text, StandardCharsets.UTF_8);
        Files.move(partial, out, StandardCopyOption.REPLACE_EXISTING);
        long seconds = inputs.run().finished() - inputs.run().started();
        out().println("== wrote " + out + " (" + seconds / 60 + " min " + seconds % 60 + " s of benchmarks)");
        int status = 0;
        for (RunRecord.Step step : inputs.run().steps()) {
            if (step.status() != 0) {
                err().println("ringstar report benchmarks: step " + step.name() + " failed; see " + log);
                status = 1;
            }
        }
        return status;
    }
}
