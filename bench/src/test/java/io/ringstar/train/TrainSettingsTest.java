package io.ringstar.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class TrainSettingsTest {
    @Test
    void noFlagsGiveTheDefaults() {
        assertEquals(TrainSettings.defaults(), TrainSettings.fromFlags(Map.of()));
        TrainSettings defaults = TrainSettings.defaults();
        assertEquals(TrainSettings.Model.MLP, defaults.model());
        assertEquals(TrainSettings.Mode.SYNC, defaults.mode());
        assertNull(defaults.images());
        // The default global batch splits evenly for sync and async on the usual world sizes.
        for (int computing = 1; computing <= 6; computing++) {
            assertEquals(0, defaults.batchSize() % computing, "batch for " + computing + " ranks");
        }
    }

    @Test
    void flagsAreParsedAndOthersLeftAlone() {
        TrainSettings settings = TrainSettings.fromFlags(Map.of("model", "softmax", "mode", "async", "steps", "7",
                "batch-size", "30", "lr", "0.5", "max-staleness", "0", "seed", "-3",
                "data", "/d/train-images-idx3-ubyte",
                "world-size", "4", "algorithm", "ps"));
        assertEquals(TrainSettings.Model.SOFTMAX, settings.model());
        assertEquals(TrainSettings.Mode.ASYNC, settings.mode());
        assertEquals(7, settings.steps());
        assertEquals(30, settings.batchSize());
        assertEquals(0.5, settings.learningRate());
        assertEquals(0, settings.maxStaleness());
        assertEquals(-3, settings.seed());
        assertEquals(Path.of("/d/train-images-idx3-ubyte"), settings.images());
    }

    @Test
    void badValuesNameTheFlagAndWhatItAccepts() {
        assertMessage(Map.of("model", "cnn"), "--model 'cnn' is not one of softmax, mlp");
        assertMessage(Map.of("mode", "semi"), "--mode 'semi' is not one of sync, async");
        assertMessage(Map.of("steps", "many"), "--steps 'many' is not an integer");
        assertMessage(Map.of("steps", "0"), "--steps must be a positive integer");
        assertMessage(Map.of("lr", "-1"), "--lr must be a positive number");
        assertMessage(Map.of("lr", "fast"), "--lr 'fast' is not a number");
        assertMessage(Map.of("max-staleness", "-2"), "--max-staleness must be 0 or more");
        assertMessage(Map.of("data", "a", "csv", "b"), "--data and --csv are alternatives");
        assertMessage(Map.of("labels", "l"), "--labels needs --data");
        assertMessage(Map.of("samples", "100", "eval-size", "100"), "--samples (100) must exceed --eval-size (100)");
        assertMessage(Map.of("classes", "1"), "--classes must be at least 2");
        assertMessage(Map.of("csv", " "), "--csv needs a value");
    }

    private static void assertMessage(Map<String, String> flags, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TrainSettings.fromFlags(flags));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void helpShowsForEveryFlagTheDefaultThatLeavingItOutGives() {
        List<TrainSettings.FlagHelp> help = TrainSettings.flagHelp();
        List<String> names = TrainSettings.flagNames();
        assertEquals(names.size(), help.size(), help.toString());
        // These flags are absent by default (null in the record); their help describes that in words.
        Set<String> absentByDefault = Set.of("data", "labels", "csv", "label-column");
        TrainSettings defaults = TrainSettings.fromFlags(Map.of());
        assertNull(defaults.images());
        assertNull(defaults.labels());
        assertNull(defaults.csv());
        assertNull(defaults.labelColumn());
        Pattern defaultShown = Pattern.compile(".* \\(default: (.+)\\)");
        int convnetShown = 0;
        Pattern convnetShownPattern = Pattern.compile(".* \\(convnet: ([^)]+)\\) \\(default: .*");
        for (int i = 0; i < help.size(); i++) {
            TrainSettings.FlagHelp flag = help.get(i);
            Matcher matcher = defaultShown.matcher(flag.description());
            assertTrue(matcher.matches(), flag.toString());
            String name = flag.name();
            String shown = matcher.group(1);
            assertEquals(names.get(i), name, flag.toString());
            if (!absentByDefault.contains(name)) {
                // Giving the shown value explicitly must change nothing: it is the real default.
                assertEquals(defaults, TrainSettings.fromFlags(Map.of(name, shown)), flag.toString());
            }
            Matcher convnet = convnetShownPattern.matcher(flag.description());
            if (convnet.matches()) {
                // The ConvNet's own default, shown where it differs, is what --model convnet without the flag gives.
                assertEquals(TrainSettings.convnetDefaults(), TrainSettings.fromFlags(Map.of("model", "convnet", name,
                        convnet.group(1))), flag.toString());
                convnetShown++;
            }
        }
        assertEquals(5, convnetShown, "steps, batch-size, lr, log-every and eval-size differ for convnet");
        assertTrue(names.containsAll(List.of("model", "data", "csv", "steps", "batch-size", "lr", "hidden", "mode",
                "max-staleness", "log-every", "seed", "eval-size")));
    }
}
