// Token revocation marks and the auth-guard epoch (read by the limiter script in the account's slot), on the Redis Cluster.
import './on-cluster.js';
import '../api/auth-memory.test.js';
