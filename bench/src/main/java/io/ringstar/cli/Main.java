package io.ringstar.cli;

import io.ringstar.bench.BenchCommand;
import io.ringstar.cli.launch.LaunchCommand;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Entry point of {@code ringstar.jar}: {@code ringstar <command> [flags]}. Each command is its own
 * {@link Command} class; this class only picks one and turns its outcome into an exit status
 * (0 success, 1 failed or wrong run, 2 usage error).
 */
public final class Main {
    public static final String PROGRAM = "ringstar";
    private static final String LOG_FORMAT = "java.util.logging.SimpleFormatter.format";

    private final Map<String, Command> commands = new LinkedHashMap<>();

    public Main(List<Command> commands) {
        for (Command command : commands) {
            this.commands.put(command.name(), command);
        }
    }

    /** The commands of the jar, in the order the help lists them. */
    public static Main standard() {
        return standard(System.getenv());
    }

    /** The commands of the jar, reading launcher variables from {@code env} instead of this process's. */
    public static Main standard(Map<String, String> env) {
        return new Main(List.of(new BenchCommand(env), new TrainCommand(env), new LaunchCommand(env), new JmhCommand()));
    }

    public static void main(String[] args) {
        // One line per log record ("INFO: ..."), like the rest of the output; a -D setting of the user's wins.
        if (System.getProperty(LOG_FORMAT) == null) {
            System.setProperty(LOG_FORMAT, "%4$s: %5$s%6$s%n");
        }
        int status = standard().run(args, System.out, System.err);
        System.out.flush();
        // Exits explicitly: a command may leave daemon or JMH threads behind.
        System.exit(status);
    }

    /** Runs one command line and returns the exit status. */
    int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            err.println(PROGRAM + ": no command given");
            printUsage(err);
            return UsageException.EXIT_STATUS;
        }
        String first = args[0];
        if (isHelp(first) || first.equals("help")) {
            printUsage(out);
            return 0;
        }
        Command command = commands.get(first);
        if (command == null) {
            err.println(PROGRAM + ": " + (first.startsWith("-") ? "unknown flag '" : "unknown command '") + first
                    + "'; commands: " + String.join(", ", commands.keySet()));
            err.println("Try '" + PROGRAM + " --help'.");
            return UsageException.EXIT_STATUS;
        }
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        // Flags after "--" belong to the command that launch starts, not to this one.
        int separator = rest.indexOf("--");
        if ((separator < 0 ? rest : rest.subList(0, separator)).stream().anyMatch(Main::isHelp)) {
            command.printHelp(out);
            return 0;
        }
        try {
            return command.run(rest, out, err);
        } catch (UsageException e) {
            err.println(PROGRAM + " " + command.name() + ": " + e.getMessage());
            err.println("Try '" + PROGRAM + " " + command.name() + " --help'.");
            return UsageException.EXIT_STATUS;
        } catch (RuntimeException e) {
            err.println(PROGRAM + " " + command.name() + " failed:");
            e.printStackTrace(err);
            return 1;
        }
    }

    private void printUsage(PrintStream out) {
        out.println("Usage: " + PROGRAM + " <command> [flags]");
        out.println("       " + PROGRAM + " <command> --help");
        out.println();
        out.println("Collective communication for data-parallel training: the star (parameter server)");
        out.println("and the ring all-reduce, measured and run from one jar (java -jar ringstar.jar).");
        out.println();
        out.println("Commands:");
        for (Command command : commands.values()) {
            out.printf("  %-8s %s%n", command.name(), command.summary());
        }
        out.println();
        out.println("Exit status: 0 success, 1 failed run or wrong results, 2 usage error.");
    }

    private static boolean isHelp(String arg) {
        return arg.equals("--help") || arg.equals("-h");
    }
}
