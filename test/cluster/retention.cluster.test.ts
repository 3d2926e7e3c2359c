// BullMQ job retention and QueueEvents, on the Redis Cluster.
import './on-cluster.js';
import '../jobs/retention.test.js';
