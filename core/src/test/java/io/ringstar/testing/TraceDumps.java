package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads trace dumps (the flight recorder's JSON) the way a strict reader would: Gson in strict
 * mode refuses what a lenient parser lets through (unescaped control characters in strings,
 * trailing commas, text after the object), so a dump that passes here parses anywhere.
 */
public final class TraceDumps {
    private TraceDumps() {
    }

    /** {@code json} as one object, or a failure saying where it is not strict JSON. */
    public static JsonObject parse(String json) {
        try {
            JsonReader reader = new JsonReader(new StringReader(json));
            reader.setStrictness(Strictness.STRICT);
            JsonElement element = JsonParser.parseReader(reader);
            assertEquals(JsonToken.END_DOCUMENT, reader.peek(), "text after the dump's object");
            return element.getAsJsonObject();
        } catch (IOException | RuntimeException e) {
            throw new AssertionError("not strict JSON (" + e.getMessage() + "):\n" + json, e);
        }
    }

    /** The dump in {@code file}, read as UTF-8 and parsed by {@link #parse}. */
    public static JsonObject read(Path file) {
        try {
            return parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A long field, or -1 for JSON null (the dump's null stands for "none", never for 0). */
    public static long longOrNull(JsonObject object, String field) {
        JsonElement value = object.get(field);
        if (value == null) {
            throw new AssertionError("no field " + field + " in " + object);
        }
        return value.isJsonNull() ? -1 : value.getAsLong();
    }

    /** A string field, or null for JSON null. */
    public static String stringOrNull(JsonObject object, String field) {
        JsonElement value = object.get(field);
        if (value == null) {
            throw new AssertionError("no field " + field + " in " + object);
        }
        return value.isJsonNull() ? null : value.getAsString();
    }
}
