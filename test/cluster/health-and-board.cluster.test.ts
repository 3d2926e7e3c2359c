// GET /healthz and Bull Board over the cluster's queues, on the Redis Cluster.
import './on-cluster.js';
import '../api/health-and-board.test.js';
