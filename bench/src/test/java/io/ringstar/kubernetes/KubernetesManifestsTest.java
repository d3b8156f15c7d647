package io.ringstar.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.cli.Main;
import io.ringstar.cli.PlacementFlags;
import io.ringstar.cli.TrainCommand;
import io.ringstar.cli.UsageException;
import io.ringstar.config.ConfigSources;
import io.ringstar.ranks.RankPlacement;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The Kubernetes manifests of {@code bench/kubernetes} place every rank where it belongs. Each test
 * reads a manifest, builds the environment each pod would get (what the manifest sets, resolved as
 * Kubernetes resolves it, plus what the Job controller or Kubeflow's operator adds), and hands it
 * with the container's arguments to the code {@code train} runs first: picocli's parse of the
 * command line, then {@link PlacementFlags#resolve}. So an edit of a manifest that misplaces a rank
 * fails here, without a cluster.
 */
class KubernetesManifestsTest {
    private static final Path MANIFESTS = Path.of("kubernetes");
    private static final String INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']";

    @Test
    void indexedJobGivesEveryPodItsOwnRankAndRankZerosStableName() throws Exception {
        List<Map<String, Object>> documents = Yaml.read(MANIFESTS.resolve("indexed-job.yaml"));
        Map<String, Object> service = ofKind(documents, "Service");
        Map<String, Object> job = ofKind(documents, "Job");
        String jobName = text(job, "metadata", "name");
        String serviceName = text(service, "metadata", "name");
        assertEquals("None", text(service, "spec", "clusterIP"), "the Service must be headless");
        assertEquals(jobName, text(service, "spec", "selector", "job-name"), "the Service must select the Job's pods");
        assertEquals("Indexed", text(job, "spec", "completionMode"));
        Map<String, Object> pod = map(job, "spec", "template", "spec");
        assertEquals(serviceName, text(pod, "subdomain"), "pods get DNS names only under their subdomain's Service");
        int pods = Integer.parseInt(text(job, "spec", "completions"));
        assertEquals(pods, Integer.parseInt(text(job, "spec", "parallelism")), "every rank must run at once");

        Map<String, Object> container = onlyContainer(pod);
        Set<Integer> ranks = new HashSet<>();
        for (int index = 0; index < pods; index++) {
            Map<String, String> env = podEnvironment(container, index);
            DistributedConfig config = place(container, env);
            ranks.add(config.rank());
            String described = placement(container, env).description();
            assertTrue(described.contains("rank " + index + " (RANK), world size " + pods + " (WORLD_SIZE)"),
                    described);
            assertEquals(index, config.rank(), "pod " + index);
            assertEquals(pods, config.worldSize(), "pod " + index);
            assertEquals(jobName + "-0." + serviceName, config.coordinatorHost(), "pod " + index);
            assertEquals(containerPort(container, "coordinator"), config.coordinatorPort(), "pod " + index);
            assertSecretFileMounted(pod, container, config);
        }
        assertEquals(Set.copyOf(IntStream.range(0, pods).boxed().toList()), ranks);
    }

    @Test
    void pytorchJobsOperatorVariablesGiveEveryPodItsOwnRank() throws Exception {
        Map<String, Object> job = ofKind(Yaml.read(MANIFESTS.resolve("pytorchjob.yaml")), "PyTorchJob");
        String jobName = text(job, "metadata", "name");
        // With a number of processes per pod other than 1 the operator multiplies WORLD_SIZE, not RANK.
        assertEquals("1", text(job, "spec", "nprocPerNode"));
        Map<String, Object> master = map(job, "spec", "pytorchReplicaSpecs", "Master");
        Map<String, Object> worker = map(job, "spec", "pytorchReplicaSpecs", "Worker");
        assertEquals("1", text(master, "replicas"));
        int workers = Integer.parseInt(text(worker, "replicas"));
        int pods = 1 + workers;
        Map<String, Object> masterContainer = onlyContainer(map(master, "template", "spec"));
        Map<String, Object> workerContainer = onlyContainer(map(worker, "template", "spec"));
        assertEquals("pytorch", text(masterContainer, "name"), "the operator reads the port of container 'pytorch'");
        assertEquals(masterContainer.get("args"), workerContainer.get("args"), "every rank must run the same job");
        int port = containerPort(masterContainer, "pytorchjob-port");

        Set<Integer> ranks = new HashSet<>();
        for (int pod = 0; pod < pods; pod++) {
            Map<String, Object> container = pod == 0 ? masterContainer : workerContainer;
            Map<String, String> env = podEnvironment(container, -1);
            for (String set : List.of("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")) {
                assertFalse(env.containsKey(set), set + " is the operator's to set, not the manifest's");
            }
            // What the operator (v1.7 to v1.9, pkg/controller.v1/pytorch/envvar.go and master.go) appends:
            // rank 0 for the master, worker i gets i + 1; the world size is the number of pods (times
            // nprocPerNode, 1 here); MASTER_ADDR is the master's headless Service, MASTER_PORT its port.
            env.putAll(Map.of("MASTER_ADDR", jobName + "-master-0", "MASTER_PORT", Integer.toString(port),
                    "PET_MASTER_ADDR", jobName + "-master-0", "PET_MASTER_PORT", Integer.toString(port),
                    "WORLD_SIZE", Integer.toString(pods), "RANK", Integer.toString(pod),
                    "PET_NODE_RANK", Integer.toString(pod), "PET_NNODES", Integer.toString(pods),
                    "PET_NPROC_PER_NODE", "1", "PYTHONUNBUFFERED", "1"));
            DistributedConfig config = place(container, env);
            ranks.add(config.rank());
            assertEquals(pods, config.worldSize(), "pod " + pod);
            assertEquals(jobName + "-master-0", config.coordinatorHost(), "pod " + pod);
            assertEquals(port, config.coordinatorPort(), "pod " + pod);
            assertSecretFileMounted(map(pod == 0 ? master : worker, "template", "spec"), container, config);
        }
        assertEquals(Set.copyOf(IntStream.range(0, pods).boxed().toList()), ranks);
    }

    @Test
    void aPodWithoutItsIndexOrWorldSizeStopsWithAClearError() throws Exception {
        Map<String, Object> job = ofKind(Yaml.read(MANIFESTS.resolve("indexed-job.yaml")), "Job");
        Map<String, Object> container = onlyContainer(map(job, "spec", "template", "spec"));
        // Outside Indexed mode the annotation is absent, and the downward API gives an empty string.
        UsageException noIndex = assertThrows(UsageException.class, () -> place(container,
                podEnvironment(container, -1)));
        assertEquals("RANK = : must be a whole number", noIndex.getMessage());

        Map<String, String> noWorldSize = podEnvironment(container, 1);
        noWorldSize.remove("WORLD_SIZE");
        UsageException noSize = assertThrows(UsageException.class, () -> place(container, noWorldSize));
        assertTrue(noSize.getMessage().contains("world size") && noSize.getMessage().contains("RANK"),
                noSize.getMessage());

        // No RANK at all is no error: the process then runs every rank as its own threads. This is
        // what the placement checks of the tests above catch.
        Map<String, String> noRank = podEnvironment(container, 1);
        noRank.remove("RANK");
        assertFalse(placement(container, noRank).oneRankPerProcess());
    }

    /** The configuration {@code train} resolves from the container's arguments and this environment. */
    private static DistributedConfig place(Map<String, Object> container, Map<String, String> env)
            throws UsageException {
        RankPlacement placement = placement(container, env);
        assertTrue(placement.oneRankPerProcess(), placement.description());
        return placement.config();
    }

    private static RankPlacement placement(Map<String, Object> container, Map<String, String> env)
            throws UsageException {
        assertFalse(container.containsKey("command"), "the image's entry point must run the jar");
        List<String> args = new ArrayList<>();
        for (Object arg : (List<?>) container.get("args")) {
            args.add((String) arg);
        }
        assertEquals("train", args.get(0));
        CommandLine program = Main.commandLine(List.of(new TrainCommand(env)));
        // Throws for a flag that train does not have, as the jar would refuse it.
        program.parseArgs(args.toArray(String[]::new));
        CommandSpec train = program.getSubcommands().get("train").getCommandSpec();
        return PlacementFlags.resolve(PlacementFlags.given(train), PlacementFlags.options(train), env, 4,
                Duration.ofSeconds(60));
    }

    /**
     * The container's environment as Kubernetes fills it in for the pod of completion index
     * {@code index} (-1: a pod that has none): literal values, the index annotation through the
     * downward API, the CPU limit, and the JOB_COMPLETION_INDEX the Job controller adds.
     */
    private static Map<String, String> podEnvironment(Map<String, Object> container, int index) {
        String annotation = index < 0 ? "" : Integer.toString(index);
        Map<String, String> env = new LinkedHashMap<>();
        if (index >= 0) {
            env.put("JOB_COMPLETION_INDEX", annotation);
        }
        for (Object item : (List<?>) container.getOrDefault("env", List.of())) {
            @SuppressWarnings("unchecked")
            Map<String, Object> entry = (Map<String, Object>) item;
            String name = text(entry, "name");
            if (entry.containsKey("value")) {
                String value = text(entry, "value");
                assertFalse(value.contains("$("), name + ": variable references are not modelled here");
                env.put(name, value);
            } else if (map(entry, "valueFrom").containsKey("fieldRef")) {
                assertEquals(INDEX_FIELD, text(entry, "valueFrom", "fieldRef", "fieldPath"), name);
                env.put(name, annotation);
            } else {
                String resource = text(entry, "valueFrom", "resourceFieldRef", "resource");
                assertEquals("limits.cpu", resource, name);
                env.put(name, text(container, "resources", "limits", "cpu"));
            }
        }
        return env;
    }

    /** The secret file ringstar reads lies in a Secret volume mounted in the container. */
    private static void assertSecretFileMounted(Map<String, Object> pod, Map<String, Object> container,
            DistributedConfig config) {
        String file = config.option(ConfigSources.SECRET_FILE_OPTION).orElseThrow(() -> new AssertionError(
                "the job must not run unauthenticated: no secret file"));
        boolean mounted = false;
        for (Object mount : (List<?>) container.get("volumeMounts")) {
            String volume = text(mount, "name");
            for (Object declared : (List<?>) pod.get("volumes")) {
                mounted |= text(declared, "name").equals(volume) && ((Map<?, ?>) declared).containsKey("secret")
                        && file.startsWith(text(mount, "mountPath") + "/");
            }
        }
        assertTrue(mounted, file + " is not in a mounted Secret");
    }

    private static int containerPort(Map<String, Object> container, String name) {
        for (Object port : (List<?>) container.get("ports")) {
            if (text(port, "name").equals(name)) {
                return Integer.parseInt(text(port, "containerPort"));
            }
        }
        throw new AssertionError("no port named " + name);
    }

    private static Map<String, Object> onlyContainer(Map<String, Object> pod) {
        List<?> containers = (List<?>) pod.get("containers");
        assertEquals(1, containers.size(), "one container per pod");
        return map(containers.get(0));
    }

    private static Map<String, Object> ofKind(List<Map<String, Object>> documents, String kind) {
        return documents.stream().filter(d -> kind.equals(d.get("kind"))).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object node, String... path) {
        Object at = node;
        for (String key : path) {
            at = at instanceof Map<?, ?> m ? m.get(key) : null;
        }
        if (!(at instanceof Map<?, ?>)) {
            throw new AssertionError("no mapping at " + String.join(".", path));
        }
        return (Map<String, Object>) at;
    }

    private static String text(Object node, String... path) {
        Map<String, Object> parent = map(node, Arrays.copyOf(path, path.length - 1));
        Object value = parent.get(path[path.length - 1]);
        if (!(value instanceof String)) {
            throw new AssertionError("no text at " + String.join(".", path));
        }
        return (String) value;
    }

    /**
     * The block style of YAML the manifests are written in: mappings, sequences ("- "), plain and
     * quoted scalars, comments and "---" between documents. Anything else fails the test.
     */
    private static final class Yaml {
        private static final Pattern KEY = Pattern.compile("[\\w.\\-/]+:( .*)?");
        private final List<Integer> indents = new ArrayList<>();
        private final List<String> texts = new ArrayList<>();
        private int at;

        static List<Map<String, Object>> read(Path file) throws IOException {
            List<Map<String, Object>> documents = new ArrayList<>();
            Yaml document = new Yaml();
            for (String line : Files.readAllLines(file)) {
                if (line.equals("---")) {
                    documents.add(document.whole());
                    document = new Yaml();
                    continue;
                }
                String text = withoutComment(line).stripTrailing();
                if (!text.isBlank()) {
                    document.indents.add(text.length() - text.stripLeading().length());
                    document.texts.add(text.strip());
                }
            }
            documents.add(document.whole());
            return documents;
        }

        /** The line up to a '#' that starts a comment: at the line's start or after a space, outside quotes. */
        private static String withoutComment(String line) {
            char quote = 0;
            for (int i = 0; i < line.length(); i++) {
                char c = line.charAt(i);
                boolean tokenStart = i == 0 || Character.isWhitespace(line.charAt(i - 1));
                if (quote != 0) {
                    quote = c == quote ? 0 : quote;
                } else if ((c == '"' || c == '\'') && tokenStart) {
                    quote = c;
                } else if (c == '#' && tokenStart) {
                    return line.substring(0, i);
                }
            }
            return line;
        }

        private Map<String, Object> whole() {
            Map<String, Object> document = mapping(0);
            if (at < texts.size()) {
                throw new AssertionError("not read: " + texts.get(at));
            }
            return document;
        }

        private boolean more(int indent) {
            return at < texts.size() && indents.get(at) == indent;
        }

        private Map<String, Object> mapping(int indent) {
            Map<String, Object> map = new LinkedHashMap<>();
            while (more(indent) && !texts.get(at).startsWith("- ")) {
                String text = texts.get(at++);
                if (!KEY.matcher(text).matches()) {
                    throw new AssertionError("not 'key: value': " + text);
                }
                String key = text.substring(0, text.indexOf(':'));
                String value = text.substring(key.length() + 1).strip();
                boolean nested = at < texts.size() && (indents.get(at) > indent
                        || more(indent) && texts.get(at).startsWith("- "));
                map.put(key, !value.isEmpty() ? scalar(value) : nested ? block() : "");
            }
            if (at < texts.size() && indents.get(at) > indent) {
                throw new AssertionError("unexpected indentation: " + texts.get(at));
            }
            return map;
        }

        private Object block() {
            int indent = indents.get(at);
            if (!texts.get(at).startsWith("- ")) {
                return mapping(indent);
            }
            List<Object> items = new ArrayList<>();
            while (more(indent) && texts.get(at).startsWith("- ")) {
                String item = texts.get(at).substring(2).strip();
                if (KEY.matcher(item).matches()) {
                    // "- key: value" opens a mapping whose keys line up with this first one.
                    indents.set(at, indent + 2);
                    texts.set(at, item);
                    items.add(mapping(indent + 2));
                } else {
                    items.add(scalar(item));
                    at++;
                }
            }
            return items;
        }

        private static String scalar(String value) {
            boolean quoted = value.length() >= 2 && (value.startsWith("\"") && value.endsWith("\"")
                    || value.startsWith("'") && value.endsWith("'"));
            return quoted ? value.substring(1, value.length() - 1) : value;
        }
    }
}
