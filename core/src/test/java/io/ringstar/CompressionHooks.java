package io.ringstar;

import io.ringstar.internal.engine.CollectiveEngine;
import io.ringstar.internal.engine.TransportAggregator;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorLayout;
import java.nio.ByteBuffer;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * A testing hook into the top-k residuals that an aggregator or communicator keeps (package-private
 * state), so that the conformance suites can check that what was sent plus what was kept is what
 * went in. Test code only.
 */
public final class CompressionHooks {
    private CompressionHooks() {
    }

    /** The residual kept for calls of tensors shaped like {@code tensors}, per tensor in 'c' order; zeros if none. */
    public static double[][] residuals(Object owner, INDArray... tensors) {
        CollectiveEngine engine = owner instanceof Communicator ? ((Communicator) owner).engine()
                : ((TransportAggregator) owner).engine();
        TensorLayout layout = TensorLayout.of("residuals", engine.rank(), tensors, TensorLayout.ALL_TYPES);
        double[][] residuals = new double[tensors.length][];
        for (int t = 0; t < tensors.length; t++) {
            residuals[t] = new double[(int) tensors[t].length()];
        }
        for (TensorLayout.Group group : layout.groups()) {
            ByteBuffer kept = engine.compression().feedback().existing(layout.fingerprint(), group.type());
            if (kept == null) {
                continue;
            }
            for (int member = 0; member < group.size(); member++) {
                double[] into = residuals[group.tensorIndex(member)];
                long first = group.elementOffset(member);
                for (int i = 0; i < into.length; i++) {
                    int at = (int) ((first + i) * group.type().bytes());
                    into[i] = group.type() == ElementType.DOUBLE ? kept.getDouble(at) : kept.getFloat(at);
                }
            }
        }
        return residuals;
    }

    /** Bytes the owner holds between calls, residuals included. */
    public static long bufferBytes(Object owner) {
        return owner instanceof Communicator ? ((Communicator) owner).engine().bufferBytes()
                : ((TransportAggregator) owner).bufferBytes();
    }
}
