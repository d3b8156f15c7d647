package io.ringstar.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.factory.Nd4j;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * Keeps the README's "Use it from your project" true: builds {@code bench/src/it/consumer}, a project
 * outside ringstar that depends on {@code ringstar-core} and {@code ringstar-transport-inproc} as the
 * README says, against the artifacts this build has just packaged, and runs its {@code Main} (two
 * ranks in-process, one {@code reduceGradients} checked against its closed form) on exactly the class
 * path those artifacts' POMs give a user.
 *
 * <p>The published POMs are checked as a user's Maven reads them: the modules' {@code pom.xml} files
 * and the parent POM are placed, with the jars, in a repository of this test's own
 * ({@code target/consumer-it/repository}), which the nested build uses as its local repository. The
 * nested build is offline ({@code -o}); it takes third-party artifacts and plugins from this build's
 * local repository, read as a file mirror (copied into the test's repository, never written to), and
 * ringstar's snapshots only from the test's repository. So a runtime dependency that a POM no longer
 * brings fails the compile or the run, a test or foreign-module dependency that leaks into a POM fails
 * the class-path check, and so does a version the parent POM pins for this build that a user would not
 * get.
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class ConsumerProjectIT {

    /** The modules the consumer depends on, in the order their jars are packaged. */
    private static final List<String> MODULES = List.of("core", "transport-inproc");
    /**
     * Groups whose jars this user's runtime class path must never hold: test and benchmark libraries, and
     * the libraries of the transports it does not use.
     */
    private static final List<String> FOREIGN_GROUP_PATHS = List.of("org/junit/", "org/opentest4j/",
            "org/apiguardian/", "org/openjdk/jmh/", "org/knowm/", "io/netty/", "io/aeron/", "org/agrona/");
    private static final long BUILD_SECONDS = 240;
    private static final long RUN_SECONDS = 120;

    @Test
    void aProjectThatDependsOnCoreAndInprocBuildsAndAveragesOverTwoRanks() throws Exception {
        Path bench = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().normalize();
        Path root = bench.getParent();
        Document parentPom = readXml(root.resolve("pom.xml"));
        String version = childText(parentPom.getDocumentElement(), "version");
        Map<String, String> properties = properties(parentPom);

        Path work = bench.resolve("target/consumer-it");
        Path repository = work.resolve("repository");
        Path project = work.resolve("project");
        deleteTree(repository.resolve("io/ringstar"));
        deleteTree(project);
        copyTree(bench.resolve("src/it/consumer"), project);
        install(repository, "ringstar-parent", version, root.resolve("pom.xml"), null);
        List<String> artifactIds = new ArrayList<>();
        for (String module : MODULES) {
            Path pom = root.resolve(module).resolve("pom.xml");
            String artifactId = childText(readXml(pom).getDocumentElement(), "artifactId");
            Path jar = root.resolve(module).resolve("target").resolve(artifactId + "-" + version + ".jar");
            assertTrue(Files.isRegularFile(jar), jar + " is missing: build the modules first (mvn -B verify from"
                    + " the top, or mvn -B -pl bench -am verify), so that the reactor packages them before bench");
            install(repository, artifactId, version, pom, jar);
            artifactIds.add(artifactId);
        }

        Path outerRepository = repositoryRoot(Nd4j.class, "org.nd4j");
        Path settings = work.resolve("settings.xml");
        Files.writeString(settings, mirrorSettings(outerRepository));
        List<String> build = new ArrayList<>(List.of("mvn", "-B", "-o", "-q", "-s", settings.toString(),
                "-Dmaven.repo.local=" + repository, "-Daether.offline.protocols=file",
                "-Dringstar.version=" + version, "-Dmaven.test.skip=true"));
        for (String plugin : List.of("resources", "compiler", "surefire", "jar")) {
            String property = plugin + ".plugin.version";
            assertTrue(properties.containsKey(property), "the parent POM sets " + property);
            build.add("-D" + property + "=" + properties.get(property));
        }
        build.add("package");
        run(build, project, work.resolve("build.log"), BUILD_SECONDS, "the consumer's offline Maven build");

        Path consumerJar = project.resolve("target/ringstar-consumer-1.jar");
        List<String> classPath = manifestClassPath(consumerJar);
        checkRingstarArtifacts(classPath, artifactIds, version);
        checkNothingForeign(classPath);
        checkPinnedVersions(classPath, pinnedVersions(parentPom, properties, version));

        StringBuilder runtime = new StringBuilder(consumerJar.toString());
        for (String entry : classPath) {
            runtime.append(File.pathSeparator).append(repository.resolve(entry));
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String output = run(List.of(java, "-cp", runtime.toString(), "consumer.Main"), project,
                work.resolve("run.log"), RUN_SECONDS, "the consumer's Main (plain java -cp, no JVM flags)");
        assertTrue(output.contains("consumer: 2 ranks averaged 3 elements, all right"), output);
    }

    /** Places a POM (and its jar) where a Maven install puts them; the installed POM is the module's file. */
    private static void install(Path repository, String artifactId, String version, Path pom, Path jar)
            throws IOException {
        Path directory = repository.resolve("io/ringstar").resolve(artifactId).resolve(version);
        Files.createDirectories(directory);
        String base = artifactId + "-" + version;
        Files.copy(pom, directory.resolve(base + ".pom"), StandardCopyOption.REPLACE_EXISTING);
        if (jar != null) {
            Files.copy(jar, directory.resolve(base + ".jar"), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Settings whose one mirror serves every repository from this build's local repository as files.
     * Central, which it mirrors, disables snapshots, so ringstar's snapshots come only from the test's
     * own repository, never from an older install in the developer's.
     */
    private static String mirrorSettings(Path outerRepository) {
        return "<settings><mirrors><mirror><id>this-build-local-repository</id><mirrorOf>*</mirrorOf><url>"
                + outerRepository.toUri() + "</url></mirror></mirrors></settings>\n";
    }

    private static void checkRingstarArtifacts(List<String> classPath, List<String> artifactIds, String version) {
        List<String> expected = new ArrayList<>();
        for (String artifactId : artifactIds) {
            expected.add("io/ringstar/" + artifactId + "/" + version + "/" + artifactId + "-" + version + ".jar");
        }
        List<String> ringstar = classPath.stream().filter(entry -> entry.startsWith("io/ringstar/")).sorted().toList();
        assertEquals(expected.stream().sorted().toList(), ringstar,
                "ringstar's jars on a user's class path: exactly the two it depends on (no test-jar, no other module)");
    }

    private static void checkNothingForeign(List<String> classPath) {
        for (String entry : classPath) {
            for (String group : FOREIGN_GROUP_PATHS) {
                assertTrue(!entry.startsWith(group), "a test, benchmark or unused transport's library leaked into"
                        + " a user's class path through a published POM: " + entry + "; class path: " + classPath);
            }
        }
    }

    /**
     * Every jar a user gets whose version the parent POM pins (dependencyManagement) has that version: the
     * pins reach this build's modules but not a user's transitive dependencies, so a module must declare
     * what it needs at the pinned version itself.
     */
    private static void checkPinnedVersions(List<String> classPath, Map<String, String> pinned) {
        assertTrue(pinned.containsKey("org/slf4j/slf4j-api"), "the parent POM pins slf4j-api: " + pinned.keySet());
        for (String entry : classPath) {
            Path relative = Path.of(entry);
            String artifact = relative.getParent().getParent().toString().replace(File.separatorChar, '/');
            String version = relative.getParent().getFileName().toString();
            if (pinned.containsKey(artifact) && !pinned.get(artifact).equals(version)) {
                fail("a user gets " + artifact + " " + version + " through the published POMs, but the parent POM"
                        + " pins " + pinned.get(artifact) + " for this build: declare it in the module that needs it");
            }
        }
    }

    /** The parent POM's dependencyManagement versions, by group path and artifact id (imports left out). */
    private static Map<String, String> pinnedVersions(Document parentPom, Map<String, String> properties,
            String projectVersion) {
        Map<String, String> pinned = new HashMap<>();
        Element management = childElement(childElement(parentPom.getDocumentElement(), "dependencyManagement"),
                "dependencies");
        NodeList dependencies = management.getElementsByTagName("dependency");
        for (int i = 0; i < dependencies.getLength(); i++) {
            Element dependency = (Element) dependencies.item(i);
            if (dependency.getElementsByTagName("scope").getLength() > 0) {
                continue;
            }
            String version = childText(dependency, "version");
            if (version.equals("${project.version}")) {
                version = projectVersion;
            } else if (version.startsWith("${")) {
                version = properties.get(version.substring(2, version.length() - 1));
            }
            pinned.put(childText(dependency, "groupId").replace('.', '/') + "/" + childText(dependency, "artifactId"),
                    version);
        }
        return pinned;
    }

    /** The Class-Path of the consumer jar's manifest: its runtime dependencies, in the repository layout. */
    private static List<String> manifestClassPath(Path jar) throws IOException {
        assertTrue(Files.isRegularFile(jar), "the consumer build made " + jar);
        try (JarFile file = new JarFile(jar.toFile())) {
            String classPath = file.getManifest().getMainAttributes().getValue("Class-Path");
            assertTrue(classPath != null && !classPath.isBlank(), "the consumer jar's manifest has a Class-Path");
            return List.of(classPath.trim().split("\\s+"));
        }
    }

    /** Runs a command with a bound on its time; its output goes to a log whose text is returned. */
    private static String run(List<String> command, Path directory, Path log, long seconds, String what)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("OMP_NUM_THREADS", "1");
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new AssertionError(what + " could not start " + command.get(0) + " (is it on the PATH?)", e);
        }
        try {
            process.getOutputStream().close();
            boolean finished = process.waitFor(seconds, TimeUnit.SECONDS);
            String output = Files.readString(log, StandardCharsets.UTF_8);
            assertTrue(finished, what + " did not finish within " + seconds + " s; output so far (" + log + "):\n"
                    + output);
            assertEquals(0, process.exitValue(), what + " failed: " + shortened(command) + "\nin "
                    + directory + "; output (" + log + "):\n" + output);
            return output;
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }

    /** A command as one line, with long arguments (class paths) cut short. */
    private static String shortened(List<String> command) {
        StringBuilder line = new StringBuilder();
        for (String argument : command) {
            line.append(line.length() == 0 ? "" : " ")
                    .append(argument.length() <= 200 ? argument : argument.substring(0, 200) + "...");
        }
        return line.toString();
    }

    /** The local repository a class's jar was loaded from: the jar's directory less its coordinates. */
    private static Path repositoryRoot(Class<?> type, String groupId) throws URISyntaxException {
        Path jar = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path root = jar.getParent().getParent().getParent();
        for (int i = 0; i < groupId.split("\\.").length; i++) {
            root = root.getParent();
        }
        assertTrue(Files.isDirectory(root.resolve(groupId.replace('.', '/'))), "local repository found at " + root);
        return root.toAbsolutePath().normalize();
    }

    private static Document readXml(Path file) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        try (InputStream in = Files.newInputStream(file)) {
            return factory.newDocumentBuilder().parse(in);
        }
    }

    private static String childText(Element parent, String name) {
        return childElement(parent, name).getTextContent().trim();
    }

    private static Element childElement(Element parent, String name) {
        for (Node child = parent.getFirstChild(); child != null; child = child.getNextSibling()) {
            if (child instanceof Element element && element.getTagName().equals(name)) {
                return element;
            }
        }
        throw new AssertionError("no <" + name + "> in <" + parent.getTagName() + ">");
    }

    private static Map<String, String> properties(Document pom) {
        Map<String, String> properties = new HashMap<>();
        for (Node child = childElement(pom.getDocumentElement(), "properties").getFirstChild(); child != null;
                child = child.getNextSibling()) {
            if (child instanceof Element element) {
                properties.put(element.getTagName(), element.getTextContent().trim());
            }
        }
        return properties;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path path : paths.toList()) {
                Path target = to.resolve(from.relativize(path).toString());
                if (Files.isDirectory(path)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(path, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
