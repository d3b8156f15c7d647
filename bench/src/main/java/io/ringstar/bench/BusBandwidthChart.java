package io.ringstar.bench;

import io.ringstar.config.ByteSize;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The bench's chart: bus bandwidth against message size, one line per algorithm, operation,
 * transport and element type, drawn with XChart into a PNG without a display.
 */
final class BusBandwidthChart {
    static final int WIDTH = 1200;
    static final int HEIGHT = 720;
    private static final String HEADLESS = "java.awt.headless";

    private BusBandwidthChart() {
    }

    /**
     * Draws {@code rows} into {@code png}, replacing it. Sizes are on a log2 axis labelled in
     * bytes; bandwidth on a log axis, or a linear one if some bandwidth is 0 (a reduce at world
     * size 1 moves nothing over the bus).
     */
    static void write(Path png, String title, List<BenchRow> rows) throws IOException {
        // Drawing needs no display; a user's explicit -Djava.awt.headless=false still wins.
        if (System.getProperty(HEADLESS) == null) {
            System.setProperty(HEADLESS, "true");
        }
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("message size (bytes, log2 axis)").yAxisTitle("busbw (GB/s)").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE)
                .setMarkerSize(6);
        chart.getStyler().setYAxisLogarithmic(rows.stream().allMatch(row -> row.busbwGbps() > 0))
                .setxAxisTickLabelsFormattingFunction(BusBandwidthChart::sizeLabel);
        Map<String, List<BenchRow>> lines = new LinkedHashMap<>();
        for (BenchRow row : rows) {
            String name = row.algorithmLabel() + " " + row.operation().label() + ", " + row.transport() + ", "
                    + row.typeName();
            lines.computeIfAbsent(name, key -> new ArrayList<>()).add(row);
        }
        for (Map.Entry<String, List<BenchRow>> line : lines.entrySet()) {
            List<Double> sizes = new ArrayList<>();
            List<Double> bandwidths = new ArrayList<>();
            for (BenchRow row : line.getValue()) {
                // log2 of the size: all-gather and reduce-scatter sizes are multiples of the world size,
                // not always powers of two.
                sizes.add(Math.log(row.sizeBytes()) / Math.log(2));
                bandwidths.add(row.busbwGbps());
            }
            chart.addSeries(line.getKey(), sizes, bandwidths);
        }
        try (OutputStream out = Files.newOutputStream(png)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }

    /** The x axis holds log2 of the size: label whole powers of two in bytes, nothing in between. */
    private static String sizeLabel(Double log2Size) {
        long exponent = Math.round(log2Size);
        if (Math.abs(log2Size - exponent) > 1e-9 || exponent < 0 || exponent > 62) {
            return "";
        }
        return ByteSize.format(1L << exponent);
    }
}
