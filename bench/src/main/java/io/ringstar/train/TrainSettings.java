package io.ringstar.train;

import io.ringstar.train.data.CsvReader;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * What one training run does, the same on every rank: the model, the data, the optimiser's
 * numbers and, for the parameter server, sync or async. Immutable; every value is checked when the
 * record is built, so a bad value fails with {@link IllegalArgumentException} naming the flag.
 *
 * <p>The defaults without {@code --model}: a one-hidden-layer MLP on the built-in synthetic set (no
 * download), which learns visibly (held-out accuracy climbs from chance to about 90%) in well under
 * half a minute with 4 ranks on 2 cores. {@code --model convnet} has defaults of its own
 * ({@link #convnetDefaults()}), those of the README's first command.
 *
 * @param model the network trained
 * @param images MNIST-format IDX images file, or {@code null}
 * @param labels IDX labels file that goes with {@code images}; {@code null} to derive it from the
 *     images file's name ("images" becomes "labels", "idx3" becomes "idx1")
 * @param csv CSV file (see {@link CsvReader}), or {@code null}; at most one of images and csv
 * @param labelColumn name of the CSV's label column (needs a header line); {@code null} for the first column
 * @param steps optimiser steps; in async mode, steps per worker
 * @param batchSize global batch, split evenly across the ranks that compute gradients
 * @param learningRate plain SGD step size
 * @param hidden hidden units of the MLP (ignored by softmax regression)
 * @param mode sync (every step waits for every rank) or async (parameter server only)
 * @param maxStaleness async only: how many steps a worker may be ahead of the slowest worker
 * @param logEvery a progress line every this many steps
 * @param seed seeds the synthetic set, the held-out split, the batch order and the initial parameters
 * @param evalSize held-out samples, taken from the data before training
 * @param samples synthetic set only: total samples, held-out ones included
 * @param features synthetic set only: features per sample
 * @param classes synthetic set only: number of classes
 */
public record TrainSettings(Model model, Path images, Path labels, Path csv, String labelColumn, int steps,
        int batchSize, double learningRate, int hidden, Mode mode, int maxStaleness, int logEvery, long seed,
        int evalSize, int samples, int features, int classes) {

    /** The networks the trainer knows. */
    public enum Model {
        /** Softmax regression: logits = xW + b. */
        SOFTMAX("softmax"),
        /** One hidden tanh layer: logits = tanh(xW1 + b1)W2 + b2. */
        MLP("mlp"),
        /** The small ConvNet on 28x28 images, a Deeplearning4j network: see io.ringstar.train.convnet.ConvNet. */
        CONVNET("convnet");

        private final String label;

        Model(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** How the ranks meet: in step, or (parameter server only) each at its own pace. */
    public enum Mode {
        SYNC("sync"),
        ASYNC("async");

        private final String label;

        Mode(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    public TrainSettings {
        if (model == null) {
            throw new IllegalArgumentException("--model must be one of softmax, mlp, convnet");
        }
        if (mode == null) {
            throw new IllegalArgumentException("--mode must be one of sync, async");
        }
        if (images != null && csv != null) {
            throw new IllegalArgumentException("--data and --csv are alternatives; give one");
        }
        if (labels != null && images == null) {
            throw new IllegalArgumentException("--labels needs --data (the IDX images file)");
        }
        if (model == Model.CONVNET && csv != null) {
            throw new IllegalArgumentException("--csv does not apply to --model convnet, which trains on 28x28 images"
                    + " (--data for an IDX file)");
        }
        if (labelColumn != null && csv == null) {
            throw new IllegalArgumentException("--label-column needs --csv");
        }
        positive("steps", steps);
        positive("batch-size", batchSize);
        positive("hidden", hidden);
        positive("log-every", logEvery);
        positive("eval-size", evalSize);
        if (!(learningRate > 0) || Double.isInfinite(learningRate)) {
            throw new IllegalArgumentException("--lr must be a positive number, was " + learningRate);
        }
        if (maxStaleness < 0) {
            throw new IllegalArgumentException("--max-staleness must be 0 or more, was " + maxStaleness);
        }
        if (classes < 2) {
            throw new IllegalArgumentException("--classes must be at least 2, was " + classes);
        }
        positive("features", features);
        if (images == null && csv == null && samples <= evalSize) {
            throw new IllegalArgumentException("--samples (" + samples + ") must exceed --eval-size (" + evalSize
                    + ") so that some samples are left to train on");
        }
    }

    private static void positive(String flag, long value) {
        if (value < 1) {
            throw new IllegalArgumentException("--" + flag + " must be a positive integer, was " + value);
        }
    }

    /** The settings of {@code train} without flags: see the class comment and {@link #flagHelp}. */
    public static TrainSettings defaults() {
        return new TrainSettings(Model.MLP, null, null, null, null, 1500, 240, 0.05, 256, Mode.SYNC, 4, 100, 42L,
                2000, 20000, 256, 10);
    }

    /**
     * The settings of {@code train --model convnet} without other flags, those of the README's first
     * command: with 4 ranks on 2 cores its three runs take about a minute together.
     */
    public static TrainSettings convnetDefaults() {
        return new TrainSettings(Model.CONVNET, null, null, null, null, 200, 96, 0.1, 256, Mode.SYNC, 4, 25, 42L,
                1000, 20000, 256, 10);
    }

    /** The defaults of {@code model}: {@link #convnetDefaults()} for the ConvNet, else {@link #defaults()}. */
    public static TrainSettings defaults(Model model) {
        return model == Model.CONVNET ? convnetDefaults() : defaults();
    }

    /** Where the data comes from, for report headers. */
    public String describeData() {
        if (images != null) {
            return "IDX " + images + (labels == null ? "" : " + " + labels);
        }
        if (csv != null) {
            return "CSV " + csv + (labelColumn == null ? "" : " (label column " + labelColumn + ")");
        }
        return "synthetic (" + samples + " samples, " + features + " features, " + classes + " classes, seed "
                + seed + ")";
    }

    /**
     * One train flag's help line. {@code shownDefault} reads the default from {@link #defaults()}, so
     * the help cannot drift from what an absent flag really gives; flags whose default is "absent"
     * (null in the record) describe that in words instead.
     */
    private record Flag(String name, String value, String description, Function<TrainSettings, Object> shownDefault) {
    }

    private static final List<Flag> FLAGS = List.of(
        new Flag("model", "softmax|mlp|convnet", "network: softmax regression, one hidden tanh layer, or the"
            + " small ConvNet (Deeplearning4j, 28x28 images: Fashion-MNIST when installed)",
            d -> d.model().label()),
        new Flag("data", "PATH", "MNIST-format IDX images file (.gz allowed); labels file found next to it",
            d -> "none: synthetic"),
        new Flag("labels", "PATH", "IDX labels file, if not derivable from --data's name", d -> "derived from --data"),
        new Flag("csv", "PATH", "CSV file: label column first (or --label-column), then numeric features", d -> "none"),
        new Flag("label-column", "NAME", "CSV header name of the label column", d -> "first column"),
        new Flag("steps", "N", "optimiser steps (async: per worker)", TrainSettings::steps),
        new Flag("batch-size", "N", "global batch, split evenly across the ranks computing gradients",
            TrainSettings::batchSize),
        new Flag("lr", "X", "SGD learning rate", TrainSettings::learningRate),
        new Flag("hidden", "N", "hidden units of the mlp", TrainSettings::hidden),
        new Flag("mode", "sync|async", "async: parameter server applies each worker's gradient as it comes (ps only)",
            d -> d.mode().label()),
        new Flag("max-staleness", "K", "async: a worker may be at most K steps ahead of the slowest worker",
            TrainSettings::maxStaleness),
        new Flag("log-every", "N", "a progress line every N steps", TrainSettings::logEvery),
        new Flag("seed", "N", "seeds data, held-out split, batch order and initial parameters", TrainSettings::seed),
        new Flag("eval-size", "N", "held-out samples for accuracy", TrainSettings::evalSize),
        new Flag("samples", "N", "synthetic set: samples (held-out included)", TrainSettings::samples),
        new Flag("features", "N", "synthetic set: features per sample", TrainSettings::features),
        new Flag("classes", "N", "synthetic set: classes", TrainSettings::classes));

    /** The train-only flag names, without "--", in help order. */
    public static List<String> flagNames() {
        return FLAGS.stream().map(Flag::name).toList();
    }

    /** The help of one train-only flag: its name without "--", its value's label, and what it does. */
    public record FlagHelp(String name, String label, String description) {
    }

    /**
     * The help of every train-only flag, in help order, each with its default as {@link #defaults()} has it,
     * and {@link #convnetDefaults()}'s where it differs.
     */
    public static List<FlagHelp> flagHelp() {
        TrainSettings d = defaults();
        TrainSettings convnet = convnetDefaults();
        return FLAGS.stream().map(flag -> {
            Object shown = flag.shownDefault().apply(d);
            Object forConvnet = flag.shownDefault().apply(convnet);
            String convnetDefault = flag.name().equals("model") || shown.equals(forConvnet) ? ""
                    : " (convnet: " + forConvnet + ")";
            return new FlagHelp(flag.name(), flag.value(), flag.description() + convnetDefault + " (default: " + shown
                    + ")");
        }).toList();
    }

    /**
     * Settings from flags (names without "--", values as given). Flags that are not train flags
     * are ignored: the caller owns them. Missing flags keep their {@link #defaults(Model)}
     * (those of the model given).
     *
     * @throws IllegalArgumentException for a bad value; the message names the flag and what it accepts
     */
    public static TrainSettings fromFlags(Map<String, String> flags) {
        Model model = defaults().model();
        String modelText = flags.get("model");
        if (modelText != null) {
            model = switch (modelText.trim().toLowerCase(Locale.ROOT)) {
                case "softmax" -> Model.SOFTMAX;
                case "mlp" -> Model.MLP;
                case "convnet" -> Model.CONVNET;
                default -> throw new IllegalArgumentException("--model '" + modelText + "' is not one of softmax, mlp,"
                        + " convnet");
            };
        }
        TrainSettings d = defaults(model);
        Mode mode = d.mode();
        String modeText = flags.get("mode");
        if (modeText != null) {
            mode = switch (modeText.trim().toLowerCase(Locale.ROOT)) {
                case "sync" -> Mode.SYNC;
                case "async" -> Mode.ASYNC;
                default -> throw new IllegalArgumentException("--mode '" + modeText + "' is not one of sync, async");
            };
        }
        return new TrainSettings(model, path(flags, "data"), path(flags, "labels"), path(flags, "csv"),
                text(flags, "label-column"), integer(flags, "steps", d.steps()),
                integer(flags, "batch-size", d.batchSize()), number(flags, "lr", d.learningRate()),
                integer(flags, "hidden", d.hidden()), mode, integer(flags, "max-staleness", d.maxStaleness()),
                integer(flags, "log-every", d.logEvery()), longValue(flags, "seed", d.seed()),
                integer(flags, "eval-size", d.evalSize()), integer(flags, "samples", d.samples()),
                integer(flags, "features", d.features()), integer(flags, "classes", d.classes()));
    }

    private static String text(Map<String, String> flags, String name) {
        String value = flags.get(name);
        if (value != null && value.isBlank()) {
            throw new IllegalArgumentException("--" + name + " needs a value");
        }
        return value;
    }

    private static Path path(Map<String, String> flags, String name) {
        String value = text(flags, name);
        return value == null ? null : Path.of(value);
    }

    private static int integer(Map<String, String> flags, String name, int defaultValue) {
        String value = flags.get(name);
        if (value == null) {
            return defaultValue;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " '" + value + "' is not an integer");
        }
    }

    private static long longValue(Map<String, String> flags, String name, long defaultValue) {
        String value = flags.get(name);
        if (value == null) {
            return defaultValue;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " '" + value + "' is not an integer");
        }
    }

    private static double number(Map<String, String> flags, String name, double defaultValue) {
        String value = flags.get(name);
        if (value == null) {
            return defaultValue;
        }
        try {
            return Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " '" + value + "' is not a number");
        }
    }
}
