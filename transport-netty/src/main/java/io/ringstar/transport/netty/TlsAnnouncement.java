package io.ringstar.transport.netty;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslContext;
import io.ringstar.spi.handshake.HandshakeRecords;

/**
 * First on an accepted connection of a rank with TLS: writes the plain {@link HandshakeRecords#TLS}
 * record straight to the socket, then puts the TLS handler in its place, so that everything after
 * (the handshake's records, then the frames) is encrypted, and an initiator without TLS learns why
 * it cannot join instead of waiting for a challenge that never comes in plain text.
 */
final class TlsAnnouncement extends ChannelInboundHandlerAdapter {
    private final SslContext context;

    TlsAnnouncement(SslContext context) {
        this.context = context;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        // Written from this, the first handler, so it reaches the socket before any TLS byte.
        ctx.writeAndFlush(Unpooled.wrappedBuffer(HandshakeRecords.tls()));
        ctx.pipeline().addAfter(ctx.name(), "tls", context.newHandler(ctx.alloc()));
        ctx.fireChannelActive();
        ctx.pipeline().remove(this);
    }
}
