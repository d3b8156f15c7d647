package io.ringstar.cli.spark;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationTargetException;
import java.net.MalformedURLException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Makes a JVM fit to be the Spark driver of {@code train --spark}, starting a child JVM when this
 * one is not, and copying its output and exit status.
 *
 * <p>Spark is not inside {@code ringstar.jar} (it is a provided dependency: a cluster's
 * {@code spark-submit} brings its own). The build writes where Maven put Spark's jars, the
 * provided class path of absolute paths into the local repository, into {@value #CLASSPATH_FILE}
 * beside the jar ({@code bench/target}). When Spark's classes are missing, the command runs again in
 * a child JVM with {@code ringstar.jar} and that class path, with ringstar's JVM flags and the module
 * flags Spark's own launcher gives a driver on JDK 17.
 *
 * <p>A {@code local-cluster} master also needs a process environment that only a new process can
 * have: Spark's launcher starts each executor JVM from {@code SPARK_HOME}, which must be a folder with
 * a {@code jars/} directory (Spark's jars come from the executors' class path instead, so it stays
 * empty). The child gets a temporary one, deleted when it exits; executors write their logs into its
 * {@code work/} folder, which is kept, and named, when the child fails.
 */
public final class DriverJvm {
    /** The file the build writes beside ringstar.jar: Spark's class path from the local Maven repository. */
    public static final String CLASSPATH_FILE = "spark-classpath.txt";
    /** Set in the child's environment, so that a child that still cannot run says why instead of starting another. */
    static final String RELAUNCHED = "RINGSTAR_SPARK_RELAUNCHED";
    static final String SPARK_HOME = "SPARK_HOME";
    static final String SPARK_LOCAL_IP = "SPARK_LOCAL_IP";
    private static final String SPARK_CONTEXT = "org.apache.spark.SparkContext";
    private static final String MODULE_OPTIONS = "org.apache.spark.launcher.JavaModuleOptions";
    /** Spark's driver flags name this module for its vector code (Spark ML's); loading it only prints a warning. */
    private static final String INCUBATOR_VECTOR = "--add-modules=jdk.incubator.vector";

    private DriverJvm() {
    }

    /** Whether Spark's classes are on this JVM's class path. */
    public static boolean sparkLoaded() {
        try {
            Class.forName(SPARK_CONTEXT, false, DriverJvm.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /**
     * Why this JVM cannot be {@code master}'s driver, or empty when it can: Spark's classes are
     * missing, or a {@code local-cluster} master has no {@code SPARK_HOME} with an empty {@code jars/}
     * in {@code env}.
     */
    public static Optional<String> whyAnotherJvm(SparkMaster master, Map<String, String> env, boolean sparkLoaded) {
        if (!sparkLoaded) {
            return Optional.of("Spark is not on this JVM's class path");
        }
        if (master.startsExecutorJvms() && !emptySparkHome(env.get(SPARK_HOME))) {
            return Optional.of(master.url() + " starts executor JVMs through Spark's launcher, which needs "
                    + SPARK_HOME + " to be a folder with an empty jars/ directory");
        }
        return Optional.empty();
    }

    private static boolean emptySparkHome(String home) {
        if (home == null || home.isEmpty()) {
            return false;
        }
        Path jars = Path.of(home, "jars");
        if (!Files.isDirectory(jars)) {
            return false;
        }
        try (Stream<Path> entries = Files.list(jars)) {
            return entries.findAny().isEmpty();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The class path of a driver JVM: this JVM's own (ringstar.jar, or the classes of a build and
     * their dependencies), and when it has no Spark, the jars listed in {@value #CLASSPATH_FILE}
     * beside ringstar's code. Every entry absolute, so that executors started elsewhere read the same
     * files.
     *
     * @throws SparkSetupException saying how to get Spark, if the file is missing or names a jar that is gone
     */
    public static List<String> classPath(boolean sparkLoaded) throws SparkSetupException {
        List<String> entries = new ArrayList<>(absolute(System.getProperty("java.class.path")));
        if (sparkLoaded) {
            return entries;
        }
        Path file = codeSource().toAbsolutePath().getParent().resolve(CLASSPATH_FILE);
        String howTo = "Spark is not inside ringstar.jar; the build lists the jars of Spark it fetched into the local"
                + " Maven repository in " + file + ", and ";
        if (!Files.isRegularFile(file)) {
            throw new SparkSetupException(howTo + "that file is missing: run 'mvn -B -DskipTests package' in the"
                    + " repository (it writes the file), or submit ringstar.jar with spark-submit, whose Spark it"
                    + " then uses");
        }
        String listed;
        try {
            listed = Files.readString(file, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new SparkSetupException(howTo + "it cannot be read: " + e.getMessage());
        }
        for (String entry : absolute(listed)) {
            if (!Files.exists(Path.of(entry))) {
                throw new SparkSetupException(howTo + "it names " + entry + ", which is gone: run 'mvn -B -DskipTests"
                        + " package' again to fetch Spark back into the Maven repository");
            }
            entries.add(entry);
        }
        // The list names a jar twice where two of the build's class paths hold it.
        return entries.stream().distinct().toList();
    }

    private static List<String> absolute(String classPath) {
        return Arrays.stream(classPath.split(File.pathSeparator)).filter(entry -> !entry.isBlank())
                .map(entry -> Path.of(entry).toAbsolutePath().toString()).toList();
    }

    /** Where ringstar's own classes come from: ringstar.jar, or a build's classes directory. */
    static Path codeSource() {
        try {
            return Path.of(DriverJvm.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("cannot locate ringstar's own classes", e);
        }
    }

    /**
     * The JVM flags Spark's launcher gives a driver on this JDK (its {@code JavaModuleOptions}, read
     * from the {@code spark-launcher} jar on {@code classPath}) less the incubator vector module, which
     * Spark's ML alone uses and which only adds a warning; none if that jar is not there.
     */
    static List<String> sparkDriverFlags(List<String> classPath) {
        Optional<String> launcher = classPath.stream()
                .filter(entry -> Path.of(entry).getFileName().toString().startsWith("spark-launcher")).findFirst();
        if (launcher.isEmpty()) {
            return List.of();
        }
        try (URLClassLoader loader = new URLClassLoader(new URL[] {Path.of(launcher.get()).toUri().toURL()}, null)) {
            String[] flags = (String[]) loader.loadClass(MODULE_OPTIONS).getMethod("defaultModuleOptionArray")
                    .invoke(null);
            return Arrays.stream(flags).filter(flag -> !flag.equals(INCUBATOR_VECTOR)).toList();
        } catch (MalformedURLException | ReflectiveOperationException e) {
            return List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Runs {@code args} (this program's command line) in a child JVM fit to be {@code master}'s driver
     * and waits for it; its output goes to {@code out} and {@code err}.
     *
     * @param mainClass the program's main class, which the child runs with {@code args}
     * @param ringstarFlags the JVM flags ringstar.jar's manifest gives (they do not apply on a class path)
     * @return the child's exit status
     * @throws SparkSetupException if Spark cannot be found, saying what to do
     */
    public static int runInChild(String mainClass, List<String> args, SparkMaster master, String why,
            Map<String, String> env, List<String> ringstarFlags, PrintStream out, PrintStream err)
            throws SparkSetupException {
        if (env.containsKey(RELAUNCHED)) {
            throw new IllegalStateException("the driver JVM started for --spark still cannot run: " + why);
        }
        List<String> classPath = classPath(sparkLoaded());
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // This JVM's own options first (-Xmx, RINGSTAR_JAVA_OPTS through the ringstar script), then the flags.
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.addAll(ringstarFlags);
        command.addAll(sparkDriverFlags(classPath));
        command.add("-cp");
        command.add(String.join(File.pathSeparator, classPath));
        command.add(mainClass);
        command.addAll(args);
        Map<String, String> childEnv = new HashMap<>(env);
        childEnv.put(RELAUNCHED, why);
        if (master.onThisMachine()) {
            childEnv.putIfAbsent(SPARK_LOCAL_IP, "127.0.0.1");
        }
        Path sparkHome = null;
        try {
            if (master.startsExecutorJvms()) {
                sparkHome = Files.createTempDirectory("ringstar-spark-home-");
                Files.createDirectory(sparkHome.resolve("jars"));
                childEnv.put(SPARK_HOME, sparkHome.toString());
            }
            int status = run(command, childEnv, out, err);
            if (sparkHome != null) {
                if (status == 0) {
                    deleteTree(sparkHome);
                } else {
                    err.println("train --spark: the executors' logs are in " + sparkHome.resolve("work"));
                }
            }
            return status;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the driver JVM for --spark: " + e.getMessage(), e);
        }
    }

    /** How long the copying of the child's output may go on after it exited. */
    private static final long PUMP_DRAIN_MILLIS = 5_000;

    private static int run(List<String> command, Map<String, String> env, PrintStream out, PrintStream err)
            throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().clear();
        builder.environment().putAll(env);
        Process child = builder.start();
        // Ctrl-C stops the child with us; it stops its executors.
        Thread stop = new Thread(child::destroy, "ringstar-spark-driver-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        Thread outPump = pump(child.getInputStream(), out, "out");
        Thread errPump = pump(child.getErrorStream(), err, "err");
        try {
            int status = child.waitFor();
            // Bounded: a process the child started may hold its output open after it exits; the pumps are daemons.
            outPump.join(PUMP_DRAIN_MILLIS);
            errPump.join(PUMP_DRAIN_MILLIS);
            return status;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            child.destroy();
            return 1;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException shuttingDown) {
                // The hook is running: Ctrl-C came while the child ran.
            }
        }
    }

    private static Thread pump(InputStream from, PrintStream to, String which) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (from) {
                for (int read = from.read(buffer); read >= 0; read = from.read(buffer)) {
                    to.write(buffer, 0, read);
                    to.flush();
                }
            } catch (IOException e) {
                // The child is gone and its pipe closed; what it wrote was copied.
            }
        }, "ringstar-spark-driver-" + which);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
