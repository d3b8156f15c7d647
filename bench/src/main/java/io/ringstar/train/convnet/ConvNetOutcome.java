package io.ringstar.train.convnet;

import io.ringstar.train.TrainSummary;

/**
 * What one rank's run of the ConvNet came to.
 *
 * @param summary the rank's summary (the line its reporter prints)
 * @param curve held-out accuracy against training seconds, on every rank after an async run (the
 *     reporting worker sends it to the others) and on rank 0 after a sync one; {@code null} elsewhere
 * @param parameters the final parameters, flattened in DL4J's order (empty on an async server)
 */
public record ConvNetOutcome(TrainSummary summary, AccuracyCurve curve, float[] parameters) {
}
