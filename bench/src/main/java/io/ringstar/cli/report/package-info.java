/**
 * {@code ringstar report} and its subcommands: each reads its flags, calls the report that
 * {@code io.ringstar.bench.report} computes from the benchmark scripts' result files, and writes
 * or prints the Markdown. A missing or malformed file is one line and exit status 1. {@code hang}
 * and {@code timeline} read the ranks' trace dumps instead ({@link io.ringstar.cli.report.TraceDumps}),
 * skipping a file they cannot read with one line that names it.
 */
package io.ringstar.cli.report;
