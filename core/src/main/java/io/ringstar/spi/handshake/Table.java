package io.ringstar.spi.handshake;

import java.util.List;

/**
 * The formed group, as rank 0 sends it to every rank that registered: a nonce drawn by rank 0 for
 * this group (Aeron derives its session ids from it), and every rank's identity, by rank.
 */
public record Table(int nonce, List<Identity> ranks) {
    public Table {
        ranks = List.copyOf(ranks);
    }
}
