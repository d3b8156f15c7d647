/**
 * {@code train --spark}: the Spark master the command takes ({@link io.ringstar.cli.spark.SparkMaster})
 * and the driver JVM it needs ({@link io.ringstar.cli.spark.DriverJvm}: Spark is not inside
 * ringstar.jar, so without it the command runs again in a JVM with the Spark jars the build listed).
 */
package io.ringstar.cli.spark;
