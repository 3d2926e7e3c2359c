// The hook limiter (one Lua script over a hook's and its account's rolling-hour sets), on the Redis Cluster.
import './on-cluster.js';
import '../webhooks/limits.test.js';
