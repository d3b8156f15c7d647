package io.ringstar.bench.jmh;

import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The fork, warm-up and measurement that every benchmark in this jar runs with by default; JMH
 * reads these annotations from a benchmark's superclasses, so each benchmark extends this class
 * and command-line options still override them. The forked JVM is started with {@code -cp}, not
 * {@code -jar}, so the jar manifest's {@code Add-Exports}/{@code Add-Opens} do not reach it: the
 * flags ND4J and Agrona need are passed here.
 */
@Fork(value = 1, jvmArgsAppend = {
        "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-opens", "java.base/java.nio=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public abstract class BenchmarkDefaults {
}
