package io.ringstar.bench.report;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Locale;

/**
 * Numbers written as C's printf writes them (and so as the awk programs the reports replaced did):
 * {@code %.Ng} with trailing zeros dropped and {@code %.Nf}, both rounding the double's exact value
 * half to even; and the byte sizes and link rates of the scripts' flags.
 */
public final class Numbers {
    private static final long KIB = 1024;
    private static final long MIB = 1024 * 1024;

    private Numbers() {
    }

    /** {@code value} with {@code digits} significant digits, as C's {@code %.<digits>g}: 1.5, 0.000123, 1.23e+06. */
    public static String significant(double value, int digits) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return Double.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf";
        }
        if (value == 0) {
            return "0";
        }
        BigDecimal rounded = new BigDecimal(value).round(new MathContext(digits, RoundingMode.HALF_EVEN));
        int exponent = rounded.precision() - rounded.scale() - 1;
        if (exponent < -4 || exponent >= digits) {
            String mantissa = rounded.scaleByPowerOfTen(-exponent).stripTrailingZeros().toPlainString();
            return String.format(Locale.ROOT, "%se%s%02d", mantissa, exponent < 0 ? "-" : "+", Math.abs(exponent));
        }
        return rounded.stripTrailingZeros().toPlainString();
    }

    /** {@code value} with {@code decimals} digits after the point, as C's {@code %.<decimals>f}. */
    public static String fixed(double value, int decimals) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return significant(value, 1);
        }
        return new BigDecimal(value).setScale(decimals, RoundingMode.HALF_EVEN).toPlainString();
    }

    /** {@code value} as awk prints a number: a whole number as one, anything else with 6 significant digits. */
    public static String plain(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return Long.toString((long) value);
        }
        return significant(value, 6);
    }

    /** A size for people: 64 MiB, 1.5 KiB, 8 B (binary units, from 1 KiB and 1 MiB on). */
    public static String bytesLabel(long bytes) {
        if (bytes >= MIB) {
            return plain((double) bytes / MIB) + " MiB";
        }
        if (bytes >= KIB) {
            return plain((double) bytes / KIB) + " KiB";
        }
        return bytes + " B";
    }

    /**
     * A link rate in tc's notation ({@code 1gbit}, {@code 100mbit}, {@code 10mbps}: bits, or bytes for
     * {@code bps}) in bits per second; 0 for {@code none} or anything else it does not know.
     */
    public static double bitsPerSecond(String rate) {
        String text = rate.toLowerCase(Locale.ROOT);
        int end = 0;
        while (end < text.length() && (Character.isDigit(text.charAt(end)) || text.charAt(end) == '.')) {
            end++;
        }
        double number;
        try {
            number = end == 0 ? 0 : Double.parseDouble(text.substring(0, end));
        } catch (NumberFormatException e) {
            return 0;
        }
        double unit = switch (text.substring(end)) {
            case "bit" -> 1;
            case "kbit" -> 1e3;
            case "mbit" -> 1e6;
            case "gbit" -> 1e9;
            case "tbit" -> 1e12;
            case "kbps" -> 8e3;
            case "mbps" -> 8e6;
            case "gbps" -> 8e9;
            default -> 0;
        };
        return number * unit;
    }
}
