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
import java.util.TreeMap;
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
 * Builds projects outside ringstar against the artifacts this build has just packaged, as their users'
 * Maven sees them, and runs them on exactly the class path those artifacts' POMs give:
 *
 * <ul>
 *   <li>keeps the README's "Use it from your project" true: {@code bench/src/it/consumer} depends on
 *       {@code ringstar-core} and {@code ringstar-transport-inproc} as the README says; its {@code Main} runs
 *       two ranks in-process, one {@code reduceGradients} checked against its closed form;</li>
 *   <li>keeps the network transports loadable beside other versions of their libraries:
 *       {@code bench/src/it/coexistence} puts the application's own Netty 4.1.96 (a Spark 3.5 executor's) and
 *       Aeron 1.39 with its Agrona (Deeplearning4j's aeron-all) first on its class path, then ringstar's Netty and
 *       Aeron transports, whose jars carry theirs relocated; its {@code Main}, once per transport, forms a group
 *       of three ranks that averages exactly while the application's own libraries are in use. The published
 *       POMs of those two transports must name none of the relocated libraries, and the application's class
 *       path must hold only the application's versions of them. Without the relocation this fails: the Netty
 *       transport with {@code NoClassDefFoundError: io/netty/channel/MultiThreadIoEventLoopGroup}, the Aeron
 *       transport with {@code NoSuchMethodError: MediaDriver$Context.asyncExecutorEnabled(boolean)}.</li>
 * </ul>
 *
 * <p>The published POMs are checked as a user's Maven reads them: the modules' POMs (the shade plugin's
 * dependency-reduced POM for a module that relocates its libraries, as {@code mvn install} would install it)
 * and the parent POM are placed, with the jars, in a repository of this test's own
 * ({@code target/consumer-it/repository}), which the nested build uses as its local repository. The
 * nested build is offline ({@code -o}); it takes third-party artifacts and plugins from this build's
 * local repository, read as a file mirror (copied into the test's repository, never written to), and
 * ringstar's snapshots only from the test's repository. So a runtime dependency that a POM no longer
 * brings fails the compile or the run, a test or foreign-module dependency that leaks into a POM fails
 * the class-path check, and so does a version the parent POM pins for this build that a user would not
 * get. The application's own libraries of the second project come into this build's local repository through
 * bench's POM (its {@code coexistence.*.version} properties, fetched before the integration tests).
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class ConsumerProjectIT {

    /** The modules the README's consumer depends on, in the order their jars are packaged. */
    private static final List<String> README_MODULES = List.of("core", "transport-inproc");
    /** The modules the coexistence project depends on. */
    private static final List<String> NETWORK_MODULES = List.of("core", "transport-netty", "transport-aeron");
    /** The modules whose jar carries libraries relocated, with the packages relocated (under the module's own). */
    private static final Map<String, List<String>> RELOCATED = Map.of(
            "transport-netty", List.of("io.netty"),
            "transport-aeron", List.of("io.aeron", "org.agrona"));
    /** Groups whose jars no user's runtime class path may hold: test and benchmark libraries. */
    private static final List<String> TEST_GROUP_PATHS = List.of("org/junit/", "org/opentest4j/",
            "org/apiguardian/", "org/openjdk/jmh/", "org/knowm/");
    /** The network transports' libraries: a user of the in-process transport gets none of them. */
    private static final List<String> TRANSPORT_LIBRARY_GROUP_PATHS = List.of("io/netty/", "io/aeron/",
            "org/agrona/");
    private static final long BUILD_SECONDS = 240;
    private static final long RUN_SECONDS = 120;

    @Test
    void aProjectThatDependsOnCoreAndInprocBuildsAndAveragesOverTwoRanks() throws Exception {
        Workspace workspace = new Workspace();
        List<String> artifactIds = workspace.installModules(README_MODULES);
        Path project = workspace.build("consumer", Map.of());
        Path consumerJar = project.resolve("target/ringstar-consumer-1.jar");
        List<String> classPath = manifestClassPath(consumerJar);
        checkRingstarArtifacts(classPath, artifactIds, workspace.version);
        List<String> foreign = new ArrayList<>(TEST_GROUP_PATHS);
        foreign.addAll(TRANSPORT_LIBRARY_GROUP_PATHS);
        checkNothingForeign(classPath, foreign);
        checkPinnedVersions(classPath, workspace.pinnedVersions(), List.of());

        String output = workspace.run(consumerJar, classPath, List.of(), "consumer.Main", List.of(),
                "consumer-run.log", "the consumer's Main (plain java -cp, no JVM flags)");
        assertTrue(output.contains("consumer: 2 ranks averaged 3 elements, all right"), output);
    }

    @Test
    void theNetworkTransportsWorkBesideAnApplicationsOlderNettyAeronAndAgronaFirstOnTheClassPath() throws Exception {
        Workspace workspace = new Workspace();
        Map<String, String> benchProperties = properties(readXml(workspace.bench.resolve("pom.xml")));
        Map<String, String> own = new TreeMap<>();
        for (String library : List.of("netty", "aeron")) {
            String property = "coexistence." + library + ".version";
            assertTrue(benchProperties.containsKey(property), "bench's POM sets " + property);
            own.put(library + ".version", benchProperties.get(property));
        }
        List<String> artifactIds = workspace.installModules(NETWORK_MODULES);
        for (String module : RELOCATED.keySet()) {
            checkRelocated(workspace, module, RELOCATED.get(module));
        }
        Path project = workspace.build("coexistence", own);
        Path consumerJar = project.resolve("target/ringstar-coexistence-1.jar");
        List<String> classPath = manifestClassPath(consumerJar);
        checkRingstarArtifacts(classPath, artifactIds, workspace.version);
        // The application's Agrona is inside its aeron-all: ringstar's POMs must not add another.
        List<String> foreign = new ArrayList<>(TEST_GROUP_PATHS);
        foreign.add("org/agrona/");
        checkNothingForeign(classPath, foreign);
        checkOnlyTheApplicationsVersionsFirst(classPath, Map.of("io/netty/", own.get("netty.version"),
                "io/aeron/", own.get("aeron.version")));
        checkPinnedVersions(classPath, workspace.pinnedVersions(), List.of("io/aeron/"));

        String netty = workspace.run(consumerJar, classPath, List.of(), "coexistence.Main", List.of("netty"),
                "coexistence-netty.log", "the coexistence Main over netty, TCP and TLS (plain java -cp, no JVM flags)");
        assertTrue(netty.contains("coexistence: 3 ranks averaged 5 elements over netty (TCP and TLS), all right,"
                + " beside Netty " + own.get("netty.version") + " from netty-transport-" + own.get("netty.version")
                + ".jar"), netty);
        // Agrona, relocated or not, needs the flag that ringstar.jvm.flags carries (transport-aeron/README.md).
        List<String> flags = List.of(workspace.properties.get("ringstar.jvm.flags").trim().split("\\s+"));
        String aeron = workspace.run(consumerJar, classPath, flags, "coexistence.Main", List.of("aeron"),
                "coexistence-aeron.log", "the coexistence Main over aeron (java -cp with ringstar.jvm.flags)");
        String aeronAll = "aeron-all-" + own.get("aeron.version") + ".jar";
        assertTrue(aeron.contains("coexistence: 3 ranks averaged 5 elements over aeron, all right, beside Aeron from "
                + aeronAll + " and Agrona from " + aeronAll), aeron);
    }

    /**
     * This build's modules and parent POM, the test's repository and the nested builds' settings; each
     * test makes its own, and they share the repository (third-party artifacts are copied into it once).
     */
    private static final class Workspace {
        final Path bench = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().normalize();
        final Path root = bench.getParent();
        final Document parentPom;
        final String version;
        final Map<String, String> properties;
        final Path work = bench.resolve("target/consumer-it");
        final Path repository = work.resolve("repository");
        final Path settings = work.resolve("settings.xml");

        Workspace() throws Exception {
            parentPom = readXml(root.resolve("pom.xml"));
            version = childText(parentPom.getDocumentElement(), "version");
            properties = properties(parentPom);
            deleteTree(repository.resolve("io/ringstar"));
            install(repository, "ringstar-parent", version, root.resolve("pom.xml"), null);
            Path outerRepository = repositoryRoot(Nd4j.class, "org.nd4j");
            Files.createDirectories(work);
            Files.writeString(settings, mirrorSettings(outerRepository));
        }

        /** Installs the modules' jars and published POMs into the test's repository; returns their artifact ids. */
        List<String> installModules(List<String> modules) throws Exception {
            List<String> artifactIds = new ArrayList<>();
            for (String module : modules) {
                Path directory = root.resolve(module);
                String artifactId = childText(readXml(directory.resolve("pom.xml")).getDocumentElement(),
                        "artifactId");
                Path jar = directory.resolve("target").resolve(artifactId + "-" + version + ".jar");
                assertTrue(Files.isRegularFile(jar), jar + " is missing: build the modules first (mvn -B verify"
                        + " from the top, or mvn -B -pl bench -am verify), so that the reactor packages them before"
                        + " bench");
                install(repository, artifactId, version, publishedPom(directory), jar);
                artifactIds.add(artifactId);
            }
            return artifactIds;
        }

        /** The published POM of a module as this build's install would place it: see {@link #RELOCATED}. */
        Path publishedPom(Path module) {
            if (!RELOCATED.containsKey(module.getFileName().toString())) {
                return module.resolve("pom.xml");
            }
            Path reduced = module.resolve("target/dependency-reduced-pom.xml");
            assertTrue(Files.isRegularFile(reduced), reduced + " is missing: the module relocates its libraries,"
                    + " and the shade plugin's reduced POM is the one it publishes");
            return reduced;
        }

        /** Copies {@code bench/src/it/<name>} into the work folder and packages it offline; returns its folder. */
        Path build(String name, Map<String, String> extraProperties) throws Exception {
            Path project = work.resolve(name);
            deleteTree(project);
            copyTree(bench.resolve("src/it").resolve(name), project);
            List<String> build = new ArrayList<>(List.of("mvn", "-B", "-o", "-q", "-s", settings.toString(),
                    "-Dmaven.repo.local=" + repository, "-Daether.offline.protocols=file",
                    "-Dringstar.version=" + version, "-Dmaven.test.skip=true"));
            for (String plugin : List.of("resources", "compiler", "surefire", "jar")) {
                String property = plugin + ".plugin.version";
                assertTrue(properties.containsKey(property), "the parent POM sets " + property);
                build.add("-D" + property + "=" + properties.get(property));
            }
            extraProperties.forEach((key, value) -> build.add("-D" + key + "=" + value));
            build.add("package");
            ConsumerProjectIT.run(build, project, work.resolve(name + "-build.log"), BUILD_SECONDS,
                    "the offline Maven build of " + name);
            return project;
        }

        /** Runs a main class on the project's jar and its manifest's class path, resolved in the test's repository. */
        String run(Path jar, List<String> classPath, List<String> jvmFlags, String mainClass, List<String> args,
                String log, String what) throws IOException, InterruptedException {
            StringBuilder runtime = new StringBuilder(jar.toString());
            for (String entry : classPath) {
                runtime.append(File.pathSeparator).append(repository.resolve(entry));
            }
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(jvmFlags);
            command.addAll(List.of("-cp", runtime.toString(), mainClass));
            command.addAll(args);
            return ConsumerProjectIT.run(command, jar.getParent().getParent(), work.resolve(log), RUN_SECONDS,
                    what);
        }

        Map<String, String> pinnedVersions() {
            return ConsumerProjectIT.pinnedVersions(parentPom, properties, version);
        }
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
                "ringstar's jars on a user's class path: exactly those it depends on (no test-jar, no other module)");
    }

    private static void checkNothingForeign(List<String> classPath, List<String> groupPaths) {
        for (String entry : classPath) {
            for (String group : groupPaths) {
                assertTrue(!entry.startsWith(group), "a test, benchmark or unused transport's library leaked into"
                        + " a user's class path through a published POM: " + entry + "; class path: " + classPath);
            }
        }
    }

    /**
     * A module that relocates its libraries publishes a jar that holds them only under its own package, with
     * no native library and no resource of theirs that the application's own copy would read (Netty's version
     * files, service entries), and a POM that names none of them, so that a user's Maven never brings them.
     */
    private static void checkRelocated(Workspace workspace, String module, List<String> packages) throws Exception {
        Path directory = workspace.root.resolve(module);
        Document pom = readXml(workspace.publishedPom(directory));
        String artifactId = childText(pom.getDocumentElement(), "artifactId");
        Element dependencies = childElement(pom.getDocumentElement(), "dependencies");
        for (Node child = dependencies.getFirstChild(); child != null; child = child.getNextSibling()) {
            if (child instanceof Element dependency) {
                String groupId = childText(dependency, "groupId");
                for (String relocated : packages) {
                    assertTrue(!groupId.startsWith(relocated), artifactId + "'s published POM still names "
                            + groupId + ":" + childText(dependency, "artifactId") + ", which its jar relocates");
                }
            }
        }
        String shaded = "io/ringstar/" + module.replace('-', '/') + "/shaded/";
        Path jar = directory.resolve("target").resolve(artifactId + "-" + workspace.version + ".jar");
        Map<String, Integer> relocatedClasses = new TreeMap<>();
        try (JarFile file = new JarFile(jar.toFile())) {
            for (String name : file.stream().map(entry -> entry.getName()).toList()) {
                for (String relocated : packages) {
                    String path = relocated.replace('.', '/') + "/";
                    assertTrue(!name.startsWith(path), jar + " holds " + name + " outside " + shaded);
                    if (name.startsWith(shaded + path) && name.endsWith(".class")) {
                        relocatedClasses.merge(relocated, 1, Integer::sum);
                    }
                }
                assertTrue(!name.startsWith("META-INF/native/") && !name.endsWith(".so"),
                        jar + " holds a native library: " + name);
                assertTrue(!name.equals("META-INF/io.netty.versions.properties"), jar + " holds " + name
                        + ", which the application's own Netty would read as its own");
                assertTrue(!name.startsWith("META-INF/services/") || name.endsWith("/")
                        || name.equals("META-INF/services/io.ringstar.spi.TransportProvider"),
                        jar + " holds a service entry that is not ringstar's: " + name);
            }
        }
        assertEquals(packages.size(), relocatedClasses.size(), jar + " holds the relocated classes of "
                + relocatedClasses + " under " + shaded + "; expected " + packages);
    }

    /**
     * The application's own versions of the transports' libraries are the only ones on its class path (ringstar
     * brings none of its own through a POM, nor through a version pin), and they come before ringstar's jars.
     */
    private static void checkOnlyTheApplicationsVersionsFirst(List<String> classPath, Map<String, String> own) {
        int firstRingstar = classPath.size();
        for (int i = 0; i < classPath.size(); i++) {
            if (classPath.get(i).startsWith("io/ringstar/")) {
                firstRingstar = Math.min(firstRingstar, i);
            }
        }
        Map<String, Integer> seen = new TreeMap<>();
        for (int i = 0; i < classPath.size(); i++) {
            String entry = classPath.get(i);
            for (Map.Entry<String, String> library : own.entrySet()) {
                if (entry.startsWith(library.getKey())) {
                    String version = Path.of(entry).getParent().getFileName().toString();
                    assertEquals(library.getValue(), version, "the application's class path holds " + entry
                            + ", not the application's own " + library.getKey() + " " + library.getValue()
                            + ": ringstar's POMs still bring it; class path: " + classPath);
                    assertTrue(i < firstRingstar, entry + " comes after ringstar's jars: " + classPath);
                    seen.merge(library.getKey(), 1, Integer::sum);
                }
            }
        }
        assertEquals(own.keySet(), seen.keySet(), "the application's own libraries on its class path: " + classPath);
    }

    /**
     * Every jar a user gets whose version the parent POM pins (dependencyManagement) has that version: the
     * pins reach this build's modules but not a user's transitive dependencies, so a module must declare
     * what it needs at the pinned version itself. Groups the application chose versions of itself are left out.
     */
    private static void checkPinnedVersions(List<String> classPath, Map<String, String> pinned,
            List<String> applicationsOwn) {
        assertTrue(pinned.containsKey("org/slf4j/slf4j-api"), "the parent POM pins slf4j-api: " + pinned.keySet());
        for (String entry : classPath) {
            if (applicationsOwn.stream().anyMatch(entry::startsWith)) {
                continue;
            }
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
