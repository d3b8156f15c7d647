/**
 * {@code ringstar bench}: the sweep over message sizes, element types, operations, algorithms and
 * transports that times the star and the ring in the manner of nccl-tests, checks every row against a
 * closed-form result, measures memory, and writes the rows as a table, a CSV or JSON result file
 * ({@link io.ringstar.bench.ResultFile}, whose schema other tools read) and a chart. The measuring
 * application: {@link io.ringstar.bench.BenchRun} runs settings the command line has checked; it
 * depends on neither the command line ({@code io.ringstar.cli}) nor training.
 */
package io.ringstar.bench;
