package io.ringstar.train.data;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a comma-separated file of labelled samples: one sample per line, the class label (an
 * integer from 0) in the first column and numeric features in the others. A first line whose
 * label field is not an integer is taken as a header; with a header, {@code labelColumn} may name
 * the label column instead of the first. Blank lines and lines starting with {@code #} are
 * skipped; fields are trimmed; no quoting. The class count is the largest label plus one.
 *
 * <p>Errors name the file, the line and the field: a field that is not a number, a label that is
 * not a non-negative integer, a line with another field count than the first.
 */
public final class CsvReader {
    private CsvReader() {
    }

    public static Dataset read(Path path, String labelColumn) {
        List<String> lines;
        try (BufferedReader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            lines = reader.lines().toList();
        } catch (IOException | UncheckedIOException e) {
            throw new UncheckedIOException("cannot read CSV file " + path + ": " + e.getMessage(),
                    e instanceof IOException io ? io : ((UncheckedIOException) e).getCause());
        }
        int labelIndex = 0;
        int columns = -1;
        List<float[]> rows = new ArrayList<>();
        List<Integer> labels = new ArrayList<>();
        boolean first = true;
        for (int lineNo = 1; lineNo <= lines.size(); lineNo++) {
            String line = lines.get(lineNo - 1).trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] fields = line.split(",", -1);
            if (first) {
                first = false;
                // A header names its columns; a first data row with a bad label (-1, 1.5, empty) is data, and
                // gets the label error below instead of vanishing as a "header".
                boolean header = labelColumn != null || !isNumberOrEmpty(fields[0].trim());
                if (header) {
                    columns = fields.length;
                    if (labelColumn != null) {
                        labelIndex = -1;
                        for (int i = 0; i < fields.length; i++) {
                            if (fields[i].trim().equals(labelColumn)) {
                                labelIndex = i;
                            }
                        }
                        if (labelIndex < 0) {
                            throw new IllegalArgumentException(path + " line " + lineNo + ": the header has no column '"
                                    + labelColumn + "' (--label-column)");
                        }
                    }
                    continue;
                }
            }
            if (columns < 0) {
                columns = fields.length;
            }
            if (fields.length != columns) {
                throw new IllegalArgumentException(path + " line " + lineNo + ": " + fields.length + " fields, but the "
                        + "first line has " + columns);
            }
            if (columns < 2) {
                throw new IllegalArgumentException(path + " line " + lineNo
                        + ": needs a label and at least one feature");
            }
            float[] row = new float[columns - 1];
            int label = -1;
            for (int i = 0, f = 0; i < columns; i++) {
                String field = fields[i].trim();
                if (i == labelIndex) {
                    if (!isInteger(field) || Long.parseLong(field) > 100_000) {
                        throw new IllegalArgumentException(path + " line " + lineNo + " field " + (i + 1) + ": label '"
                                + field + "' is not a class number (an integer from 0)");
                    }
                    label = Integer.parseInt(field);
                } else {
                    try {
                        row[f++] = Float.parseFloat(field);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(path + " line " + lineNo + " field " + (i + 1) + ": '"
                                + field + "' is not a number");
                    }
                    if (!Float.isFinite(row[f - 1])) {
                        throw new IllegalArgumentException(path + " line " + lineNo + " field " + (i + 1) + ": '"
                                + field + "' is not finite");
                    }
                }
            }
            rows.add(row);
            labels.add(label);
        }
        if (rows.isEmpty()) {
            throw new IllegalArgumentException(path + ": no samples");
        }
        int features = columns - 1;
        float[] x = new float[rows.size() * features];
        int[] y = new int[rows.size()];
        int maxLabel = 0;
        for (int i = 0; i < rows.size(); i++) {
            System.arraycopy(rows.get(i), 0, x, i * features, features);
            y[i] = labels.get(i);
            maxLabel = Math.max(maxLabel, y[i]);
        }
        return new Dataset(x, y, features, Math.max(2, maxLabel + 1));
    }

    private static boolean isNumberOrEmpty(String text) {
        if (text.isEmpty()) {
            return true;
        }
        try {
            Double.parseDouble(text);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static boolean isInteger(String text) {
        if (text.isEmpty() || text.length() > 9) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
