/*
 * A Kafka-protocol broker for development and CI: librdkafka's mock cluster
 * (rd_kafka_mock_cluster_new) kept alive in its own process.
 *
 *   kafka-mock-broker [--brokers N] [--topic NAME:PARTITIONS]... [--missing-topic NAME]...
 *                     [--exit-on-stdin-eof]
 *
 * Each --topic is created up front (the mock does not implement the CreateTopics admin API).
 * The mock auto-creates any other topic a client names (4 partitions), whatever the client's
 * allow-auto-creation flag says; --missing-topic makes metadata requests for NAME answer
 * UNKNOWN_TOPIC_OR_PARTITION instead, as a broker with auto-creation off answers for a topic
 * nobody created.
 * Once listening it prints one line, `KAFKA_BROKERS=<host:port,...>`, and flushes stdout; it
 * runs until SIGINT/SIGTERM, or, with --exit-on-stdin-eof, until its stdin closes (so a test's
 * broker never outlives the test process, even one killed with -9).
 *
 * The mock keeps everything in memory, does not compact, and listens on ephemeral loopback
 * ports chosen by the OS (librdkafka 2.0 has no way to pick them).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static volatile sig_atomic_t stop = 0;

static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static void usage(void) {
  fprintf(stderr, "usage: kafka-mock-broker [--brokers N] [--topic NAME:PARTITIONS]... [--missing-topic NAME]... [--exit-on-stdin-eof]\n");
  exit(2);
}

int main(int argc, char **argv) {
  int brokers = 1;
  int exit_on_eof = 0;
  const char *topics[256];
  int topic_count = 0;
  const char *missing[256];
  int missing_count = 0;

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--brokers") == 0 && i + 1 < argc) {
      brokers = atoi(argv[++i]);
      if (brokers < 1 || brokers > 16) usage();
    } else if (strcmp(argv[i], "--topic") == 0 && i + 1 < argc) {
      if (topic_count == 256) usage();
      topics[topic_count++] = argv[++i];
    } else if (strcmp(argv[i], "--missing-topic") == 0 && i + 1 < argc) {
      if (missing_count == 256) usage();
      missing[missing_count++] = argv[++i];
    } else if (strcmp(argv[i], "--exit-on-stdin-eof") == 0) {
      exit_on_eof = 1;
    } else {
      usage();
    }
  }

  char errstr[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  /* The handle only hosts the cluster's threads; silence its own connection logs. */
  rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof errstr);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (rk == NULL) {
    fprintf(stderr, "kafka-mock-broker: rd_kafka_new: %s\n", errstr);
    return 1;
  }
  rd_kafka_mock_cluster_t *cluster = rd_kafka_mock_cluster_new(rk, brokers);
  if (cluster == NULL) {
    fprintf(stderr, "kafka-mock-broker: rd_kafka_mock_cluster_new failed\n");
    rd_kafka_destroy(rk);
    return 1;
  }

  for (int t = 0; t < topic_count; t++) {
    char name[512];
    const char *colon = strrchr(topics[t], ':');
    if (colon == NULL || colon == topics[t] || (size_t)(colon - topics[t]) >= sizeof name) usage();
    memcpy(name, topics[t], (size_t)(colon - topics[t]));
    name[colon - topics[t]] = '\0';
    int partitions = atoi(colon + 1);
    if (partitions < 1 || partitions > 4096) usage();
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(cluster, name, partitions, brokers < 3 ? brokers : 3);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      fprintf(stderr, "kafka-mock-broker: creating %s: %s\n", name, rd_kafka_err2str(err));
      return 1;
    }
  }

  for (int t = 0; t < missing_count; t++) {
    rd_kafka_mock_topic_set_error(cluster, missing[t], RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  }

  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);

  printf("KAFKA_BROKERS=%s\n", rd_kafka_mock_cluster_bootstraps(cluster));
  fflush(stdout);

  while (!stop) {
    struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
    int n = poll(exit_on_eof ? &pfd : NULL, exit_on_eof ? 1 : 0, 200);
    if (n > 0 && exit_on_eof) {
      char buf[256];
      ssize_t got = read(STDIN_FILENO, buf, sizeof buf);
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) break;
    }
  }

  rd_kafka_mock_cluster_destroy(cluster);
  rd_kafka_destroy(rk);
  return 0;
}
