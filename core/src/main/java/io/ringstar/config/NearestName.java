package io.ringstar.config;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/**
 * The known name nearest to a misspelt one, for the "did you mean" of an unknown option: the fewest
 * single-character insertions, deletions, substitutions or swaps of neighbours, ignoring case
 * ({@code chunkByte} is one from {@code chunkBytes}). A name further than a third of its length
 * (and at least two edits) from every known one has no nearest: a guess then misleads more than
 * the list of known names helps.
 */
final class NearestName {
    private NearestName() {
    }

    /** The name of {@code known} nearest to {@code given}, the first of them on a tie; empty when none is near. */
    static Optional<String> of(String given, Collection<String> known) {
        String target = given.toLowerCase(Locale.ROOT);
        int allowed = Math.max(2, target.length() / 3);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String name : known) {
            int distance = distance(target, name.toLowerCase(Locale.ROOT));
            if (distance <= allowed && distance < bestDistance) {
                best = name;
                bestDistance = distance;
            }
        }
        return Optional.ofNullable(best);
    }

    /** The optimal string alignment distance: Levenshtein's, with a swap of neighbours as one edit. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
