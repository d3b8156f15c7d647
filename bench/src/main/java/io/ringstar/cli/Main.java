package io.ringstar.cli;

import io.ringstar.DistributedConfig;
import io.ringstar.cli.report.ReportCommand;
import io.ringstar.ranks.RankFailureException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;

/**
 * Entry point of {@code ringstar.jar}: {@code ringstar <command> [flags]}. Each command is its own
 * picocli command class implementing {@link Command}; this class only wires them under one program
 * and turns their outcome into an exit status (0 success, 1 failed or wrong run, 2 usage error).
 */
public final class Main {
    /** The program's name in usage lines and messages. */
    public static final String PROGRAM = "ringstar";
    private static final int USAGE_WIDTH = 110;
    private static final String LOG_FORMAT = "java.util.logging.SimpleFormatter.format";

    private final Function<Map<String, String>, List<?>> commands;
    private final Map<String, String> env;

    /**
     * A program with exactly these commands, for one command line (tests use it to run one command
     * with its collaborators replaced). Each is a picocli {@code @Command} object: a {@link Command},
     * or a {@link Callable} whose result is the exit status.
     */
    public Main(List<?> commands) {
        this.commands = ignored -> commands;
        this.env = Map.of();
    }

    private Main(Map<String, String> env, Function<Map<String, String>, List<?>> commands) {
        this.commands = commands;
        this.env = Map.copyOf(env);
    }

    /** The commands of the jar, in the order the help lists them. */
    static Main standard() {
        return standard(System.getenv());
    }

    /** The commands of the jar, reading launcher variables from {@code env} instead of this process's. */
    public static Main standard(Map<String, String> env) {
        return new Main(env, Main::subcommands);
    }

    /**
     * The jar's commands, built afresh for each command line. A new command (such as a
     * {@code report} command, a {@link Command} or a picocli {@link Callable}) is added here and
     * nowhere else.
     */
    private static List<?> subcommands(Map<String, String> env) {
        return List.of(new BenchCommand(env), new TrainCommand(env), new LaunchCommand(env), new JmhCommand(),
                new ReportCommand());
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
    public int run(String[] args, PrintStream out, PrintStream err) {
        CommandLine program = commandLine(commands.apply(env));
        program.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        program.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        program.setParameterExceptionHandler(UsageErrors::report);
        program.setExecutionStrategy(parsed -> execute(parsed, out, err));
        return program.execute(args);
    }

    /** The program and its commands, each with the options it declares in code; nothing is parsed yet. */
    public static CommandLine commandLine(List<?> commands) {
        CommandLine program = new CommandLine(new Program());
        for (Object command : commands) {
            CommandLine sub = new CommandLine(command);
            if (command instanceof Command declaring) {
                declaring.declareOptions(sub.getCommandSpec());
            }
            program.addSubcommand(sub);
        }
        program.addSubcommand(new CommandLine.HelpCommand());
        // Wide enough for the help's prose lines, which are written to about 100 columns.
        program.setUsageHelpWidth(USAGE_WIDTH);
        return program;
    }

    private static int execute(ParseResult parsed, PrintStream out, PrintStream err) {
        Integer helpStatus = CommandLine.executeHelpRequest(parsed);
        if (helpStatus != null) {
            return helpStatus;
        }
        CommandSpec spec = leaf(parsed).commandSpec();
        Object command = spec.userObject();
        if (!(command instanceof Command) && !(command instanceof Callable<?>)) {
            err.println(PROGRAM + ": no command given");
            spec.commandLine().usage(err);
            return UsageException.EXIT_STATUS;
        }
        String name = spec.qualifiedName();
        try {
            if (command instanceof Command ours) {
                return ours.run(out, err);
            }
            Object status = ((Callable<?>) command).call();
            return status instanceof Integer code ? code : 0;
        } catch (UsageException e) {
            return usageError(name, e, err);
        } catch (RankFailureException e) {
            return FailureReport.ranksFailed(name, e, CommandDefaults.verbose(spec), out, err);
        } catch (Exception e) {
            return FailureReport.failed(name, e, CommandDefaults.verbose(spec), err);
        }
    }

    /** A command line that makes no sense: what is wrong and where the help is, status 2. */
    static int usageError(String name, UsageException problem, PrintStream err) {
        err.println(name + ": " + problem.getMessage());
        err.println("Try '" + name + " --help'.");
        return UsageException.EXIT_STATUS;
    }

    /**
     * Checks one command line of this program as {@link #run} would run it, without running it:
     * parses it and asks the command to {@link Command#check} its flags and environment. The
     * launcher asks this of its ranks' command before it starts any of them.
     *
     * @return 0 when the line would run, else the usage error's status, 2, after reporting it to {@code err}
     */
    public int check(String[] args, PrintStream err) {
        CommandLine program = commandLine(commands.apply(env));
        program.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        ParseResult parsed;
        try {
            parsed = program.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            return UsageErrors.report(e, args);
        }
        ParseResult leaf = leaf(parsed);
        if (leaf.isUsageHelpRequested()) {
            return 0;
        }
        if (leaf.commandSpec().userObject() instanceof Command command) {
            try {
                command.check();
            } catch (UsageException e) {
                return usageError(leaf.commandSpec().qualifiedName(), e, err);
            }
        }
        return 0;
    }

    /**
     * The configuration of the rank that one command line of this program would run, as its
     * command resolves it from its flags and this program's environment ({@link Command#rankConfig}),
     * without running it: empty for a command that runs no ranks, a request for help, or a line
     * that would not run ({@link #check} says why). The launcher reads its ranks' trace directory
     * and job id from it.
     */
    public Optional<DistributedConfig> rankConfig(String[] args) {
        ParseResult parsed;
        try {
            parsed = commandLine(commands.apply(env)).parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            return Optional.empty();
        }
        ParseResult leaf = leaf(parsed);
        if (leaf.isUsageHelpRequested() || !(leaf.commandSpec().userObject() instanceof Command command)) {
            return Optional.empty();
        }
        try {
            return command.rankConfig();
        } catch (UsageException e) {
            return Optional.empty();
        }
    }

    /** The innermost command a parse result names. */
    private static ParseResult leaf(ParseResult parsed) {
        ParseResult leaf = parsed;
        while (leaf.hasSubcommand()) {
            leaf = leaf.subcommand();
        }
        return leaf;
    }

    /** The program itself: it only chooses a command. */
    @CommandLine.Command(name = PROGRAM,
            customSynopsis = {PROGRAM + " <command> [flags]", "       " + PROGRAM + " <command> --help"},
            description = {"", "Collective communication for data-parallel training: the star (parameter server)",
                "and the ring all-reduce, measured and run from one jar (java -jar ringstar.jar).", ""},
            commandListHeading = "%nCommands:%n",
            footer = {"", "Exit status: 0 success, 1 failed run or wrong results, 2 usage error."})
    static final class Program {
        @CommandLine.Option(names = {"-h", "--help"}, usageHelp = true, description = "this text")
        boolean help;
    }
}
