// The API rate limiter (one Lua script over the token's and the account's buckets), on the Redis Cluster.
import './on-cluster.js';
import '../api/rate-limit.test.js';
