package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class NumbersTest {
    @Test
    void significantWritesAsCsPrintfG() {
        assertEquals("1.5", Numbers.significant(1.5, 3));
        assertEquals("2.86e-05", Numbers.significant(0.0000285845, 3));
        assertEquals("1.727e+06", Numbers.significant(1726987.25117, 4));
        assertEquals("4339", Numbers.significant(4339.49, 4));
        assertEquals("100", Numbers.significant(100, 3));
        assertEquals("1e+03", Numbers.significant(999.7, 3));
        assertEquals("0.0001", Numbers.significant(0.0001, 2));
        assertEquals("-0.25", Numbers.significant(-0.25, 3));
        assertEquals("0", Numbers.significant(0, 3));
        assertEquals("nan", Numbers.significant(Double.NaN, 3));
    }

    @Test
    void roundingIsOfTheExactBinaryValueHalfToEven() {
        // 0.125 is exact in binary: a true tie, to even. 2.675 is 2.67499999... in binary: down.
        assertEquals("0.12", Numbers.fixed(0.125, 2));
        assertEquals("0.38", Numbers.fixed(0.375, 2));
        assertEquals("2.67", Numbers.fixed(2.675, 2));
        assertEquals("2", Numbers.fixed(2.5, 0));
        assertEquals("1.0", Numbers.fixed(1, 1));
        assertEquals("0.12", Numbers.significant(0.125, 2));
    }

    @Test
    void plainIsAwksNumberOutput() {
        assertEquals("16", Numbers.plain(16));
        assertEquals("1.5", Numbers.plain(1.5));
        assertEquals("0.333333", Numbers.plain(1.0 / 3));
    }

    @Test
    void bytesLabelUsesBinaryUnitsFromOneKibAndOneMib() {
        assertEquals("4 B", Numbers.bytesLabel(4));
        assertEquals("1023 B", Numbers.bytesLabel(1023));
        assertEquals("1 KiB", Numbers.bytesLabel(1024));
        assertEquals("1.5 KiB", Numbers.bytesLabel(1536));
        // 1023.999 KiB with 6 significant digits, as awk writes it.
        assertEquals("1024 KiB", Numbers.bytesLabel(1024 * 1024 - 1));
        assertEquals("16 MiB", Numbers.bytesLabel(16L << 20));
        assertEquals("1.5 MiB", Numbers.bytesLabel(3L << 19));
    }

    @Test
    void ratesAreReadInTcsNotation() {
        assertEquals(1e9, Numbers.bitsPerSecond("1gbit"));
        assertEquals(100e6, Numbers.bitsPerSecond("100mbit"));
        assertEquals(1.5e9, Numbers.bitsPerSecond("1.5Gbit"));
        assertEquals(80e6, Numbers.bitsPerSecond("10mbps"));
        assertEquals(0, Numbers.bitsPerSecond("none"));
        assertEquals(0, Numbers.bitsPerSecond("12furlongs"));
    }
}
