/**
 * Compression of what the collectives send: the setting ({@link io.ringstar.compression.Compression})
 * and its codecs (half-precision conversion, top-k selection with error feedback).
 */
package io.ringstar.compression;
