package io.ringstar.cli;

import java.io.PrintStream;
import java.util.List;

/** One sub-command of {@code ringstar.jar}, such as {@code bench}; {@link Main} picks it by name. */
public interface Command {

    /** The word that selects this command on the command line. */
    String name();

    /** One line for the program's help. */
    String summary();

    /** The command's full help, flags and defaults included. */
    void printHelp(PrintStream out);

    /**
     * Runs the command with the arguments that follow its name ({@code --help} is handled by
     * {@link Main} before this is called).
     *
     * @return the process's exit status: 0 for success, 1 for a failed or wrong run
     * @throws UsageException for an unknown flag or a bad value; the process exits with status 2
     */
    int run(List<String> args, PrintStream out, PrintStream err) throws UsageException;
}
