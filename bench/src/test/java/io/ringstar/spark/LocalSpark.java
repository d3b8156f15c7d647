package io.ringstar.spark;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/** A Spark context in this JVM for the tests, pinned to loopback and without its web UI. */
final class LocalSpark {
    private LocalSpark() {
    }

    /** A context of master {@code master}, e.g. {@code local[4]}; the caller stops it. */
    static JavaSparkContext start(String master, String application) {
        SparkConf conf = new SparkConf().setMaster(master).setAppName(application)
                .set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1")
                .set("spark.ui.enabled", "false")
                .set("spark.ui.showConsoleProgress", "false");
        JavaSparkContext spark = new JavaSparkContext(conf);
        spark.setLogLevel("ERROR");
        return spark;
    }
}
