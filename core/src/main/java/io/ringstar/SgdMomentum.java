package io.ringstar;

/**
 * SGD with momentum, as the servers of an {@link AsyncParameterServer} apply it to each gradient
 * {@code g} as it arrives: {@code v = momentum * v + g; p -= learningRate * v}, in FLOAT, element
 * by element, with {@code v} starting at zero. With momentum 0 it is plain SGD,
 * {@code p -= learningRate * g}.
 *
 * @param learningRate the step size; finite and positive
 * @param momentum the velocity's decay, in {@code [0, 1)}
 */
public record SgdMomentum(float learningRate, float momentum) implements ServerOptimizer {

    /** @throws IllegalArgumentException for a learning rate or momentum out of range */
    public SgdMomentum {
        if (!(learningRate > 0) || Float.isInfinite(learningRate)) {
            throw new IllegalArgumentException("learning rate must be finite and positive, was " + learningRate);
        }
        if (!(momentum >= 0 && momentum < 1)) {
            throw new IllegalArgumentException("momentum must be in [0, 1), was " + momentum);
        }
    }

    /** Plain SGD: {@code p -= learningRate * g}. */
    public static SgdMomentum plain(float learningRate) {
        return new SgdMomentum(learningRate, 0);
    }

    @Override
    public String describe() {
        return "sgd-momentum lr=" + learningRate + " momentum=" + momentum;
    }

    @Override
    public int stateArrays() {
        return 1;
    }

    @Override
    public void apply(float[] parameters, float[] gradient, float[][] state) {
        float[] velocity = state[0];
        for (int i = 0; i < parameters.length; i++) {
            velocity[i] = momentum * velocity[i] + gradient[i];
            parameters[i] -= learningRate * velocity[i];
        }
    }
}
