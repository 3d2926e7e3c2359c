// The turn bus (pub/sub), including a break in its subscription, on the Redis Cluster.
import './on-cluster.js';
import '../agent/turn-bus.test.js';
