package io.ringstar.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The bench module holds three applications, the measurement ({@code io.ringstar.bench...}), training
 * ({@code io.ringstar.train...}) and the command line with the launcher ({@code io.ringstar.cli...}),
 * and what the first two share, {@code io.ringstar.ranks}. Only the command line may depend on the
 * applications, they only on the shared package, and no package of the module on another that
 * depends back on it. Read from the compiled classes by {@code jdeps} (the JDK's own), so a
 * dependency through a fully qualified name counts as much as one through an import.
 */
class PackageLayeringTest {
    /** Each tree of the module, and the trees it may depend on besides itself. */
    private static final Map<String, Set<String>> ALLOWED = Map.of(
            "io.ringstar.cli", Set.of("io.ringstar.bench", "io.ringstar.train", "io.ringstar.ranks"),
            "io.ringstar.bench", Set.of("io.ringstar.ranks"),
            "io.ringstar.train", Set.of("io.ringstar.ranks"),
            "io.ringstar.ranks", Set.of());

    /** This module's packages, each with the module's packages it depends on. */
    private static Map<String, Set<String>> dependencies;

    @BeforeAll
    static void readTheClasses() throws URISyntaxException {
        Path classes = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(Files.isDirectory(classes), "the module's classes are a directory: " + classes);
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("no jdeps in "
                + System.getProperty("java.home")));
        StringWriter out = new StringWriter();
        int status = jdeps.run(new PrintWriter(out), new PrintWriter(out), "-verbose:package", "-filter:none",
                classes.toString());
        assertEquals(0, status, out.toString());
        dependencies = parse(out.toString());
    }

    /** jdeps' lines {@code "   io.ringstar.cli   -> io.ringstar.bench   classes"}, between the module's packages. */
    private static Map<String, Set<String>> parse(String jdepsOutput) {
        Map<String, Set<String>> graph = new TreeMap<>();
        for (String line : jdepsOutput.lines().toList()) {
            String[] words = line.trim().split("\\s+");
            if (words.length < 3 || !words[1].equals("->")) {
                continue;
            }
            Optional<String> from = tree(words[0]);
            Optional<String> to = tree(words[2]);
            if (from.isPresent()) {
                graph.computeIfAbsent(words[0], name -> new TreeSet<>());
                if (to.isPresent() && !words[0].equals(words[2])) {
                    graph.get(words[0]).add(words[2]);
                }
            }
        }
        return graph;
    }

    /** The tree of {@link #ALLOWED} that {@code packageName} belongs to, if any. */
    private static Optional<String> tree(String packageName) {
        return ALLOWED.keySet().stream()
                .filter(root -> packageName.equals(root) || packageName.startsWith(root + ".")).findFirst();
    }

    @Test
    void theCommandLineDependsOnTheApplicationsAndNothingDependsBack() {
        // Without these the reading above found nothing, and the checks below would pass vacuously.
        assertTrue(dependencies.getOrDefault("io.ringstar.cli", Set.of()).contains("io.ringstar.bench"),
                dependencies.toString());
        assertTrue(dependencies.keySet().containsAll(List.of("io.ringstar.train", "io.ringstar.ranks",
                "io.ringstar.cli.launch", "io.ringstar.bench.jmh")), dependencies.keySet().toString());
        List<String> forbidden = new ArrayList<>();
        dependencies.forEach((from, targets) -> targets.forEach(to -> {
            String fromTree = tree(from).orElseThrow();
            String toTree = tree(to).orElseThrow();
            if (!fromTree.equals(toTree) && !ALLOWED.get(fromTree).contains(toTree)) {
                forbidden.add(from + " -> " + to);
            }
        }));
        assertEquals(List.of(), forbidden, "dependencies against the layering (cli -> bench, train -> ranks)");
    }

    @Test
    void noPackageOfTheModuleDependsOnOneThatDependsBackOnIt() {
        List<String> cycles = new ArrayList<>();
        for (String start : dependencies.keySet()) {
            pathBack(start, start, new ArrayList<>(List.of(start)), new TreeSet<>())
                    .ifPresent(path -> cycles.add(String.join(" -> ", path)));
        }
        assertEquals(List.of(), cycles, "package cycles");
    }

    /** A path from {@code at} back to {@code start}, depth first, each package visited once. */
    private static Optional<List<String>> pathBack(String start, String at, List<String> path, Set<String> seen) {
        for (String next : dependencies.getOrDefault(at, Set.of())) {
            if (next.equals(start)) {
                List<String> cycle = new ArrayList<>(path);
                cycle.add(start);
                return Optional.of(cycle);
            }
            if (seen.add(next)) {
                path.add(next);
                Optional<List<String>> found = pathBack(start, next, path, seen);
                if (found.isPresent()) {
                    return found;
                }
                path.remove(path.size() - 1);
            }
        }
        return Optional.empty();
    }

    @Test
    void theCheckFindsACycleWhenThereIsOne() {
        Map<String, Set<String>> real = dependencies;
        try {
            dependencies = Map.of("io.ringstar.cli", Set.of("io.ringstar.bench"),
                    "io.ringstar.bench", Set.of("io.ringstar.ranks"), "io.ringstar.ranks", Set.of("io.ringstar.cli"));
            assertEquals(Optional.of(List.of("io.ringstar.cli", "io.ringstar.bench", "io.ringstar.ranks",
                    "io.ringstar.cli")), pathBack("io.ringstar.cli", "io.ringstar.cli",
                    new ArrayList<>(List.of("io.ringstar.cli")), new TreeSet<>()));
        } finally {
            dependencies = real;
        }
        assertTrue(Stream.of("io.ringstar.bench.report", "io.ringstar.train.model").allMatch(
                name -> tree(name).isPresent()), "sub-packages belong to their tree");
    }
}
