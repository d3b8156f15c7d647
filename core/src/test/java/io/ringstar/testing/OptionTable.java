package io.ringstar.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the option names out of a README's Markdown table, so that a test can hold the table to
 * the declared options: the names are the back-quoted words of each row's first cell (environment
 * variables, in capitals, left out).
 */
public final class OptionTable {
    private static final Pattern NAME = Pattern.compile("`([a-z][A-Za-z0-9.]*)`");

    private OptionTable() {
    }

    /**
     * The option names of the first table after the first line that contains {@code marker}.
     *
     * @throws IllegalStateException if there is no such line or no table after it
     */
    public static Set<String> names(Path markdown, String marker) throws IOException {
        List<String> lines = Files.readAllLines(markdown, StandardCharsets.UTF_8);
        int at = 0;
        while (at < lines.size() && !lines.get(at).contains(marker)) {
            at++;
        }
        while (at < lines.size() && !lines.get(at).startsWith("|")) {
            at++;
        }
        if (at >= lines.size()) {
            throw new IllegalStateException("no table after '" + marker + "' in " + markdown);
        }
        Set<String> names = new TreeSet<>();
        // Skip the header and the |---| line.
        for (int row = at + 2; row < lines.size() && lines.get(row).startsWith("|"); row++) {
            String firstCell = lines.get(row).split("(?<!\\\\)\\|", -1)[1];
            Matcher name = NAME.matcher(firstCell);
            while (name.find()) {
                names.add(name.group(1));
            }
        }
        return names;
    }
}
