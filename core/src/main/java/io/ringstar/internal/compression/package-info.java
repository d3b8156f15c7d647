/**
 * Compression of what the collectives send: the setting ({@link Compression})
 * and its codecs (half-precision conversion, top-k selection with error feedback).
 */
package io.ringstar.internal.compression;
