package io.ringstar.train.convnet;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * {@code train --plot FILE.png}: held-out accuracy against training seconds, one line per run, drawn
 * with XChart into a PNG without a display, as the bench's {@code --plot} draws its chart.
 */
public final class AccuracyChart {
    static final int WIDTH = 1000;
    static final int HEIGHT = 600;
    private static final String HEADLESS = "java.awt.headless";

    private AccuracyChart() {
    }

    /**
     * Draws {@code curves} into {@code png}, replacing it. Accuracy is in percent on a linear axis
     * from 0 to 100, so chance (10% for ten classes) sits near the bottom.
     *
     * @throws IOException if the file cannot be written
     */
    public static void write(Path png, String title, List<AccuracyCurve> curves) throws IOException {
        // Drawing needs no display; a user's explicit -Djava.awt.headless=false still wins.
        if (System.getProperty(HEADLESS) == null) {
            System.setProperty(HEADLESS, "true");
        }
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("training time (s, evaluation excluded)").yAxisTitle("held-out accuracy (%)").build();
        chart.getStyler().setYAxisMin(0.0).setYAxisMax(100.0);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideSE).setMarkerSize(5);
        for (AccuracyCurve curve : curves) {
            double[] percent = Arrays.stream(curve.accuracy()).map(value -> 100 * value).toArray();
            chart.addSeries(curve.name(), curve.seconds(), percent);
        }
        Path parent = png.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (OutputStream out = Files.newOutputStream(png)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
