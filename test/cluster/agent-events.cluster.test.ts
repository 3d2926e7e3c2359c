// A webhook accepted, queued and handed to the agent by the webhook-events pool, end to end, on the Redis Cluster.
import './on-cluster.js';
import '../webhooks/agent-events.test.js';
