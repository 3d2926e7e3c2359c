// BullMQ queues and workers (job keys, deduplication, retries), on the Redis Cluster.
import './on-cluster.js';
import '../workers/create-worker.test.js';
