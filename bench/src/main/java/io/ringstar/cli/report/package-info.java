/**
 * {@code ringstar report} and its subcommands: each reads its flags, calls the report that
 * {@code io.ringstar.bench.report} computes from the benchmark scripts' result files, and writes
 * or prints the Markdown. A missing or malformed file is one line and exit status 1.
 */
package io.ringstar.cli.report;
