package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code java -jar ringstar.jar train --model convnet --spark local-cluster[2,1,1024]}, as the README
 * runs it (with 4 executors there): the jar holds no Spark, so the command finds the Spark jars the
 * build listed beside it and runs again in a JVM that has them and a SPARK_HOME for Spark's launcher,
 * which starts two executor JVMs; a jar without that list says what to do.
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SparkDemoIT {
    private static final Path JAR = Path.of(System.getProperty("ringstar.jar", "target/ringstar.jar"));

    /** Beside the jar, so that a hard link to it can be made there. */
    private Path dir;

    @BeforeEach
    void makeDir() throws IOException {
        dir = Files.createTempDirectory(JAR.toAbsolutePath().getParent(), "moved-jar-");
    }

    @AfterEach
    void removeDir() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    /** Runs {@code jar} with {@code args}; returns its exit status, then its output. */
    private static Object[] run(Path jar, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-jar", jar.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            process.getOutputStream().close();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(150, TimeUnit.SECONDS), "finished within 150 s: " + output);
            return new Object[] {process.exitValue(), output};
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void theJarHoldsNoSparkAndTrainsOnALocalClusterWithTheJarsTheBuildListed() throws Exception {
        assertTrue(Files.isRegularFile(JAR), JAR.toAbsolutePath().toString());
        try (ZipFile jar = new ZipFile(JAR.toFile())) {
            assertTrue(jar.stream().noneMatch(entry -> entry.getName().startsWith("org/apache/spark/")),
                    "Spark is provided, not inside ringstar.jar");
        }
        Object[] ran = run(JAR, "train", "--model", "convnet", "--spark", "local-cluster[2,1,1024]", "--steps", "4",
                "--log-every", "2", "--batch-size", "16", "--eval-size", "100");
        String output = (String) ran[1];
        assertEquals(0, ran[0], output);
        assertTrue(output.contains("# spark: master local-cluster[2,1,1024] (application app-"), output);
        assertTrue(output.contains("for its executors to offer 2 task slots and load ND4J"), output);
        assertTrue(output.contains("train done: ring sync on Spark local-cluster[2,1,1024], 2 ranks, convnet: 4 steps"
                + " in "), output);
        assertTrue(output.contains("; the ranks agree; params sha256 "), output);
    }

    @Test
    void aJarAwayFromItsBuildSaysHowToGetSpark() throws Exception {
        // A hard link is the jar under another name (a symbolic one the JVM would follow back to the build).
        Path moved = dir.resolve("ringstar.jar");
        try {
            Files.createLink(moved, JAR.toAbsolutePath());
        } catch (IOException | UnsupportedOperationException otherFileSystem) {
            Files.copy(JAR, moved);
        }
        Object[] ran = run(moved, "train", "--model", "convnet", "--spark", "local[2]");
        String output = (String) ran[1];
        assertEquals(2, ran[0], output);
        assertTrue(output.contains("Spark is not inside ringstar.jar; the build lists the jars of Spark it fetched"
                + " into the local Maven repository in " + dir.resolve("spark-classpath.txt") + ", and that file is"
                + " missing: run 'mvn -B -DskipTests package' in the repository"), output);
    }
}
