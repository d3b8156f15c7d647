/**
 * {@code train --spark}: the Spark master the command takes ({@link io.ringstar.cli.spark.SparkMaster}),
 * the driver JVM it needs ({@link io.ringstar.cli.spark.DriverJvm}: Spark is not inside ringstar.jar,
 * so without it the command runs again in a JVM with the Spark jars the build listed), and the Spark
 * context and training in that JVM ({@link io.ringstar.cli.spark.SparkTraining}, the only classes here
 * that name Spark's types, with {@link io.ringstar.cli.spark.SparkContexts}). It knows nothing of the
 * command line: {@code io.ringstar.cli.TrainCommand} reads the flags and calls it, and reports its
 * {@link io.ringstar.cli.spark.SparkSetupException} as a usage error.
 */
package io.ringstar.cli.spark;
