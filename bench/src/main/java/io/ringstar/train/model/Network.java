package io.ringstar.train.model;

import io.ringstar.internal.tensor.TensorMemory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * The models, written with ND4J matrix operations and a hand-written backward pass:
 * <ul>
 *   <li>softmax regression, parameters {W [d,k], b [1,k]}: logits = xW + b;</li>
 *   <li>MLP, parameters {W1 [d,h], b1 [1,h], W2 [h,k], b2 [1,k]}: logits = tanh(xW1 + b1)W2 + b2
 *       (tanh rather than ReLU because its derivative, 1 - tanh², needs no comparison op and
 *       is smooth, which keeps runs of different world sizes close).</li>
 * </ul>
 * Loss: mean cross-entropy of softmax(logits) over the batch, computed through log-sum-exp so it
 * never takes the log of an underflowed probability. Parameters are FLOAT.
 *
 * <p>Stateless apart from the shapes: the caller owns the parameter arrays; every method frees
 * the intermediates it makes (ND4J memory is off-heap, and freeing it only when the garbage
 * collector finds the Java objects lets it grow far beyond the heap; the tests turn that freeing
 * off altogether), so one instance can serve all ranks of a JVM at once.
 */
public final class Network {
    /** Softmax regression, or the MLP with one hidden layer. */
    private final boolean softmax;
    private final int features;
    private final int hidden;
    private final int classes;

    private Network(boolean softmax, int features, int hidden, int classes) {
        this.softmax = softmax;
        this.features = features;
        this.hidden = hidden;
        this.classes = classes;
    }

    /** Softmax regression of {@code features} inputs into {@code classes} classes. */
    public static Network softmax(int features, int classes) {
        return new Network(true, features, 0, classes);
    }

    /** The MLP: one hidden tanh layer of {@code hidden} units between {@code features} inputs and {@code classes}. */
    public static Network mlp(int features, int hidden, int classes) {
        return new Network(false, features, hidden, classes);
    }

    /** The loss of one batch and the gradients of its mean loss, one per parameter, in parameter order. */
    public record LossAndGradients(double loss, INDArray[] gradients) {
    }

    /**
     * Receives what {@link #lossAndGradients(INDArray[], INDArray, INDArray, Sink)} computes, as it
     * computes it: the loss once the forward pass is done, then each gradient in the order of
     * {@link #backwardOrder()}, the moment the backward pass has it.
     */
    public interface Sink {
        /** The batch's mean loss, before any gradient. */
        void loss(double loss);

        /**
         * The gradient of parameter {@code index}: a new array that the sink owns from now on (it
         * must close it); the backward pass does not read it again.
         */
        void gradient(int index, INDArray gradient);
    }

    /**
     * Initial parameters from {@code seed}: weights Gaussian with variance 1/fan-in, biases zero.
     * Drawn with {@link Random}, not ND4J's shared generator, so ranks running as threads do not
     * disturb each other's draws.
     */
    public INDArray[] init(long seed) {
        Random random = new Random(seed * 31 + 7);
        if (softmax) {
            return new INDArray[] {gaussian(features, classes, random), Nd4j.zeros(1, classes)};
        }
        return new INDArray[] {gaussian(features, hidden, random), Nd4j.zeros(1, hidden),
            gaussian(hidden, classes, random), Nd4j.zeros(1, classes)};
    }

