package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JmhTableTest {
    private static final String HEADER = "\"Benchmark\",\"Mode\",\"Threads\",\"Samples\",\"Score\","
            + "\"Score Error (99.9%)\",\"Unit\",\"Param: bytes\",\"Param: memory\"\r\n";

    @TempDir
    Path dir;

    private List<JmhRow> rows(String... lines) throws Exception {
        Path file = dir.resolve("jmh.csv");
        Files.writeString(file, HEADER + String.join("\r\n", lines) + "\r\n");
        return JmhRow.read(file);
    }

    @Test
    void namesFromTheClassOnBytesInGbPerSecondOnlyTheMedianAndP99OfPercentiles() throws Exception {
        List<JmhRow> rows = rows(
                "\"io.ringstar.bench.jmh.ReductionBenchmark.copy\",\"thrpt\",1,2,1726987.25,NaN,\"ops/s\",4096,direct",
                "\"io.ringstar.bench.jmh.ReductionBenchmark.copy:bytes\",\"thrpt\",1,2,7073739780.79,123456789,"
                        + "\"ops/s\",4096,direct",
                "\"io.ringstar.transport.netty.PingPongBenchmark.pingPong\",\"sample\",1,9,52.5,1.25,\"us/op\",,",
                "\"io.ringstar.transport.netty.PingPongBenchmark.pingPong:p0.00\",\"sample\",1,1,40,NaN,\"us/op\",,",
                "\"io.ringstar.transport.netty.PingPongBenchmark.pingPong:p0.50\",\"sample\",1,1,50,NaN,\"us/op\",,",
                "\"io.ringstar.transport.netty.PingPongBenchmark.pingPong:p0.99\",\"sample\",1,1,99,NaN,\"us/op\",,");
        String expected = """
                | benchmark | parameters | score | ± (99.9%) | unit |
                |---|---|---:|---:|---|
                | ReductionBenchmark.copy | bytes=4096, memory=direct | 1.727e+06 |  | ops/s |
                | ReductionBenchmark.copy:bytes | bytes=4096, memory=direct | 7.074 | 0.12 | GB/s |
                | PingPongBenchmark.pingPong |  | 52.5 | 1.2 | us/op |
                | PingPongBenchmark.pingPong:p0.50 |  | 50 |  | us/op |
                | PingPongBenchmark.pingPong:p0.99 |  | 99 |  | us/op |
                """;
        assertEquals(expected, JmhTable.render(rows));
    }

    @Test
    void bytesPerSecondIsTheLargestSizeOnDirectBuffers() throws Exception {
        List<JmhRow> rows = rows(
                "\"x.ReductionBenchmark.copy:bytes\",\"thrpt\",1,2,7e9,NaN,\"ops/s\",4096,direct",
                "\"x.ReductionBenchmark.copy:bytes\",\"thrpt\",1,2,5e9,NaN,\"ops/s\",1048576,direct",
                "\"x.ReductionBenchmark.copy:bytes\",\"thrpt\",1,2,9e9,NaN,\"ops/s\",1048576,heap",
                "\"x.ReductionBenchmark.copy\",\"thrpt\",1,2,1,NaN,\"ops/s\",67108864,direct");
        assertArrayEquals(new double[] {5, 1048576},
                JmhTable.bytesPerSecond(rows, Pattern.compile("ReductionBenchmark\\.copy:bytes")));
        assertNull(JmhTable.bytesPerSecond(rows, Pattern.compile("addFloat:bytes")));
    }
}
