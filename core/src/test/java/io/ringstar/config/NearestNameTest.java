package io.ringstar.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.InvalidConfigException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NearestNameTest {
    @Test
    void theNearestNameIsTheFewestEditsAwayAndNoneWhenAllAreFar() {
        List<String> known = List.of("chunkBytes", "checksum", "compression", "bucketBytes");
        assertEquals(Optional.of("chunkBytes"), NearestName.of("chunkByte", known));
        assertEquals(Optional.of("chunkBytes"), NearestName.of("chnukBytes", known), "a swap is one edit");
        assertEquals(Optional.of("checksum"), NearestName.of("CHECKSUM", known), "case is ignored");
        assertEquals(Optional.empty(), NearestName.of("servers", known));
        assertEquals(1, NearestName.distance("ab", "ba"));
        assertEquals(3, NearestName.distance("kitten", "sitting"));
    }

    @Test
    void anUnknownOptionNamesTheNearestKnownOneWhereverItComesFrom() {
        OptionCatalog catalog = new OptionCatalog(Map.of("inproc", List.of()));
        List<String> known = List.of("bucketBytes", "chunkBytes");
        InvalidConfigException near = catalog.unknown("chunkByte", "5", "inproc", known, "--option chunkByte");
        assertTrue(near.getMessage().endsWith("; did you mean chunkBytes?"), near.getMessage());
        InvalidConfigException far = catalog.unknown("servers", "2", "inproc", known, "--option servers");
        assertFalse(far.getMessage().contains("did you mean"), far.getMessage());
    }
}
