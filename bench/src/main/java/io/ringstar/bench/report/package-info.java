/**
 * What {@code ringstar report} prints or writes (its commands are {@code io.ringstar.cli.report}):
 * the tables, ratios and crossing points of the benchmark scripts
 * ({@code bench/benchmarks.sh}, {@code bench/compare-mpi.sh}, {@code bench/cluster.sh}), computed from
 * their result files (the CSV schema of {@code ringstar bench --output x.csv}, JMH's CSV, and the
 * run's {@code run.txt} and {@code steps.txt}) and written as Markdown. Nothing here measures: every
 * class reads files and returns text.
 */
package io.ringstar.bench.report;
