package io.ringstar.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A CSV file read whole: a header line and rows of as many fields (RFC 4180 quoting, LF or CRLF line
 * ends, blank lines skipped). Errors name the file and the line.
 *
 * @param file the file read, for messages
 * @param header the column names, in order
 * @param rows the rows after the header
 */
public record CsvFile(Path file, List<String> header, List<Row> rows) {

    /**
     * One row of a CSV file.
     *
     * @param file the file it came from
     * @param line its line number (1 is the header)
     * @param cells its fields, as many as the header has
     * @param columns column name to index, shared by every row of the file
     */
    public record Row(Path file, int line, List<String> cells, Map<String, Integer> columns) {
        /** The cell of {@code column}, which the header must have. */
        public String get(String column) {
            Integer index = columns.get(column);
            if (index == null) {
                throw new IllegalArgumentException(file + ": no column '" + column + "' in the header");
            }
            return cells.get(index);
        }

        /** The cell of {@code column} as a number; refused with the file, line and column when it is not one. */
        public double number(String column) {
            return parse(column, Double::parseDouble, "a number");
        }

        /** The cell of {@code column} as a whole number; refused with the file, line and column otherwise. */
        public long whole(String column) {
            return parse(column, Long::parseLong, "a whole number");
        }

        private <T> T parse(String column, Function<String, T> parser, String what) {
            String text = get(column);
            try {
                return parser.apply(text);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(file + ":" + line + ": column " + column + ": '" + text
                        + "' is not " + what, e);
            }
        }
    }

    /** Reads {@code file}; an empty file, or a row with another number of fields than the header, is refused. */
    public static CsvFile read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<String> header = null;
        Map<String, Integer> columns = new HashMap<>();
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.endsWith("\r")) {
                line = line.substring(0, line.length() - 1);
            }
            if (line.isEmpty()) {
                continue;
            }
            List<String> cells = split(line, file, i + 1);
            if (header == null) {
                header = List.copyOf(cells);
                for (int c = 0; c < header.size(); c++) {
                    columns.putIfAbsent(header.get(c), c);
                }
            } else if (cells.size() != header.size()) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": " + cells.size()
                        + " fields, but the header has " + header.size());
            } else {
                rows.add(new Row(file, i + 1, List.copyOf(cells), columns));
            }
        }
        if (header == null) {
            throw new IllegalArgumentException(file + ": empty, no header line");
        }
        return new CsvFile(file, header, List.copyOf(rows));
    }

    /** Refuses the file unless its header has every one of {@code required}, naming the first missing. */
    public CsvFile require(List<String> required) {
        for (String column : required) {
            if (!header.contains(column)) {
                throw new IllegalArgumentException(file + ":1: no column '" + column + "' in the header " + header);
            }
        }
        return this;
    }

    /** The fields of one line; a quote opened and never closed is refused. */
    static List<String> split(String line, Path file, int lineNumber) {
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cell.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    cell.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                cells.add(cell.toString());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        if (quoted) {
            throw new IllegalArgumentException(file + ":" + lineNumber + ": a quoted field is not closed");
        }
        cells.add(cell.toString());
        return cells;
    }

    /** {@code value} as a CSV field: quoted only when it holds a comma, a quote or a line end. */
    public static String quote(String value) {
        if (value.indexOf(',') < 0 && value.indexOf('"') < 0 && value.indexOf('\n') < 0 && value.indexOf('\r') < 0) {
            return value;
        }
        return '"' + value.replace("\"", "\"\"") + '"';
    }
}
