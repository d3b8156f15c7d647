package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's first job, shortened (3 ranks, 30 steps), on the packaged jar through {@code ringstar
 * launch}, as a user runs it: the data line first, then the summary of each of the three runs (ps and
 * ring in step, then the async server) with held-out accuracy above chance, and the plot.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConvNetJobIT {
    private static final Path FASHION_MNIST = Paths.get("/usr/share/datasets/fashion-mnist");
    private static final Pattern ACCURACY = Pattern.compile("held-out accuracy ([0-9.]+)% \\(300 samples\\)");

    @TempDir
    Path dir;

    @Test
    void readmeJobTrainsThreeWaysAndPlotsThem() throws Exception {
        Path jar = Paths.get(System.getProperty("ringstar.jar", "target/ringstar.jar"));
        assertTrue(Files.isRegularFile(jar), "the shaded jar exists at " + jar.toAbsolutePath());
        Path plot = dir.resolve("accuracy.png");
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-jar", jar.toString(), "launch", "--nproc", "3", "--", "train", "--model", "convnet",
                "--steps", "30", "--log-every", "15", "--batch-size", "48", "--eval-size", "300", "--samples", "3000",
                "--plot", plot.toString()));
        Path output = dir.resolve("output.txt");
        // Output to a file, not a pipe: see LauncherIT.run for why.
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().put("OMP_NUM_THREADS", "1");
        Process process = builder.start();
        String text;
        try {
            if (!process.waitFor(75, TimeUnit.SECONDS)) {
                fail("not finished within 75 s; output so far:\n" + Files.readString(output));
            }
            text = Files.readString(output, StandardCharsets.UTF_8);
            assertEquals(0, process.exitValue(), text);
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }

        boolean installed = Files.isRegularFile(FASHION_MNIST.resolve("train-images-idx3-ubyte.gz"));
        String firstOfRankZero = text.lines().filter(line -> line.startsWith("[rank 0] ")).findFirst().orElseThrow();
        assertTrue(firstOfRankZero.startsWith(installed ? "[rank 0] # data: Fashion-MNIST from " + FASHION_MNIST
                : "[rank 0] # data: synthetic images, as Fashion-MNIST is not installed"), text);
        String[] summaries = {"[rank 0] train done: ps sync, 3 ranks, convnet: 30 steps",
            "[rank 0] train done: ring sync, 3 ranks, convnet: 30 steps",
            "[rank 1] train done: ps async, 3 ranks, convnet: 30 steps"};
        for (String start : summaries) {
            String line = text.lines().filter(candidate -> candidate.startsWith(start)).findFirst()
                    .orElseThrow(() -> new AssertionError("no line '" + start + "' in:\n" + text));
            Matcher accuracy = ACCURACY.matcher(line);
            assertTrue(accuracy.find(), line);
            // Ten classes: chance is 10%.
            assertTrue(Double.parseDouble(accuracy.group(1)) > 25, "above chance: " + line);
        }
        // Each run prints a progress line after steps 15 and 30, the async one from the first worker.
        assertEquals(4, text.lines().filter(line -> line.matches("\\[rank 0] step +(15|30)/30 .*")).count(), text);
        assertEquals(2, text.lines().filter(line -> line.matches("\\[rank 1] step +(15|30)/30 .*")).count(), text);
        assertTrue(text.contains("[rank 0] plot: " + plot), text);
        byte[] png = Files.readAllBytes(plot);
        assertTrue(png.length > 1000 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G', "a PNG at " + plot);
    }
}
