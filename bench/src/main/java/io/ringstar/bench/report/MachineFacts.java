package io.ringstar.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The machine a report describes: cores, processor, memory, kernel, Java and Open MPI.
 *
 * @param cores the processors this process may use
 * @param cpu the processor's model name, or "model unknown"
 * @param memory the memory, e.g. "24 GiB", or "? GiB"
 * @param kernel the kernel release
 * @param java the Java runtime, as the second line of {@code java -version} names it
 * @param mpi the first line of {@code mpirun --version}, or "Open MPI: not installed"
 */
public record MachineFacts(int cores, String cpu, String memory, String kernel, String java, String mpi) {
    private static final double KIB_PER_GIB = 1024 * 1024;

    /** The facts of this machine; runs {@code mpirun --version} for at most 10 seconds. */
    public static MachineFacts ofThisMachine() {
        return new MachineFacts(Runtime.getRuntime().availableProcessors(), readCpu(), readMemory(),
                System.getProperty("os.version"), System.getProperty("java.runtime.name") + " (build "
                        + System.getProperty("java.runtime.version") + ")", runMpirun());
    }

    /** The Markdown list item: "2 cores (Intel...), 24 GiB memory, Linux 6.1". */
    public String summary() {
        return cores + " cores (" + cpu + "), " + memory + " memory, Linux " + kernel;
    }

    private static String readCpu() {
        for (String line : lines(Path.of("/proc/cpuinfo"))) {
            if (line.startsWith("model name")) {
                return line.substring(line.indexOf(':') + 1).strip();
            }
        }
        return "model unknown";
    }

    private static String readMemory() {
        for (String line : lines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemTotal:")) {
                String kib = line.replaceAll("[^0-9]", "");
                return Numbers.fixed(Long.parseLong(kib) / KIB_PER_GIB, 0) + " GiB";
            }
        }
        return "? GiB";
    }

    private static String runMpirun() {
        String missing = "Open MPI: not installed";
        Path output = null;
        try {
            // Through a file, so that a hung mpirun cannot block a read: the wait below is bounded.
            output = Files.createTempFile("ringstar-report-mpirun-", ".txt");
            Process process = new ProcessBuilder("mpirun", "--version").redirectOutput(output.toFile())
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return missing;
            }
            List<String> lines = Files.readAllLines(output, StandardCharsets.UTF_8);
            return process.exitValue() == 0 && !lines.isEmpty() ? lines.get(0) : missing;
        } catch (IOException e) {
            return missing;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return missing;
        } finally {
            if (output != null) {
                output.toFile().delete();
            }
        }
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return List.of();
        }
    }
}
