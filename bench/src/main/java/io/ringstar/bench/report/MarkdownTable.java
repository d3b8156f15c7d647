package io.ringstar.bench.report;

import java.util.ArrayList;
import java.util.List;

/**
 * A Markdown table built row by row: {@code | a | b |} lines under a header and an alignment line
 * ({@code |---:|---|}). Cells are written as given; a {@code |} inside one is escaped.
 */
public final class MarkdownTable {
    private final List<String> header;
    private final List<Boolean> rightAligned;
    private final List<List<String>> rows = new ArrayList<>();

    /** A table with the columns {@code header}, each right-aligned (numbers) when its flag is true. */
    public MarkdownTable(List<String> header, List<Boolean> rightAligned) {
        if (header.size() != rightAligned.size()) {
            throw new IllegalArgumentException(header.size() + " columns but " + rightAligned.size() + " alignments");
        }
        this.header = List.copyOf(header);
        this.rightAligned = List.copyOf(rightAligned);
    }

    /** A table whose columns are all right-aligned: a size, then numbers. */
    public static MarkdownTable numeric(List<String> header) {
        return new MarkdownTable(header, header.stream().map(column -> true).toList());
    }

    /** Adds a row of as many cells as the header has columns. */
    public MarkdownTable add(List<String> cells) {
        if (cells.size() != header.size()) {
            throw new IllegalArgumentException(cells.size() + " cells for " + header.size() + " columns: " + cells);
        }
        rows.add(List.copyOf(cells));
        return this;
    }

    /** The table, one line per row, each ending with a line feed. */
    public String render() {
        StringBuilder text = new StringBuilder();
        line(text, header);
        text.append('|');
        for (boolean right : rightAligned) {
            text.append(right ? "---:|" : "---|");
        }
        text.append('\n');
        for (List<String> row : rows) {
            line(text, row);
        }
        return text.toString();
    }

    private static void line(StringBuilder text, List<String> cells) {
        text.append('|');
        for (String cell : cells) {
            text.append(' ').append(cell.replace("|", "\\|")).append(" |");
        }
        text.append('\n');
    }
}
