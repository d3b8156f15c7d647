/**
 * ringstar on Spark: ranks as one barrier stage of a Spark job ({@link io.ringstar.spark.SparkRanks}),
 * and Deeplearning4j networks trained data-parallel on a Spark cluster
 * ({@link io.ringstar.spark.SparkDataParallel}).
 *
 * <p>Spark is an optional ({@code provided}) dependency of {@code ringstar-core}: an application
 * that uses this package runs under Spark, which brings it; others never load it. Tested with Spark
 * 4.2 (Scala 2.13). The transport a job uses must be on the executors' class path
 * ({@code ringstar-transport-netty} by default).
 */
package io.ringstar.spark;
