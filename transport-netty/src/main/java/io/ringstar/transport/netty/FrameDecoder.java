package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Reads {@link Frame}s from one peer's connection and hands them to its {@link PeerLink}. Payload
 * bytes are passed on as retained slices of the buffers the socket was read into, so a message is
 * never copied on the way in until {@code recv} copies it into the caller's buffer.
 *
 * <p>Anything that breaks the framing rules (bad magic, unknown type, a frame over
 * {@link Frame#MAX_PAYLOAD}, a continuation with no message open, more bytes than the message
 * announced) fails the link with a description of what was wrong and closes the connection: a
 * registered peer that sends garbage is a failed peer.
 */
final class FrameDecoder extends ChannelInboundHandlerAdapter {
    private final PeerLink link;
    private final ByteBuf header = Unpooled.buffer(Frame.HEADER_BYTES, Frame.HEADER_BYTES);
    /** Payload bytes left in the current frame, or -1 while a frame header is being read. */
    private int framePayloadLeft = -1;
    /** Bytes of the open message not yet seen; 0 when no message is open. */
    private long messageLeft;
    private boolean broken;

    FrameDecoder(PeerLink link) {
        this.link = link;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            while (in.isReadable() && !broken) {
                if (framePayloadLeft < 0) {
                    in.readBytes(header, Math.min(header.writableBytes(), in.readableBytes()));
                    if (!header.isWritable()) {
                        startFrame(ctx);
                        header.clear();
                    }
                } else {
                    int length = (int) Math.min(framePayloadLeft, in.readableBytes());
                    link.onPayload(in.readRetainedSlice(length));
                    framePayloadLeft -= length;
                    messageLeft -= length;
                    if (framePayloadLeft == 0) {
                        framePayloadLeft = -1;
                    }
                }
            }
        } finally {
            in.release();
        }
    }

    private void startFrame(ChannelHandlerContext ctx) {
        int payloadLength = header.getIntLE(0);
        short magic = header.getShortLE(4);
        byte type = header.getByte(6);
        byte flags = header.getByte(7);
        long value = header.getLongLE(8);
        if (magic != Frame.MAGIC) {
            malformed(ctx, "a frame without the frame magic (stray or corrupt bytes)");
            return;
        }
        if (payloadLength < 0 || payloadLength > Frame.MAX_PAYLOAD) {
            malformed(ctx, "a frame of " + Integer.toUnsignedString(payloadLength)
                    + " bytes, more than the " + Frame.MAX_PAYLOAD + " accepted");
            return;
        }
        switch (type) {
            case Frame.DATA -> startDataFrame(ctx, payloadLength, flags, value);
            case Frame.BARRIER -> {
                if (payloadLength != 0 || messageLeft != 0) {
                    malformed(ctx, "a barrier frame with a payload or inside a message");
                    return;
                }
                link.onBarrier(value);
            }
            case Frame.CLOSE -> {
                if (payloadLength != 0) {
                    malformed(ctx, "a close frame with a payload");
                    return;
                }
                link.onPeerClosing();
            }
            default -> malformed(ctx, "a frame of unknown type " + type);
        }
    }

    private void startDataFrame(ChannelHandlerContext ctx, int payloadLength, byte flags, long value) {
        if ((flags & Frame.FIRST) != 0) {
            if (messageLeft != 0) {
                malformed(ctx, "a new message while " + messageLeft + " bytes of the last were still due");
                return;
            }
            if (value < 0 || value > Integer.MAX_VALUE) {
                malformed(ctx, "a message length of " + value + " bytes");
                return;
            }
            messageLeft = value;
            link.onMessageStart((int) value);
        } else if (messageLeft == 0) {
            malformed(ctx, "a continuation frame with no message open");
            return;
        }
        if (payloadLength > messageLeft) {
            malformed(ctx, "a frame of " + payloadLength + " bytes where the message had " + messageLeft + " left");
            return;
        }
        framePayloadLeft = payloadLength == 0 ? -1 : payloadLength;
    }

    private void malformed(ChannelHandlerContext ctx, String what) {
        broken = true;
        link.onProtocolViolation("sent " + what);
        ctx.close();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        link.onWritabilityChanged();
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        link.onDisconnected();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        link.onConnectionError(cause);
        ctx.close();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        header.release();
    }
}
