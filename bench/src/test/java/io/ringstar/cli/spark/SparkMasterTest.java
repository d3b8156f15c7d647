package io.ringstar.cli.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The masters {@code train --spark} takes, their task slots, and the ones it refuses. */
class SparkMasterTest {

    @Test
    void localMastersRunInTheDriverWithTheirThreadsAsSlots() {
        SparkMaster four = SparkMaster.parse("local[4]", null);
        assertEquals(4, four.slots());
        assertTrue(four.inDriverJvm() && four.onThisMachine());
        assertFalse(four.startsExecutorJvms());
        assertEquals(1, SparkMaster.parse("local", null).slots());
        assertEquals(Runtime.getRuntime().availableProcessors(), SparkMaster.parse("local[*]", null).slots());
        assertEquals(3, SparkMaster.parse("local[3,2]", null).slots(), "local[N,F]: F is the tasks' retries");
    }

    @Test
    void aLocalClusterStartsExecutorJvmsAndOffersExecutorsTimesCores() {
        SparkMaster cluster = SparkMaster.parse("local-cluster[ 3, 2, 1024 ]", null);
        assertEquals("local-cluster[3,2,1024]", cluster.url());
        assertEquals(6, cluster.slots());
        assertEquals(1024, cluster.executorMemoryMb());
        assertTrue(cluster.startsExecutorJvms() && cluster.onThisMachine());
        assertFalse(cluster.inDriverJvm());
    }

    @Test
    void aStandaloneClusterAloneKnowsItsSlots() {
        SparkMaster standalone = SparkMaster.parse("spark://node1:7077,node2:7077", null);
        assertEquals(0, standalone.slots());
        assertFalse(standalone.onThisMachine());
    }

    @ParameterizedTest
    @ValueSource(strings = {"local[0]", "local[", "local[x]", "local-cluster[2,1]", "local-cluster[0,1,1024]",
        "spark://host", "spark://:7077", "mesos://h:5050", " "})
    void malformedMastersAreRefusedWithTheFormsTaken(String master) {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> SparkMaster.parse(master, null));
        assertTrue(refused.getMessage().startsWith("--spark "), refused.getMessage());
    }

    @Test
    void refusalsSayWhatToGive() {
        assertEquals("--spark 'locale[4]' is not a Spark master this command starts; give local[N],"
                + " local-cluster[N,CORES,MEMORY_MB] or spark://HOST:PORT",
                assertThrows(IllegalArgumentException.class, () -> SparkMaster.parse("locale[4]", null)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> SparkMaster.parse("yarn", null)).getMessage()
                .endsWith("for YARN or Kubernetes submit ringstar.jar with spark-submit and give --spark without a"
                        + " master"));
        assertEquals("--spark local-cluster[2,1,256]: an executor needs at least 512 MB (Spark refuses a heap below"
                + " 450 MB), was 256; for example local-cluster[2,1,1024]", assertThrows(IllegalArgumentException.class,
                        () -> SparkMaster.parse("local-cluster[2,1,256]", null)).getMessage());
    }

    @Test
    void withoutAValueTheMasterIsSparkSubmits() {
        assertEquals("yarn", SparkMaster.parse(SparkMaster.SUBMITTED, "yarn").url());
        assertEquals(2, SparkMaster.parse(SparkMaster.SUBMITTED, "local[2]").slots());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> SparkMaster.parse(SparkMaster.SUBMITTED, null))
                .getMessage().contains("this is not running under spark-submit"));
    }
}
