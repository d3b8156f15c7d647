/**
 * The handshake that every network transport runs before a connection carries frames, written
 * once: the record codec ({@link io.ringstar.spi.handshake.HandshakeRecords}) and the two sides'
 * state machines ({@link io.ringstar.spi.handshake.Acceptor}, {@link io.ringstar.spi.handshake.Initiator}),
 * which do no I/O: they take the records received and give the records to send and the outcome.
 * The Netty transport drives them from its channel handlers, the Aeron transport over its blocking
 * rendezvous socket.
 *
 * <pre>
 *  acceptor                                      initiator
 *     [TLS magic, version]                  --->          (Netty with TLS only, in plain text;
 *                                                          everything after it goes through TLS)
 *     CHALLENGE magic, version, nonce A     --->
 *                                           &lt;--- HELLO magic, version, secret?, nonce B, proof(A, B)
 *     PROOF proof(B, A)                     --->          (or REFUSE reason)
 *                                           &lt;--- IDENTIFY identity, tag(A, B, identity)
 *     WELCOME identity, tag(B, A, identity) --->          (or REFUSE reason)
 *     TABLE nonce, identities, tag(A, B, ..) --->         (registrations with rank 0 only;
 *                                                          ABANDON reason if the group never forms)
 * </pre>
 *
 * Every record is little-endian: a length, a type, a body of length − 1 bytes.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |              length (int32): type byte + body bytes           |  0
 * +---------------+-----------------------------------------------+
 * |     type      |  body ...                                        4
 * +---------------+
 *
 *  type  record     body
 *   1    CHALLENGE  magic 0x48545352 "RSTH" (int32), version 3 (int16), nonce A (32 bytes)
 *   2    HELLO      magic (int32), version (int16), has-secret (1 byte, 0 or 1), nonce B (32),
 *                   proof (32) = HMAC(secret, "ringstar hello", A, B)
 *   3    PROOF      proof (32) = HMAC(secret, "ringstar proof", B, A)
 *   4    IDENTIFY   identity, tag (32) = HMAC(secret, "ringstar identify", A, B, identity)
 *   5    WELCOME    identity, tag (32) = HMAC(secret, "ringstar welcome", B, A, identity)
 *   6    TABLE      group nonce (int32), count (int32), count identities,
 *                   tag (32) = HMAC(secret, "ringstar table", A, B, nonce..identities)
 *   7    REFUSE     reason (string)
 *   8    ABANDON    reason (string)
 *   9    TLS        magic (int32), version (int16)
 *
 *  identity: purpose (1 byte: 1 register with rank 0, 2 peer connection), world size (int32),
 *            rank (int32), target rank (int32), job id (string), host (string), port (int32),
 *            details (uint16 length + bytes, the transport's own: Aeron's session base and driver)
 *  string:   uint16 length + UTF-8 bytes, at most 1024
 * </pre>
 *
 * <p>Both sides prove that they know the secret before either says anything about the job, so a
 * peer without it, on either end of a connection, learns only that a ringstar rank of some protocol
 * version is there. Proofs and tags cover a label per record and both nonces, so they cannot be
 * replayed on another connection, moved to another identity or swapped between the two directions.
 * Without a secret the proofs are zeros and the same records flow. A record read from a peer that
 * has proved nothing is at most 4096 bytes; a table (from a rank 0 that has) at most 1 MiB. The
 * magic differs from the data frames' ({@link io.ringstar.spi.Frame#MAGIC}), so neither is taken
 * for the other.
 */
package io.ringstar.spi.handshake;
