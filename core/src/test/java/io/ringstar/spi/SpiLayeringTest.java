package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The SPI is what transport modules compile against, so it may not depend on the engine: no class
 * of {@code io.ringstar.spi} (or its sub-packages) names a type of {@code io.ringstar.internal}.
 * Read from the compiled classes, whose constant pools name every type a class uses.
 */
@Timeout(30)
class SpiLayeringTest {
    private static final String ENGINE = "io/ringstar/internal/";

    @Test
    void noSpiClassNamesAnEngineType() throws IOException, URISyntaxException {
        Path classes = Path.of(PeerTransport.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path spi = classes.resolve("io/ringstar/spi");
        List<Path> files;
        try (Stream<Path> walk = Files.walk(spi)) {
            files = walk.filter(file -> file.toString().endsWith(".class")).collect(Collectors.toList());
        }
        assertTrue(files.contains(spi.resolve("PeerTransport.class")), "the SPI's classes were not found in " + spi);
        List<String> offenders = files.stream().filter(SpiLayeringTest::namesEngine)
                .map(file -> spi.relativize(file).toString()).collect(Collectors.toList());
        assertEquals(List.of(), offenders, "SPI classes that use io.ringstar.internal");
    }

    private static boolean namesEngine(Path classFile) {
        try {
            // Type names sit in the constant pool as modified UTF-8, which is ASCII for these names.
            return new String(Files.readAllBytes(classFile), StandardCharsets.ISO_8859_1).contains(ENGINE);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + classFile, e);
        }
    }
}
