/**
 * The command line of {@code ringstar.jar}: {@link io.ringstar.cli.Main} picks one of the commands
 * ({@code bench}, {@code train}, {@code launch}, {@code jmh}, {@code report}), picocli parses its
 * flags and writes its help, and {@link io.ringstar.cli.UsageException} turns a command line that
 * makes no sense into exit status 2, before any rank starts. Each command only wires: it checks its
 * flags, hands them to its application (the sweep in {@code io.ringstar.bench}, training in
 * {@code io.ringstar.train}, the launcher in {@code io.ringstar.cli.launch}) and prints what comes
 * back; {@link io.ringstar.cli.FailureReport} tells every command's failed ranks the same way.
 * This package depends on the applications and on {@code io.ringstar.ranks}; none of them depends
 * on it.
 */
package io.ringstar.cli;
