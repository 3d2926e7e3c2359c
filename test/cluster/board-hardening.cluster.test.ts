// Bull Board's login guard (a Lua script per address) and read-only board, on the Redis Cluster.
import './on-cluster.js';
import '../api/board-hardening.test.js';
