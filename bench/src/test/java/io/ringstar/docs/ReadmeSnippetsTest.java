package io.ringstar.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;

/**
 * Keeps the Java in the READMEs true: every {@code ```java} block of {@code README.md} and of each module's
 * {@code README.md} (one folder down) is compiled, with {@link JavaCompiler}, against this build's classes
 * and the test class path (every module and its dependencies, DL4J included), and so is every constant a
 * README names inline. One dynamic test per snippet, named by file and line, fails with javac's messages
 * placed on the README's own lines.
 *
 * <p>The convention (see {@link Snippets}):
 * <ul>
 *   <li>A block whose first code line starts with {@code package}, or with a type declaration, is a
 *       compilation unit and is compiled as it is.</li>
 *   <li>Any other block is a fragment: its leading {@code import} lines are kept as imports; method and type
 *       declarations at the top level (a line such as {@code static float[] averageOnRank(int rank) {} and
 *       its body) become members of a class; the remaining lines become the body of a method of that class
 *       that may throw any exception. The class sees the {@link #IMPORTS usual imports} and extends
 *       {@link #GIVENS}, whose fields and methods are the variables the README's prose supposes (the
 *       {@code rank}, the {@code config}, a model's {@code weights} ...); a snippet that declares one of
 *       them shadows it.</li>
 *   <li>{@code ...} standing for elided code ({@code { ... }}, not a varargs {@code Type...}) is dropped.</li>
 *   <li>An inline {@code `Type.CONSTANT_NAME`} (a constant users are told to write) is compiled as the
 *       expression {@code Object value = Type.CONSTANT_NAME;} with the same imports, and an inline fully
 *       qualified {@code `io.ringstar.pkg.Type`} as {@code Class<?> type = io.ringstar.pkg.Type.class;}.</li>
 *   <li>A block that is deliberately not Java-complete is skipped when the line just before its fence is
 *       {@value #SKIP_MARKER}; the test lists it as skipped.</li>
 * </ul>
 * The imports leave {@code io.ringstar.internal.*} out on purpose: what a README shows users must compile
 * from their own code.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ReadmeSnippetsTest {

    /** The marker line, just before a {@code ```java} fence, of a block that is not compiled. */
    static final String SKIP_MARKER = "<!-- snippet: not compiled -->";

    /** What a user's file that calls ringstar imports. */
    static final List<String> IMPORTS = List.of(
            "io.ringstar.*",
            "io.ringstar.checkpoint.*",
            "io.ringstar.config.*",
            "io.ringstar.dl4j.*",
            "io.ringstar.spark.*",
            "java.nio.file.*",
            "java.time.*",
            "java.util.*",
            "java.util.concurrent.*",
            "org.deeplearning4j.nn.conf.MultiLayerConfiguration",
            "org.deeplearning4j.nn.graph.ComputationGraph",
            "org.apache.spark.api.java.JavaRDD",
            "org.apache.spark.api.java.JavaSparkContext",
            "org.deeplearning4j.nn.multilayer.MultiLayerNetwork",
            "org.nd4j.linalg.api.buffer.DataType",
            "org.nd4j.linalg.api.ndarray.INDArray",
            "org.nd4j.linalg.dataset.DataSet",
            "org.nd4j.linalg.dataset.api.iterator.DataSetIterator",
            "org.nd4j.linalg.factory.Nd4j");

    /** The class every fragment extends: the variables and methods the READMEs' prose supposes. */
    static final String GIVENS = "Givens";
    private static final String GIVENS_BODY = String.join("\n",
            "    /** This process's rank. */",
            "    protected int rank;",
            "    /** A loop index (the i-th gradient). */",
            "    protected int i;",
            "    protected long steps;",
            "    protected int epochs;",
            "    protected DistributedConfig config;",
            "    protected Transport transport;",
            "    protected Communicator comm;",
            "    /** A model's tensors: parameters, gradients, flags and metrics. */",
            "    protected INDArray weights, bias, gradW, gradB, lossIsNaN, accuracy, flatGrads, metrics, layer3Grad;",
            "    protected INDArray[] gradsInBackwardOrder, initialParameters;",
            "    /** The shapes of the parameter tensors. */",
            "    protected long[][] shapes;",
            "    protected MultiLayerConfiguration conf;",
            "    protected DataSetIterator globalBatches;",
            "    /** A Spark application's context, an RDD of minibatches and a network, for the Spark section. */",
            "    protected JavaSparkContext spark;",
            "    protected JavaRDD<DataSet> minibatches;",
            "    protected MultiLayerNetwork net;",
            "    /** A worker's gradients at the given parameters. */",
            "    protected abstract INDArray[] gradients(INDArray[] parameters);");

    @TestFactory
    Stream<DynamicTest> everyJavaSnippetOfTheReadmesCompiles() throws IOException {
        Path root = repositoryRoot();
        List<Snippets.Snippet> snippets = new ArrayList<>();
        for (Path readme : readmes(root)) {
            String name = root.relativize(readme).toString().replace(File.separatorChar, '/');
            snippets.addAll(Snippets.extract(name, Files.readAllLines(readme, StandardCharsets.UTF_8)));
        }
        assertTrue(snippets.stream().anyMatch(s -> s.kind() == Snippets.Kind.BLOCK),
                "no ```java block found in " + readmes(root));
        Map<String, String> errors = compile(snippets);
        return snippets.stream().map(snippet -> DynamicTest.dynamicTest(snippet.name(), () -> {
            if (snippet.skipped()) {
                Assumptions.abort(snippet.name() + " is marked " + SKIP_MARKER);
            }
            String error = errors.get(snippet.className());
            assertTrue(error == null, () -> snippet.name() + " does not compile:\n" + error
                    + "\n--- as compiled ---\n" + snippet.source());
        }));
    }

    /** The check itself can fail: a wrong block and a wrong inline constant are reported on their own lines. */
    @Test
    void aSnippetThatDoesNotCompileIsReportedOnItsLine() throws IOException {
        List<String> markdown = List.of(
                "Set `DistributedConfig.CHECKSUM_OPTION`, not `TransportAggregator.COMPRESSION_OPTION`.",
                "```java",
                "import java.util.function.IntUnaryOperator;",
                "static int twice(int x) {",
                "    return 2 * x;",
                "}",
                "IntUnaryOperator f = Test_md_L3::twice;",
                "int y = f.applyAsInt(twice(rank)); // rank: one of the givens",
                "```",
                "```java",
                "DistributedConfig c = DistributedConfig.builder().worldSize(2).build();",
                "String notAConfig = c;",
                "```",
                SKIP_MARKER,
                "```java",
                "this is not Java",
                "```");
        List<Snippets.Snippet> snippets = Snippets.extract("Test.md", markdown);
        assertEquals(List.of("Test.md:1 (inline)", "Test.md:1 (inline)", "Test.md:3", "Test.md:11", "Test.md:16"),
                snippets.stream().map(Snippets.Snippet::name).collect(Collectors.toList()));
        Map<String, String> errors = compile(snippets);
        assertEquals(List.of(snippets.get(1).className(), snippets.get(3).className()),
                List.copyOf(errors.keySet()), () -> "errors: " + errors);
        assertTrue(errors.get(snippets.get(1).className()).startsWith("Test.md:1: cannot find symbol"),
                errors::toString);
        assertTrue(errors.get(snippets.get(3).className()).startsWith("Test.md:12: incompatible types"),
                errors::toString);
        assertTrue(snippets.get(4).skipped());
    }

    private static Path repositoryRoot() {
        Path bench = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().normalize();
        Path root = bench.getParent();
        assertNotNull(root);
        assertTrue(Files.isRegularFile(root.resolve("README.md")), "no README.md in " + root);
        return root;
    }

    /** README.md at the top, then each module's README.md, in name order. */
    private static List<Path> readmes(Path root) throws IOException {
        List<Path> readmes = new ArrayList<>();
        readmes.add(root.resolve("README.md"));
        try (Stream<Path> children = Files.list(root)) {
            children.filter(Files::isDirectory).map(d -> d.resolve("README.md")).filter(Files::isRegularFile)
                    .sorted().forEach(readmes::add);
        }
        return readmes;
    }

    /**
     * Compiles every snippet in one javac run (with {@code should-stop.ifError=FLOW}, so one snippet's errors
     * do not hide another's), and gives each failing snippet's errors by its class name.
     */
    static Map<String, String> compile(List<Snippets.Snippet> snippets) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "no system Java compiler: the tests must run on a JDK");
        List<JavaFileObject> units = new ArrayList<>();
        units.add(new Source(GIVENS, givensSource()));
        for (Snippets.Snippet snippet : snippets) {
            if (!snippet.skipped()) {
                units.add(new Source(snippet.className(), snippet.source()));
            }
        }
        Path classes = Files.createDirectories(Path.of(System.getProperty("basedir", "."), "target",
                "readme-snippets"));
        List<String> options = List.of("-classpath", testClassPath(), "-d", classes.toString(),
                "-proc:none", "-encoding", "UTF-8", "-XDshould-stop.ifError=FLOW");
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        StringWriter output = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT,
                StandardCharsets.UTF_8)) {
            javac.getTask(output, files, diagnostics, options, null, units).call();
        }
        Map<String, Snippets.Snippet> byClass = snippets.stream()
                .collect(Collectors.toMap(Snippets.Snippet::className, s -> s));
        Map<String, String> errors = new LinkedHashMap<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            String className = d.getSource() == null ? GIVENS : ((Source) d.getSource()).className;
            Snippets.Snippet snippet = byClass.get(className);
            String where = snippet == null ? className + ".java:" + d.getLineNumber()
                    : snippet.file() + ":" + snippet.readmeLine((int) d.getLineNumber());
            errors.merge(snippet == null ? GIVENS : className, where + ": " + d.getMessage(Locale.ROOT),
                    (a, b) -> a + "\n" + b);
        }
        assertFalse(errors.containsKey(GIVENS), () -> "the test's own scaffold does not compile: "
                + errors.get(GIVENS) + output);
        return errors;
    }

    private static String givensSource() {
        StringBuilder source = new StringBuilder();
        for (String i : IMPORTS) {
            source.append("import ").append(i).append(";\n");
        }
        return source.append("public abstract class ").append(GIVENS).append(" {\n").append(GIVENS_BODY)
                .append("\n}\n").toString();
    }

    /**
     * The test's class path as Surefire gives it: {@code surefire.test.class.path} when set (the forked JVM's
     * own class path may be a single manifest-only jar), else {@code java.class.path}.
     */
    private static String testClassPath() {
        String path = System.getProperty("surefire.test.class.path");
        return path == null || path.isBlank() ? System.getProperty("java.class.path") : path;
    }

    /** A compilation unit held in memory. */
    private static final class Source extends SimpleJavaFileObject {
        final String className;
        private final String text;

        Source(String className, String text) {
            super(URI.create("string:///" + className + Kind.SOURCE.extension), Kind.SOURCE);
            this.className = className;
            this.text = text;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }
    }
}
