package io.ringstar.internal.tensor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The shapes and types of the tensors of one call, grouped by element type: each group is packed
 * into one contiguous bucket and moved as one collective. The fingerprint summarises the whole
 * layout so that ranks can compare layouts in the message header.
 */
public final class TensorLayout {
    /**
     * Largest bucket of one element type, in bytes: a {@link java.nio.ByteBuffer} is int-indexed.
     * A larger group is not refused: the aggregators move it in windows of at most this size.
     */
    public static final long MAX_GROUP_BYTES = Integer.MAX_VALUE - 64;

    private final long[][] shapes;
    private final ElementType[] types;
    private final List<Group> groups;
    private final long fingerprint;

    private TensorLayout(long[][] shapes, ElementType[] types, List<Group> groups, long fingerprint) {
        this.shapes = shapes;
        this.types = types;
        this.groups = groups;
        this.fingerprint = fingerprint;
    }

    /** The types whose values can be averaged: what the gradient aggregators take. */
    public static final Set<ElementType> FLOATING_POINT = Collections.unmodifiableSet(
            EnumSet.of(ElementType.FLOAT, ElementType.DOUBLE, ElementType.HALF, ElementType.BFLOAT16));
    /** Every type ringstar moves. */
    public static final Set<ElementType> ALL_TYPES = Collections.unmodifiableSet(EnumSet.allOf(ElementType.class));

    /** {@link #of(String, int, INDArray[], Set)} for tensors of any type ringstar moves. */
    public static TensorLayout of(String operation, int rank, INDArray[] tensors) {
        return of(operation, rank, tensors, ALL_TYPES);
    }

    /**
     * Reads the layout of {@code tensors}, whose types must be among {@code allowed}.
     *
     * @param operation and {@code rank} only name the call in error messages
     * @throws IllegalArgumentException for a null array or tensor, or a data type not in
     *     {@code allowed}; nothing has been sent then
     */
    public static TensorLayout of(String operation, int rank, INDArray[] tensors, Set<ElementType> allowed) {
        if (tensors == null) {
            throw new IllegalArgumentException(operation + " on rank " + rank + ": the tensor array is null");
        }
        int count = tensors.length;
        long[][] shapes = new long[count][];
        ElementType[] types = new ElementType[count];
        long[] groupCounts = new long[ElementType.values().length];
        List<List<Integer>> members = new ArrayList<>();
        for (int t = 0; t < ElementType.values().length; t++) {
            members.add(new ArrayList<>());
        }
        long[] offsets = new long[count];
        for (int i = 0; i < count; i++) {
            INDArray tensor = tensors[i];
            if (tensor == null) {
                throw new IllegalArgumentException(operation + " on rank " + rank + ": tensor " + i + " is null");
            }
            ElementType type = ElementType.of(tensor.dataType());
            if (type == null || !allowed.contains(type)) {
                throw new IllegalArgumentException(operation + " on rank " + rank + ": tensor " + i + " has data type "
                        + tensor.dataType() + "; supported: " + allowed.stream().map(String::valueOf)
                                .collect(Collectors.joining(", ")));
            }
            types[i] = type;
            shapes[i] = tensor.shape().clone();
            offsets[i] = groupCounts[type.ordinal()];
            groupCounts[type.ordinal()] += tensor.length();
            members.get(type.ordinal()).add(i);
        }
        List<Group> groups = new ArrayList<>();
        for (ElementType type : ElementType.values()) {
            long elements = groupCounts[type.ordinal()];
            List<Integer> indices = members.get(type.ordinal());
            if (!indices.isEmpty()) {
                int[] tensorIndices = indices.stream().mapToInt(Integer::intValue).toArray();
                long[] elementOffsets = Arrays.stream(tensorIndices).mapToLong(i -> offsets[i]).toArray();
                groups.add(new Group(type, tensorIndices, elementOffsets, elements));
            }
        }
        return new TensorLayout(shapes, types, Collections.unmodifiableList(groups), fingerprint(shapes, types));
    }

