package io.ringstar.config;

import java.util.Locale;

/**
 * Sizes in bytes as people type them, parsed here for every option, flag and command of ringstar:
 * {@code 4}, {@code 64K}, {@code 16M}, {@code 1G} (binary
 * multiples: K = 1024). A trailing {@code B} or {@code iB} is accepted too ({@code 64KiB}).
 */
public final class ByteSize {
    private ByteSize() {
    }

    /**
     * Parses a size.
     *
     * @throws IllegalArgumentException naming the text, if it is not a non-negative size
     */
    public static long parse(String text) {
        String upper = text.trim().toUpperCase(Locale.ROOT);
        if (upper.endsWith("IB")) {
            upper = upper.substring(0, upper.length() - 2);
        } else if (upper.endsWith("B")) {
            upper = upper.substring(0, upper.length() - 1);
        }
        int shift = 0;
        if (!upper.isEmpty()) {
            switch (upper.charAt(upper.length() - 1)) {
                case 'K' -> shift = 10;
                case 'M' -> shift = 20;
                case 'G' -> shift = 30;
                default -> shift = 0;
            }
        }
        String digits = (shift == 0 ? upper : upper.substring(0, upper.length() - 1)).trim();
        long number;
        try {
            number = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a size in bytes (examples: 4, 64K, 16M, 1G)");
        }
        if (number < 0 || number > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("'" + text + "' is not a size in bytes between 0 and 2^63-1");
        }
        return number << shift;
    }

    /** The shortest exact form: {@code 64M} rather than {@code 67108864}, {@code 1000} as is. */
    public static String format(long bytes) {
        String[] units = {"G", "M", "K"};
        int[] shifts = {30, 20, 10};
        for (int i = 0; i < units.length; i++) {
            long unit = 1L << shifts[i];
            if (bytes >= unit && bytes % unit == 0) {
                return (bytes >> shifts[i]) + units[i];
            }
        }
        return Long.toString(bytes);
    }
}
