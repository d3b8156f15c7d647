package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.spi.LoopbackPorts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs the packaged {@code ringstar.jar} the way a user does, with plain {@code java -jar} and no
 * JVM flags: proves that the manifest carries the flags ND4J needs, that the shaded jar finds the
 * in-process transport through ServiceLoader, and that the bench checks its results.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RingstarJarIT {

    private static String runJar(String... args) throws IOException, InterruptedException {
        return finish(startJar(args), args);
    }

    private static Process startJar(String... args) throws IOException {
        Path jar = Paths.get(System.getProperty("ringstar.jar", "target/ringstar.jar"));
        assertTrue(Files.isRegularFile(jar), "the shaded jar exists at " + jar.toAbsolutePath());
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-jar", jar.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close();
        return process;
    }

    private static String finish(Process process, String... args) throws IOException, InterruptedException {
        try {
            byte[] output = process.getInputStream().readAllBytes();
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "the jar finished within 120 s");
            String text = new String(output, StandardCharsets.UTF_8);
            assertEquals(0, process.exitValue(), "exit status of java -jar ringstar.jar " + String.join(" ", args)
                    + "; output:\n" + text);
            return text;
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void twoProcessesFormAGroupOverTcp() throws Exception {
        int port = LoopbackPorts.free();
        String[][] ranks = new String[2][];
        Process[] processes = new Process[2];
        try {
            for (int rank = 1; rank >= 0; rank--) {
                ranks[rank] = new String[] {"bench", "--transport", "netty", "--world-size", "2", "--rank",
                        Integer.toString(rank), "--coordinator", "127.0.0.1:" + port, "--max-bytes", "256K", "--iters",
                        "3", "--warmup", "1", "--timeout", "60"};
                processes[rank] = startJar(ranks[rank]);
            }
            String rankOne = finish(processes[1], ranks[1]);
            String rankZero = finish(processes[0], ranks[0]);
            assertTrue(rankZero.contains("one rank per process") && rankZero.contains("all results right"), rankZero);
            assertEquals(17 * 2, rankZero.lines().filter(line -> line.trim().matches("\\d+ .*")).count(), rankZero);
            assertTrue(rankOne.lines().noneMatch(line -> line.trim().matches("\\d+ .*")),
                    "only rank 0 prints the table: " + rankOne);
        } finally {
            for (Process process : processes) {
                if (process != null) {
                    process.destroyForcibly();
                }
            }
        }
    }

    @Test
    void benchRunsFromThePlainJarWithCheckedResults() throws Exception {
        String output = runJar("bench", "--world-size", "3", "--max-bytes", "64K", "--iters", "3", "--warmup", "1");
        assertTrue(output.contains("all results right"), output);
        long rows = output.lines().filter(line -> line.trim().matches("\\d+ .*")).count();
        // 4 B to 64 KiB is 15 sizes, two algorithms each.
        assertEquals(30, rows, output);
        assertTrue(!output.contains("WARNING: Illegal reflective access") && !output.contains("InaccessibleObject"),
                output);
    }

    @Test
    void helpWorksWithoutLoadingNd4j() throws Exception {
        String output = runJar("--help");
        assertTrue(output.contains("bench"), output);
    }
}
