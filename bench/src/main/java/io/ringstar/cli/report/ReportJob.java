package io.ringstar.cli.report;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What every {@code ringstar report} subcommand shares: its output streams, and a missing or
 * malformed file turned into a one-line message (naming the file and the line) and exit status 1.
 */
abstract class ReportJob implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** The subcommand's work; returns its exit status. */
    abstract int report() throws IOException;

    @Override
    public final Integer call() {
        try {
            return report();
        } catch (NoSuchFileException e) {
            err().println("ringstar report " + spec.name() + ": no such file: " + e.getMessage());
            return 1;
        } catch (IOException | IllegalArgumentException | ArithmeticException e) {
            err().println("ringstar report " + spec.name() + ": " + e.getMessage());
            return 1;
        } finally {
            out().flush();
        }
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }
}
