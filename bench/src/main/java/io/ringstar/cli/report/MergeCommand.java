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
 * {@code ringstar report merge --out ALL.csv PART.csv...}: one CSV of several with the same header,
 * optionally with every row's transport set to a label (compare-mpi.sh tells Aeron UDP from Aeron IPC
 * so). A part with other columns than the first is refused, naming both headers.
 */
@Command(name = "merge", mixinStandardHelpOptions = true,
        description = "Concatenates CSV files with the same header into one.")
public final class MergeCommand extends ReportJob {
    @Option(names = "--out", required = true, paramLabel = "FILE", description = "the merged file (replaced)")
    private Path out;

    @Option(names = "--transport", paramLabel = "LABEL", description = "set the transport column of every row")
    private String transport;

    @Parameters(arity = "1..*", paramLabel = "PART.csv", description = "the files to merge, in order")
    private List<Path> parts;

    @Override
    int report() throws IOException {
        List<String> header = null;
        Path first = null;
        List<String> lines = new ArrayList<>();
        for (Path part : parts) {
            CsvFile csv = CsvFile.read(part);
            if (header == null) {
                header = csv.header();
                first = part;
                lines.add(line(header));
            } else if (!header.equals(csv.header())) {
                throw new IllegalArgumentException(part + " has other columns than " + first + ":\n  "
                        + String.join(",", csv.header()) + "\n  " + String.join(",", header));
            }
            int column = transport == null ? -1 : csv.require(List.of("transport")).header().indexOf("transport");
            for (CsvFile.Row row : csv.rows()) {
                List<String> cells = new ArrayList<>(row.cells());
                if (column >= 0) {
                    cells.set(column, transport);
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
