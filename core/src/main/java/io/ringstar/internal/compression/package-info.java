/**
 * <b>Internal</b>: not API, may change in any release. The codecs of option compression
 * (half-precision conversion, top-k selection with error feedback), whose setting is
 * {@link io.ringstar.config.Compression}.
 */
package io.ringstar.internal.compression;
