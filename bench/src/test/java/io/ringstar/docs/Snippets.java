package io.ringstar.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the Java of a Markdown file and turns each piece into a compilation unit, by the convention that
 * {@link ReadmeSnippetsTest} documents: {@code ```java} blocks (whole units, or fragments wrapped in a class
 * that extends the test's givens), and inline constants and qualified type names.
 */
final class Snippets {

    /** What a snippet came from. */
    enum Kind { BLOCK, INLINE }

    /**
     * One piece of a README's Java, as compiled.
     *
     * @param file the README, relative to the repository
     * @param line the README line of the block's first code line, or of the inline reference
     * @param kind a block or an inline reference
     * @param skipped whether the block is marked not to be compiled
     * @param className the name of the class it is compiled as (the unit's file name)
     * @param source the compilation unit
     * @param lineMap for each line of {@code source}, the README line it came from (0: added by the test)
     */
    record Snippet(String file, int line, Kind kind, boolean skipped, String className, String source,
            int[] lineMap) {

        String name() {
            return file + ":" + line + (kind == Kind.INLINE ? " (inline)" : "");
        }

        /** The README line of a line of the compiled source; the snippet's own line for the test's lines. */
        int readmeLine(int sourceLine) {
            if (sourceLine >= 1 && sourceLine <= lineMap.length && lineMap[sourceLine - 1] > 0) {
                return lineMap[sourceLine - 1];
            }
            return line;
        }
    }

    private static final Pattern FENCE = Pattern.compile("^\\s*```\\s*([\\w+-]*)\\s*$");
    private static final Pattern INLINE_CODE = Pattern.compile("(?<!`)`([^`]+)`(?!`)");
    private static final Pattern CONSTANT = Pattern.compile("[A-Z]\\w*(?:\\.[A-Z]\\w*)*\\.[A-Z][A-Z0-9_]*");
    private static final Pattern QUALIFIED_TYPE = Pattern.compile("io\\.ringstar(?:\\.[a-z]\\w*)*\\.[A-Z]\\w*");
    private static final Pattern TYPE_DECLARATION = Pattern.compile("^\\s*(?:@\\w+\\s+)*(?:(?:public|protected"
            + "|private|static|final|abstract|sealed|non-sealed|strictfp)\\s+)*(?:class|interface|record|enum)\\s+"
            + "(\\w+)");
    private static final Pattern METHOD_DECLARATION = Pattern.compile("^\\s*(?:@\\w+(?:\\([^)]*\\))?\\s+)*"
            + "(?:(?:public|protected|private|static|final|abstract|synchronized|default)\\s+)*(?:<[^>]*>\\s+)?"
            + "(?!(?:new|return|else|throw|try|catch|for|if|while|switch|do|synchronized|yield)\\b)"
            + "[\\w.$]+(?:<[^=;]*>)?(?:\\[\\])*\\s+\\w+\\s*\\([^;=]*\\)\\s*(?:throws\\s+[\\w.,\\s]+)?\\{?\\s*$");
    /** "..." for elided code: not after a name, a bracket or a parenthesis, where it would be varargs. */
    private static final Pattern ELISION = Pattern.compile("(?<![\\w\\]>)])\\.\\.\\.");

    private Snippets() {
    }

    /** The blocks and inline references of one Markdown file, in order. */
    static List<Snippet> extract(String file, List<String> lines) {
        List<Snippet> snippets = new ArrayList<>();
        String prefix = file.replaceAll("\\W", "_");
        int i = 0;
        while (i < lines.size()) {
            Matcher fence = FENCE.matcher(lines.get(i));
            if (!fence.matches()) {
                inlineReferences(file, prefix, i + 1, lines.get(i), snippets);
                i++;
                continue;
            }
            boolean java = fence.group(1).equals("java");
            boolean skipped = i > 0 && lines.get(i - 1).strip().equals(ReadmeSnippetsTest.SKIP_MARKER);
            int first = i + 1;
            int end = first;
            while (end < lines.size() && !FENCE.matcher(lines.get(end)).matches()) {
                end++;
            }
            if (java) {
                snippets.add(block(file, prefix, lines.subList(first, end), first + 1, skipped));
            }
            i = end + 1;
        }
        return snippets;
    }

    private static void inlineReferences(String file, String prefix, int line, String text, List<Snippet> out) {
        Matcher code = INLINE_CODE.matcher(text);
        int n = 0;
        while (code.find()) {
            String ref = code.group(1).strip();
            String statement;
            if (CONSTANT.matcher(ref).matches()) {
                statement = "Object value = " + ref + ";";
            } else if (QUALIFIED_TYPE.matcher(ref).matches()) {
                statement = "Class<?> type = " + ref + ".class;";
            } else {
                continue;
            }
            String className = prefix + "_L" + line + "_" + (++n);
            Unit unit = new Unit();
            unit.header();
            unit.add("abstract class " + className + " extends " + ReadmeSnippetsTest.GIVENS + " {", 0);
            unit.add("    void reference() {", 0);
            unit.add("        " + statement, line);
            unit.add("    }", 0);
            unit.add("}", 0);
            out.add(new Snippet(file, line, Kind.INLINE, false, className, unit.text(), unit.lineMap()));
        }
    }

    private static Snippet block(String file, String prefix, List<String> code, int firstLine, boolean skipped) {
        List<String> lines = new ArrayList<>();
        for (String line : code) {
            lines.add(ELISION.matcher(line).replaceAll(""));
        }
        int start = 0;
        while (start < lines.size() && isPreamble(lines.get(start))) {
            start++;
        }
        String firstCode = start < lines.size() ? lines.get(start) : "";
        Matcher type = TYPE_DECLARATION.matcher(firstCode);
        if (firstCode.strip().startsWith("package ") || type.find()) {
            return compilationUnit(file, prefix, lines, firstLine, skipped);
        }
        String className = prefix + "_L" + firstLine;
        Unit unit = new Unit();
        unit.header();
        List<Integer> statements = new ArrayList<>();
        List<Integer> members = new ArrayList<>();
        int i = 0;
        while (i < lines.size()) {
            String line = lines.get(i);
            if (line.strip().startsWith("import ")) {
                unit.add(line, firstLine + i);
                i++;
            } else if (TYPE_DECLARATION.matcher(line).find() || METHOD_DECLARATION.matcher(line).matches()) {
                int end = endOfMember(lines, i);
                for (int k = i; k <= end; k++) {
                    members.add(k);
                }
                i = end + 1;
            } else {
                statements.add(i);
                i++;
            }
        }
        unit.add("abstract class " + className + " extends " + ReadmeSnippetsTest.GIVENS + " {", 0);
        for (int k : members) {
            unit.add(lines.get(k), firstLine + k);
        }
        unit.add("    void snippet() throws Throwable {", 0);
        for (int k : statements) {
            unit.add(lines.get(k), firstLine + k);
        }
        unit.add("    }", 0);
        unit.add("}", 0);
        return new Snippet(file, firstLine, Kind.BLOCK, skipped, className, unit.text(), unit.lineMap());
    }

    private static Snippet compilationUnit(String file, String prefix, List<String> lines, int firstLine,
            boolean skipped) {
        String className = null;
        for (String line : lines) {
            Matcher type = TYPE_DECLARATION.matcher(line);
            if (type.find() && (className == null || line.contains("public "))) {
                className = type.group(1);
                if (line.contains("public ")) {
                    break;
                }
            }
        }
        Unit unit = new Unit();
        for (int k = 0; k < lines.size(); k++) {
            unit.add(lines.get(k), firstLine + k);
        }
        return new Snippet(file, firstLine, Kind.BLOCK, skipped, className == null ? prefix + "_L" + firstLine
                : className, unit.text(), unit.lineMap());
    }

    private static boolean isPreamble(String line) {
        String s = line.strip();
        return s.isEmpty() || s.startsWith("//") || s.startsWith("/*") || s.startsWith("*") || s.startsWith("import ");
    }

    /** The last line of the declaration that starts at {@code start}: where its braces close again. */
    private static int endOfMember(List<String> lines, int start) {
        int depth = 0;
        boolean opened = false;
        for (int k = start; k < lines.size(); k++) {
            String code = withoutLiteralsAndComments(lines.get(k));
            for (int c = 0; c < code.length(); c++) {
                char ch = code.charAt(c);
                if (ch == '{') {
                    depth++;
                    opened = true;
                } else if (ch == '}') {
                    depth--;
                }
            }
            if (opened && depth <= 0 || !opened && code.strip().endsWith(";")) {
                return k;
            }
        }
        return lines.size() - 1;
    }

    private static String withoutLiteralsAndComments(String line) {
        return line.replaceAll("\"(?:\\\\.|[^\"\\\\])*\"", "\"\"").replaceAll("'(?:\\\\.|[^'\\\\])*'", "''")
                .replaceAll("//.*$", "");
    }

    /** A compilation unit being written, with the README line of each of its lines. */
    private static final class Unit {
        private final StringBuilder text = new StringBuilder();
        private final List<Integer> lines = new ArrayList<>();

        void header() {
            for (String i : ReadmeSnippetsTest.IMPORTS) {
                add("import " + i + ";", 0);
            }
        }

        void add(String line, int readmeLine) {
            text.append(line).append('\n');
            lines.add(readmeLine);
        }

        String text() {
            return text.toString();
        }

        int[] lineMap() {
            return lines.stream().mapToInt(Integer::intValue).toArray();
        }
    }
}
