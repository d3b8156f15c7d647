package io.ringstar;

/**
 * The update rule an {@link AsyncParameterServer} applies on its server ranks, one worker's
 * gradient at a time, to the server's own range of the parameters. Its state (velocities, moments)
 * is held per element, sharded with the parameters: each server keeps the state of its range only.
 * {@link SgdMomentum} is the one ringstar ships; implement this to add another.
 *
 * <p>Implementations are immutable settings: the state lives in the arrays the server passes in,
 * which it also checkpoints. {@link #apply} runs under the server's lock, so one call at a time per
 * server; it must not keep the arrays.
 */
public interface ServerOptimizer {

    /**
     * The rule's name and settings, for example {@code "sgd-momentum lr=0.1 momentum=0.9"}. A
     * checkpoint records it and a resume refuses another.
     */
    String describe();

    /** How many state values the rule keeps per parameter element (momentum: one velocity). */
    int stateArrays();

    /**
     * Applies one gradient to a server's range of the parameters, in place.
     *
     * @param parameters the server's range of the parameters, changed in place
     * @param gradient one worker's gradient for that range, read only
     * @param state {@link #stateArrays()} arrays of the range's length, zero at the start,
     *     changed in place
     */
    void apply(float[] parameters, float[] gradient, float[][] state);
}
