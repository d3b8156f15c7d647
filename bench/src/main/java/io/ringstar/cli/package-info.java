/**
 * The command line of {@code ringstar.jar}: {@link io.ringstar.cli.Main} picks one of the commands
 * ({@code bench}, {@code train}, {@code launch}, {@code jmh}), picocli parses its flags and writes its
 * help, and {@link io.ringstar.cli.UsageException} turns a command line that makes no sense into exit
 * status 2. The commands' work lives in the packages they call: the sweep in {@code io.ringstar.bench},
 * training in {@code io.ringstar.train}, rank placement and the launcher in {@code io.ringstar.cli.launch}.
 */
package io.ringstar.cli;
