package io.ringstar.internal.tensor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.IdentityHashMap;
import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * One contiguous off-heap buffer that holds the tensors of one element type for one call, so that
 * a collective sends one message per chunk rather than one per tensor (fusion). The memory is
 * ND4J's; the algorithms see it as a little-endian {@link ByteBuffer}. A tensor whose elements lie
 * in 'c' order without gaps is copied as bytes; any other order, view or stride goes through an
 * ND4J copy, which handles them all but costs tens of microseconds a call (too much for small
 * messages, whose whole collective should take about that).
 *
 * <p>Reused from call to call: it grows to the largest call seen and never shrinks until
 * {@link #close()}. Not thread-safe.
 */
public final class TensorBucket implements AutoCloseable {
    private final ElementType type;
    private INDArray storage;
    private ByteBuffer bytes;
    private long capacity;
    /**
     * The tensors that straddle windows and are not in 'c' order, and their 'c'-order copies: at
     * most the two at a window's ends, since a copy is freed once its tensor's last window is done
     * ({@link #forgetFlattenedBefore}).
     */
    private final Map<INDArray, INDArray> flattenedCopies = new IdentityHashMap<>();

    public TensorBucket(ElementType type) {
        this.type = type;
    }

    public ElementType type() {
        return type;
    }

    /** Bytes held off-heap by this bucket now. */
    public long capacityBytes() {
        return capacity * type.bytes();
    }

    /**
     * Copies elements {@code [from, to)} of the group (its tensors' elements in 'c' order, one
     * after the other) into the bucket from its start, for groups too large for one bucket. A
     * tensor that straddles windows and is not laid out in 'c' order is flattened once and the
     * copy kept until {@link #forgetFlattenedBefore} passes its end (or {@link #forgetFlattened()}).
     *
     * @return the bucket's bytes for the window, position 0, limit {@code (to - from)} elements
     */
    public ByteBuffer packWindow(INDArray[] tensors, TensorLayout.Group group, long from, long to) {
        if (group.type() != type) {
            throw new IllegalArgumentException("a " + type + " bucket cannot hold " + group.type() + " tensors");
        }
        ensureCapacity(to - from);
        for (int member = 0; member < group.size(); member++) {
            INDArray tensor = tensors[group.tensorIndex(member)];
            long start = group.elementOffset(member);
            long length = tensor.length();
            long first = Math.max(from, start);
            long end = Math.min(to, start + length);
            if (first >= end) {
                continue;
            }
            if (first == start && end == start + length) {
                packWhole(tensor, start - from);
                continue;
            }
            INDArray linear = TensorMemory.isLinearInCOrder(tensor) ? tensor : flattened(tensor);
            ByteBuffer source = linearBytes(linear, first - start, end - first);
            bytes.duplicate().position(Math.toIntExact((first - from) * type.bytes())).put(source);
        }
        ByteBuffer view = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        view.position(0).limit(Math.toIntExact((to - from) * type.bytes()));
        return view;
    }

    /**
     * Copies the bucket's window of elements {@code [from, to)} of the group into the result
     * arrays at the matching positions. A result may have any shape, order or stride (a view, when
     * a collective works in place): one laid out in 'c' order takes the bytes as they are; another
     * goes through an ND4J assignment; one that straddles windows and is not in 'c' order is
     * written into the flattened copy {@link #packWindow} made of it (the same array, in place) and
     * assigned once its last window is in.
     */
    public void unpackWindow(INDArray[] results, TensorLayout.Group group, long from, long to) {
        for (int member = 0; member < group.size(); member++) {
            INDArray result = results[group.tensorIndex(member)];
            long start = group.elementOffset(member);
            long length = result.length();
            long first = Math.max(from, start);
            long end = Math.min(to, start + length);
            if (first >= end) {
                continue;
            }
            int bucketFrom = Math.toIntExact((first - from) * type.bytes());
            ByteBuffer window = bytes.duplicate().position(bucketFrom)
                    .limit(Math.toIntExact(bucketFrom + (end - first) * type.bytes()));
            if (TensorMemory.isLinearInCOrder(result)) {
                linearBytes(result, first - start, end - first).put(window);
            } else if (first == start && end == start + length) {
                if (result.rank() == 0) {
                    result.assign(region(start - from, 1).reshape());
                } else {
                    result.assign(region(start - from, length).reshape('c', result.shape()));
                }
            } else {
                INDArray linear = flattened(result);
                linearBytes(linear, first - start, end - first).put(window);
                if (end == start + length) {
                    result.assign(linear);
                }
            }
        }
    }

    /**
     * The bucket's first {@code elements} elements as bytes (position 0, limit their length), for
     * an algorithm that needs a buffer of its own; their values are whatever was left there.
     */
    public ByteBuffer scratch(long elements) {
        ensureCapacity(elements);
        ByteBuffer view = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        view.position(0).limit(Math.toIntExact(elements * type.bytes()));
        return view;
    }

    /**
     * A new 'c'-order array of {@code type} for a result of {@code shape}, detached from any
     * workspace since it belongs to the caller, its elements not set (but for an empty or scalar
     * shape); filled by {@link #unpackWindow} or by an algorithm working in it.
     */
    public static INDArray newResult(ElementType type, long[] shape) {
        if (shape.length == 0) {
            return Nd4j.scalar(type.dataType(), 0.0);
        }
        return TensorMemory.newDetached(type, shape);
    }

    /** Frees every flattened copy that {@link #packWindow} may have kept. */
    public void forgetFlattened() {
        flattenedCopies.values().forEach(INDArray::close);
        flattenedCopies.clear();
    }

    /**
     * Frees the flattened copies of the group's tensors that end at or before element {@code to}:
     * call it once a window ending there has been packed and, if it is to be, unpacked.
     */
    public void forgetFlattenedBefore(INDArray[] tensors, TensorLayout.Group group, long to) {
        if (flattenedCopies.isEmpty()) {
            return;
        }
        for (int member = 0; member < group.size(); member++) {
            INDArray tensor = tensors[group.tensorIndex(member)];
            if (group.elementOffset(member) + tensor.length() <= to) {
                INDArray copy = flattenedCopies.remove(tensor);
                if (copy != null) {
                    copy.close();
                }
            }
        }
    }

    private INDArray flattened(INDArray tensor) {
        return flattenedCopies.computeIfAbsent(tensor, original -> original.dup('c'));
    }

    private void packWhole(INDArray tensor, long offset) {
        if (tensor.length() == 0) {
            return;
        }
        if (TensorMemory.isLinearInCOrder(tensor)) {
            bytes.duplicate().position(Math.toIntExact(offset * type.bytes()))
                    .put(linearBytes(tensor, 0, tensor.length()));
        } else if (tensor.rank() == 0) {
            region(offset, 1).assign(tensor.reshape(1));
        } else {
            region(offset, tensor.length()).reshape('c', tensor.shape()).assign(tensor);
        }
    }

    /**
     * Elements {@code [first, first + count)} of a tensor for which {@link
     * TensorMemory#isLinearInCOrder} holds, as a view of its memory.
     */
    private ByteBuffer linearBytes(INDArray tensor, long first, long count) {
        return TensorMemory.bytes(tensor, first * type.bytes(), Math.toIntExact(count * type.bytes()));
    }

    private INDArray region(long offset, long length) {
        return storage.get(NDArrayIndex.interval(offset, offset + length));
    }

    private void ensureCapacity(long elements) {
        if (storage != null && capacity >= elements) {
            return;
        }
        close();
        // At least one element: ND4J cannot allocate an empty buffer that has a ByteBuffer view.
        capacity = Math.max(1, elements);
        storage = Nd4j.createUninitializedDetached(type.dataType(), capacity);
        bytes = storage.data().asNio().order(ByteOrder.LITTLE_ENDIAN);
        if (!bytes.isDirect() || bytes.capacity() < capacity * type.bytes()) {
            throw new IllegalStateException("ND4J buffer of " + capacity + " " + type
                    + " elements has no direct view of " + capacity * type.bytes() + " bytes");
        }
    }

    /** Frees the off-heap memory; the bucket may be used again and then allocates anew. */
    @Override
    public void close() {
        forgetFlattened();
        if (storage != null) {
            storage.close();
            storage = null;
            bytes = null;
            capacity = 0;
        }
    }
}
