// The live-hooks registry, and the admin CLI's hook verbs (withRedis), on the Redis Cluster.
import './on-cluster.js';
import '../webhooks/live-hooks.test.js';
