package io.ringstar.cli.report;

import io.ringstar.bench.report.CsvFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ringstar report merge --out ALL.csv PART.csv...}: one CSV of several, optionally with every
 * row's transport set to a label (compare-mpi.sh tells Aeron UDP from Aeron IPC so). The parts may
 * differ only in columns added at the end (the bench's accounting columns, which Open MPI's program
 * does not write): the merged header is the widest, and a shorter part's rows get empty fields in
 * the columns it lacks. A part whose columns are not a beginning of the widest is refused, naming
 * both headers.
 */
@Command(name = "merge", mixinStandardHelpOptions = true,
        description = "Concatenates CSV files whose headers agree (one may add columns at the end) into one.")
public final class MergeCommand extends ReportJob {
    @Option(names = "--out", required = true, paramLabel = "FILE", description = "the merged file (replaced)")
    private Path out;

    @Option(names = "--transport", paramLabel = "LABEL", description = "set the transport column of every row")
    private String transport;

    @Parameters(arity = "1..*", paramLabel = "PART.csv", description = "the files to merge, in order")
    private List<Path> parts;

    @Override
    int report() throws IOException {
        List<CsvFile> files = new ArrayList<>();
        CsvFile widest = null;
        for (Path part : parts) {
            CsvFile csv = CsvFile.read(part);
            files.add(csv);
            if (widest == null || csv.header().size() > widest.header().size()) {
                widest = csv;
            }
        }
        List<String> header = widest.header();
        for (CsvFile csv : files) {
            if (!csv.header().equals(header.subList(0, csv.header().size()))) {
                throw new IllegalArgumentException(csv.file() + " has other columns than " + widest.file() + ":\n  "
                        + String.join(",", csv.header()) + "\n  " + String.join(",", header));
            }
        }
        List<String> lines = new ArrayList<>();
        lines.add(line(header));
        for (CsvFile csv : files) {
            int column = transport == null ? -1 : csv.require(List.of("transport")).header().indexOf("transport");
            for (CsvFile.Row row : csv.rows()) {
                List<String> cells = new ArrayList<>(row.cells());
                if (column >= 0) {
                    cells.set(column, transport);
                }
                while (cells.size() < header.size()) {
                    cells.add("");
                }
                lines.add(line(cells));
            }
        }
        Files.write(out, lines, StandardCharsets.UTF_8);
        return 0;
    }

    private static String line(List<String> cells) {
        return String.join(",", cells.stream().map(CsvFile::quote).toList());
    }
}