    /**
     * The layout of tensors of one element type with the given shapes, without the tensors: for
     * callers that know their shapes from the start (the async parameter server's parameters).
     */
    public static TensorLayout ofShapes(ElementType type, long[][] shapes) {
        int count = shapes.length;
        long[][] copies = new long[count][];
        ElementType[] types = new ElementType[count];
        int[] tensorIndices = new int[count];
        long[] elementOffsets = new long[count];
        long total = 0;
        for (int i = 0; i < count; i++) {
            copies[i] = shapes[i].clone();
            types[i] = type;
            tensorIndices[i] = i;
            elementOffsets[i] = total;
            long elements = 1;
            for (long size : copies[i]) {
                elements *= size;
            }
            total += elements;
        }
        List<Group> groups = count == 0 ? List.of() : List.of(new Group(type, tensorIndices, elementOffsets, total));
        return new TensorLayout(copies, types, groups, fingerprint(copies, types));
    }

    /**
     * Whether {@code tensors} have exactly this layout: the same count, and each the same element
     * type and shape. Allocates nothing, so a caller that passes the same shapes every step (the
     * usual case) can keep one layout.
     */
    public boolean matches(INDArray[] tensors) {
        if (tensors == null || tensors.length != shapes.length) {
            return false;
        }
        for (int i = 0; i < tensors.length; i++) {
            INDArray tensor = tensors[i];
            if (tensor == null || ElementType.of(tensor.dataType()) != types[i] || tensor.rank() != shapes[i].length) {
                return false;
            }
            for (int dimension = 0; dimension < shapes[i].length; dimension++) {
                if (tensor.size(dimension) != shapes[i][dimension]) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Number of tensors in the call. */
    public int tensorCount() {
        return shapes.length;
    }

    /** Shape of tensor {@code index} (a copy). */
    public long[] shape(int index) {
        return shapes[index].clone();
    }

    /** Element type of tensor {@code index}. */
    public ElementType type(int index) {
        return types[index];
    }

    /** The groups by element type, in the order of {@link ElementType}; empty when the call has no tensors. */
    public List<Group> groups() {
        return groups;
    }

    /** A 64-bit digest of tensor count, shapes and types, equal on ranks that pass equal layouts. */
    public long fingerprint() {
        return fingerprint;
    }

    /** Describes the layout for error messages, for example {@code "[FLOAT[2, 3], DOUBLE[]]"}. */
    public String describe() {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < shapes.length; i++) {
            text.append(i == 0 ? "" : ", ").append(types[i]).append(Arrays.toString(shapes[i]));
        }
        return text.append(']').toString();
    }

    private static long fingerprint(long[][] shapes, ElementType[] types) {
        // FNV-1a over 64-bit words: stable across JVMs, unlike Arrays.hashCode of objects.
        long hash = 0xcbf29ce484222325L;
        hash = mix(hash, shapes.length);
        for (int i = 0; i < shapes.length; i++) {
            hash = mix(hash, types[i].code());
            hash = mix(hash, shapes[i].length);
            for (long dimension : shapes[i]) {
                hash = mix(hash, dimension);
            }
        }
        return hash;
    }

    private static long mix(long hash, long word) {
        for (int b = 0; b < 8; b++) {
            hash ^= (word >>> (8 * b)) & 0xFF;
            hash *= 0x100000001b3L;
        }
        return hash;
    }

    /** The tensors of one element type, in call order, with their element offsets in the bucket. */
    public static final class Group {
        private final ElementType type;
        private final int[] tensorIndices;
        private final long[] elementOffsets;
        private final long elementCount;

        Group(ElementType type, int[] tensorIndices, long[] elementOffsets, long elementCount) {
            this.type = type;
            this.tensorIndices = tensorIndices;
            this.elementOffsets = elementOffsets;
            this.elementCount = elementCount;
        }

        /** A group with no tensors, used to keep ranks in step when a call passes none. */
        public static Group empty(ElementType type) {
            return new Group(type, new int[0], new long[0], 0);
        }

        public ElementType type() {
            return type;
        }

        /** Number of tensors in the group. */
        public int size() {
            return tensorIndices.length;
        }

        /** Index in the call of the group's {@code member}-th tensor. */
        public int tensorIndex(int member) {
            return tensorIndices[member];
        }

        /** Offset in elements of the group's {@code member}-th tensor within the bucket. */
        public long elementOffset(int member) {
            return elementOffsets[member];
        }

        /** Total elements of the group's tensors. */
        public long elementCount() {
            return elementCount;
        }
    }
}