    private static INDArray gaussian(int rows, int cols, Random random) {
        float[] values = new float[rows * cols];
        double scale = 1 / Math.sqrt(rows);
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) (random.nextGaussian() * scale);
        }
        return Nd4j.create(values, new long[] {rows, cols}, 'c');
    }

    /** Number of parameter values (all tensors together). */
    public long parameterCount() {
        return softmax ? (long) features * classes + classes
                : (long) features * hidden + hidden + (long) hidden * classes + classes;
    }

    /** Names of the parameter tensors, in order, as checkpoints call them. */
    public String[] parameterNames() {
        return softmax ? new String[] {"W", "b"} : new String[] {"W1", "b1", "W2", "b2"};
    }

    /** The parameters by their {@link #parameterNames}, in order, for a checkpoint; the arrays are not copied. */
    public Map<String, INDArray> named(INDArray[] params) {
        Map<String, INDArray> named = new LinkedHashMap<>();
        String[] names = parameterNames();
        for (int i = 0; i < names.length; i++) {
            named.put(names[i], params[i]);
        }
        return named;
    }

    /** The parameter indices in the order the backward pass produces their gradients: the last layer's first. */
    public int[] backwardOrder() {
        return softmax ? new int[] {0, 1} : new int[] {2, 3, 0, 1};
    }

    /** Shapes of the parameter tensors, in order. */
    public long[][] shapes() {
        if (softmax) {
            return new long[][] {{features, classes}, {1, classes}};
        }
        return new long[][] {{features, hidden}, {1, hidden}, {hidden, classes}, {1, classes}};
    }

    /**
     * Mean cross-entropy over the batch and its gradients.
     *
     * @param x features, [batch, d]
     * @param y one-hot labels, [batch, k]
     * @return new gradient arrays that the caller owns and closes
     */
    public LossAndGradients lossAndGradients(INDArray[] params, INDArray x, INDArray y) {
        INDArray[] gradients = new INDArray[params.length];
        double[] loss = new double[1];
        lossAndGradients(params, x, y, new Sink() {
            @Override
            public void loss(double value) {
                loss[0] = value;
            }

            @Override
            public void gradient(int index, INDArray gradient) {
                gradients[index] = gradient;
            }
        });
        return new LossAndGradients(loss[0], gradients);
    }

    /**
     * {@link #lossAndGradients(INDArray[], INDArray, INDArray)}, handing the loss and each gradient
     * to {@code sink} as soon as it is computed (the backward pass goes on after each), so that
     * their average across ranks can start while the earlier layers' gradients are computed.
     */
    public void lossAndGradients(INDArray[] params, INDArray x, INDArray y, Sink sink) {
        long batch = x.rows();
        try (Scratch s = new Scratch()) {
            INDArray hiddenOut = null;
            INDArray logits;
            if (softmax) {
                logits = s.keep(x.mmul(params[0])).addiRowVector(params[1]);
            } else {
                hiddenOut = Transforms.tanh(s.keep(x.mmul(params[0])).addiRowVector(params[1]), false);
                logits = s.keep(hiddenOut.mmul(params[2])).addiRowVector(params[3]);
            }
            INDArray max = s.keep(logits.max(true, 1));
            INDArray shifted = logits.subiColumnVector(max);
            INDArray exp = s.keep(Transforms.exp(shifted, true));
            INDArray sum = s.keep(exp.sum(true, 1));
            INDArray logSum = s.keep(Transforms.log(sum, true));
            INDArray logProb = shifted.subiColumnVector(logSum);
            sink.loss(-s.keep(s.keep(logProb.mul(y)).sum()).getDouble(0) / batch);
            // d(mean loss)/d logits = (softmax - onehot) / batch
            INDArray dLogits = exp.diviColumnVector(sum).subi(y).divi(batch);
            if (softmax) {
                sink.gradient(0, x.transpose().mmul(dLogits));
                sink.gradient(1, dLogits.sum(true, 0));
                return;
            }
            sink.gradient(2, hiddenOut.transpose().mmul(dLogits));
            sink.gradient(3, dLogits.sum(true, 0));
            INDArray dHidden = s.keep(dLogits.mmul(params[2].transpose()));
            // tanh' = 1 - tanh²
            INDArray slope = s.keep(hiddenOut.mul(hiddenOut)).rsubi(1.0);
            INDArray dPre = dHidden.muli(slope);
            sink.gradient(0, x.transpose().mmul(dPre));
            sink.gradient(1, dPre.sum(true, 0));
        }
    }

    /** Share of the samples in {@code x} whose largest logit is at their label. */
    public double accuracy(INDArray[] params, INDArray x, int[] labels) {
        try (Scratch s = new Scratch()) {
            INDArray logits;
            if (softmax) {
                logits = s.keep(x.mmul(params[0])).addiRowVector(params[1]);
            } else {
                INDArray h = Transforms.tanh(s.keep(x.mmul(params[0])).addiRowVector(params[1]), false);
                logits = s.keep(h.mmul(params[2])).addiRowVector(params[3]);
            }
            long[] predicted = s.keep(logits.argMax(1)).toLongVector();
            int correct = 0;
            for (int i = 0; i < labels.length; i++) {
                if (predicted[i] == labels[i]) {
                    correct++;
                }
            }
            return correct / (double) labels.length;
        }
    }

    /** Intermediates of one computation, freed together. */
    static final class Scratch implements AutoCloseable {
        private final List<INDArray> arrays = new ArrayList<>();

        <T extends INDArray> T keep(T array) {
            arrays.add(array);
            return array;
        }

        @Override
        public void close() {
            arrays.forEach(TensorMemory::close);
            arrays.clear();
        }
    }
}
