package io.ringstar.internal.engine;

import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorLayout;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Reads the top-k residuals that a communicator or aggregator keeps, so that the conformance
 * suites can check that what was sent plus what was kept is what went in. The public types carry
 * no accessor for this: their engine is found in their private fields, by type (a
 * {@link CollectiveEngine}, or the {@link OutOfPlaceCollectives} holding one), which only test code
 * does. Test code only.
 */
public final class KeptResiduals {
    private KeptResiduals() {
    }

    /** The residual kept for calls of tensors shaped like {@code tensors}, per tensor in 'c' order; zeros if none. */
    public static double[][] of(Object owner, INDArray... tensors) {
        CollectiveEngine engine = engineOf(owner);
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

    /** The engine behind {@code owner}: a field of type {@link CollectiveEngine} or {@link OutOfPlaceCollectives}. */
    static CollectiveEngine engineOf(Object owner) {
        for (Field field : owner.getClass().getDeclaredFields()) {
            if (field.getType() != CollectiveEngine.class && field.getType() != OutOfPlaceCollectives.class) {
                continue;
            }
            field.setAccessible(true);
            try {
                Object value = field.get(owner);
                return value instanceof OutOfPlaceCollectives ? ((OutOfPlaceCollectives) value).engine()
                        : (CollectiveEngine) value;
            } catch (IllegalAccessException e) {
                throw new AssertionError("cannot read " + field, e);
            }
        }
        throw new AssertionError(owner.getClass().getName() + " holds no collective engine");
    }
}
