package io.ringstar.cli.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When {@code train --spark} needs a JVM of its own, and what that JVM gets. */
class DriverJvmTest {
    private static final SparkMaster LOCAL = SparkMaster.parse("local[2]", null);
    private static final SparkMaster CLUSTER = SparkMaster.parse("local-cluster[2,1,1024]", null);

    @TempDir
    Path dir;

    @Test
    void withoutSparkEveryMasterNeedsAnotherJvm() {
        assertEquals(Optional.of("Spark is not on this JVM's class path"), DriverJvm.whyAnotherJvm(LOCAL, Map.of(),
                false));
        assertTrue(DriverJvm.whyAnotherJvm(CLUSTER, Map.of("SPARK_HOME", dir.toString()), false).isPresent());
    }

    @Test
    void aLocalMasterRunsHereWhenSparkIsOnTheClassPath() {
        assertTrue(DriverJvm.sparkLoaded(), "the tests have Spark (provided scope)");
        assertEquals(Optional.empty(), DriverJvm.whyAnotherJvm(LOCAL, Map.of(), true));
    }

    @Test
    void aLocalClusterNeedsSparkHomeWithAnEmptyJarsFolder() throws Exception {
        Optional<String> none = DriverJvm.whyAnotherJvm(CLUSTER, Map.of(), true);
        assertEquals(Optional.of("local-cluster[2,1,1024] starts executor JVMs through Spark's launcher, which needs"
                + " SPARK_HOME to be a folder with an empty jars/ directory"), none);
        Map<String, String> env = Map.of("SPARK_HOME", dir.toString());
        assertTrue(DriverJvm.whyAnotherJvm(CLUSTER, env, true).isPresent(), "no jars/ yet");
        Files.createDirectory(dir.resolve("jars"));
        assertEquals(Optional.empty(), DriverJvm.whyAnotherJvm(CLUSTER, env, true));
        // A Spark distribution's jars would come before ringstar's class path, whatever their version.
        Files.createFile(dir.resolve("jars").resolve("spark-core_2.13-3.5.1.jar"));
        assertTrue(DriverJvm.whyAnotherJvm(CLUSTER, env, true).isPresent());
    }

    @Test
    void theClassPathIsAbsoluteAndWithoutSparkAddsTheJarsTheBuildListed() throws Exception {
        List<String> own = DriverJvm.classPath(true);
        assertTrue(own.stream().allMatch(entry -> Path.of(entry).isAbsolute()), own.toString());
        // The tests run from bench/target/test-classes and classes; the build wrote the list beside them.
        Path listed = DriverJvm.codeSource().getParent().resolve(DriverJvm.CLASSPATH_FILE);
        assertTrue(Files.isRegularFile(listed), listed.toString());
        List<String> withSpark = DriverJvm.classPath(false);
        assertEquals(own, withSpark.subList(0, own.size()));
        List<String> spark = List.of(Files.readString(listed).trim().split(File.pathSeparator));
        assertEquals(Stream.concat(own.stream(), spark.stream()).distinct().toList(), withSpark);
        assertTrue(spark.stream().anyMatch(jar -> jar.contains("spark-core_2.13")), spark.toString());
        // ringstar.jar leaves Netty out (the transport carries its own, relocated): the list brings Spark's.
        assertTrue(spark.stream().anyMatch(jar -> jar.contains("netty-transport-4.")), spark.toString());
        assertTrue(spark.stream().allMatch(jar -> jar.endsWith(".jar") && Path.of(jar).isAbsolute()), spark.toString());
    }

    @Test
    void theDriverGetsTheModuleFlagsOfSparksLauncherButNotTheIncubatorModule() throws Exception {
        List<String> flags = DriverJvm.sparkDriverFlags(DriverJvm.classPath(true));
        assertTrue(flags.contains("--add-opens=java.base/java.nio=ALL-UNNAMED"), flags.toString());
        assertTrue(flags.contains("--add-opens=java.base/sun.nio.ch=ALL-UNNAMED"), flags.toString());
        assertFalse(flags.stream().anyMatch(flag -> flag.contains("incubator")), flags.toString());
        assertEquals(List.of(), DriverJvm.sparkDriverFlags(List.of(dir.toString())));
    }
}
