package io.ringstar.train;

import io.ringstar.train.data.CsvReader;
import io.ringstar.train.data.Dataset;
import io.ringstar.train.data.IdxReader;
import io.ringstar.train.data.SyntheticData;

/**
 * The data of one run, split into {training, held-out}, read on first use and then kept. Rank
 * threads of one JVM and the trainers of every algorithm of one command share the read-only result.
 */
final class SplitData {
    private final TrainSettings settings;
    private Dataset[] split;

    SplitData(TrainSettings settings) {
        this.settings = settings;
    }

    synchronized Dataset[] get() {
        if (split == null) {
            split = load(settings);
        }
        return split;
    }

    private static Dataset[] load(TrainSettings settings) {
        Dataset all;
        boolean standardise = false;
        if (settings.images() != null) {
            all = IdxReader.read(settings.images(), settings.labels());
        } else if (settings.csv() != null) {
            all = CsvReader.read(settings.csv(), settings.labelColumn());
            // CSV columns come in any scale; SGD with one learning rate needs them comparable.
            standardise = true;
        } else {
            all = SyntheticData.generate(settings.samples(), settings.features(), settings.classes(),
                    settings.seed());
        }
        Dataset[] split = all.split(settings.evalSize(), settings.seed());
        if (standardise) {
            split = new Dataset[] {split[0].standardisedLike(split[0]), split[1].standardisedLike(split[0])};
        }
        return split;
    }
}
