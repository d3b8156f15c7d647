package io.ringstar.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.OverwrittenOptionException;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * How a command line that picocli could not parse is reported: one line that names the command,
 * the flag or word and what to do, then where the help is; exit status {@value UsageException#EXIT_STATUS}.
 */
final class UsageErrors {
    private UsageErrors() {
    }

    /** picocli's parameter exception handler. */
    static int report(ParameterException problem, String[] args) {
        CommandLine commandLine = problem.getCommandLine();
        CommandSpec spec = commandLine.getCommandSpec();
        PrintWriter err = commandLine.getErr();
        err.println(spec.qualifiedName() + ": " + message(problem, spec));
        if (problem instanceof UnmatchedArgumentException unmatched && !unmatched.getSuggestions().isEmpty()) {
            err.println("Did you mean " + String.join(" or ", unmatched.getSuggestions()) + "?");
        }
        err.println("Try '" + spec.qualifiedName() + " --help'.");
        err.flush();
        return UsageException.EXIT_STATUS;
    }

    private static String message(ParameterException problem, CommandSpec spec) {
        if (problem instanceof UnmatchedArgumentException unmatched && !unmatched.getUnmatched().isEmpty()) {
            String first = unmatched.getUnmatched().get(0);
            boolean program = spec.parent() == null;
            if (program && !first.startsWith("-")) {
                return "unknown command '" + first + "'; commands: " + String.join(", ", spec.subcommands().keySet());
            }
            if (!first.startsWith("-")) {
                return "unexpected argument '" + first + "'; flags start with --";
            }
            return "unknown flag '" + first + "'" + (program ? "" : "; known flags: " + knownFlags(spec));
        }
        if (problem instanceof OverwrittenOptionException overwritten
                && overwritten.getOverwritten() instanceof OptionSpec option) {
            return "flag " + option.longestName() + " is given more than once";
        }
        return problem.getMessage();
    }

    private static String knownFlags(CommandSpec spec) {
        List<String> names = spec.options().stream().filter(option -> !option.usageHelp())
                .map(OptionSpec::longestName).toList();
        return names.stream().collect(Collectors.joining(", "));
    }
}
